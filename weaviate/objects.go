// This file holds the object calls shared by collections and indexes:
// batch writes whose per-object errors are retried and then surfaced,
// reads of objects by UUID, batch deletes, kNN search and counts.

package weaviate

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// object is one object of a batch write.
type object struct {
	Class      string         `json:"class"`
	ID         string         `json:"id"`
	Vector     []float32      `json:"vector"`
	Properties map[string]any `json:"properties,omitempty"`
}

// batchChunk is the number of objects (or UUIDs) sent in one request.
const batchChunk = 500

// putObjects writes objs (an upsert of each) at the write consistency.
// Objects that fail are sent again, with backoff, for up to MaxAttempts
// rounds within the call's time bound; the UUIDs that still failed are
// returned with the error, and those in done were written.
func (db *DB) putObjects(ctx context.Context, objs []object) (done []string, err error) {
	ctx, cancel := context.WithTimeout(ctx, db.opt.Timeout)
	defer cancel()
	pending := objs
	var lastMsg string
	for round := 0; len(pending) > 0; round++ {
		if round >= db.opt.MaxAttempts {
			return done, &APIError{Status: http.StatusOK, Message: fmt.Sprintf("%d objects not written: %s", len(pending), lastMsg)}
		}
		if round > 0 {
			db.cl.retries.Add(1)
			if err := sleep(ctx, backoff(round)); err != nil {
				return done, fmt.Errorf("%w: %d objects not written: %s (%w)", ErrUnavailable, len(pending), lastMsg, err)
			}
		}
		var failed []object
		for start := 0; start < len(pending); start += batchChunk {
			chunk := pending[start:min(start+batchChunk, len(pending))]
			bad, err := db.sendBatch(ctx, chunk)
			if err != nil {
				var ae *APIError
				if (errors.As(err, &ae) || errors.Is(err, vector.ErrNotFound)) && !errors.Is(err, ErrUnavailable) {
					return done, err // a bad request: retrying will not help
				}
				if ctx.Err() != nil {
					return done, err
				}
				lastMsg = err.Error()
				failed = append(failed, chunk...)
				continue
			}
			for _, o := range chunk {
				if msg, ok := bad[o.ID]; ok {
					failed = append(failed, o)
					lastMsg = msg
				} else {
					done = append(done, o.ID)
				}
			}
		}
		pending = failed
	}
	return done, nil
}

// sendBatch sends one batch of objects, over gRPC unless the DB speaks
// REST only, and returns the per-object errors by UUID.
func (db *DB) sendBatch(ctx context.Context, chunk []object) (map[string]string, error) {
	if db.rpc != nil {
		// Weaviate v1.39's gRPC BatchObjects looks the class up for each
		// object until a lookup succeeds, from the Raft leader, by a call
		// that takes no context (batch.BatchObjectsFromProto,
		// ClassGetter.getClasses): while the cluster has no leader each
		// lookup waits and fails, the batch outlives its caller, and
		// once a leader is back it writes the rest, after the write was
		// reported failed and undone (TestClusterNoQuorum). REST's batch
		// looks the class up once and fails whole. So a gRPC batch goes
		// only to a cluster whose leader just answered that lookup.
		if _, err := db.getClass(ctx, chunk[0].Class); err != nil {
			return nil, err
		}
		return db.rpc.batch(ctx, chunk, db.level(chunk[0].Class, db.opt.WriteConsistency))
	}
	var answer []struct {
		ID     string `json:"id"`
		Result struct {
			Errors *struct {
				Error []struct {
					Message string `json:"message"`
				} `json:"error"`
			} `json:"errors"`
		} `json:"result"`
	}
	path := "/v1/batch/objects" + levelParam("?", db.level(chunk[0].Class, db.opt.WriteConsistency))
	if _, err := db.cl.call(ctx, http.MethodPost, path, map[string]any{"objects": chunk}, &answer); err != nil {
		return nil, err
	}
	bad := map[string]string{}
	for _, a := range answer {
		if a.Result.Errors != nil && len(a.Result.Errors.Error) > 0 {
			var msgs []string
			for _, e := range a.Result.Errors.Error {
				msgs = append(msgs, e.Message)
			}
			bad[a.ID] = strings.Join(msgs, "; ")
		}
	}
	if len(answer) != len(chunk) {
		// Every object must be answered for; one that is not was not
		// written.
		seen := map[string]bool{}
		for _, a := range answer {
			seen[a.ID] = true
		}
		for _, o := range chunk {
			if !seen[o.ID] {
				bad[o.ID] = "no answer for this object"
			}
		}
	}
	return bad, nil
}

// fetched is an object as a read returns it.
type fetched struct {
	UUID      string
	Vector    []float32
	Created   int64
	Distance  float32
	Props     map[string]any
	HasVector bool
}

// getFields is the GraphQL selection of a read: props are the property
// names, vec whether to fetch vectors, dist whether there is a distance.
func getFields(props []string, vec, dist bool) string {
	var b strings.Builder
	for _, p := range props {
		b.WriteString(p)
		b.WriteByte(' ')
	}
	b.WriteString("_additional { id creationTimeUnix")
	if vec {
		b.WriteString(" vector")
	}
	if dist {
		b.WriteString(" distance")
	}
	b.WriteString(" }")
	return b.String()
}

// read runs a read of cls, get, at the read consistency, and checks that
// it reached every shard. With a node down, Weaviate resolves QUORUM (and
// ALL) to the live replicas of each shard, and refuses a read over shards
// that resolved differently; the live replicas hold every write
// acknowledged meanwhile (a write is acknowledged by all of them), so
// such a read goes on at ONE.
func (db *DB) read(ctx context.Context, cls string, get func(level Consistency) ([]fetched, error)) ([]fetched, error) {
	level := db.level(cls, db.opt.ReadConsistency)
	rows, err := get(level)
	if err != nil && level != One && level != "" && mixedLevels(err.Error()) {
		db.cl.retries.Add(1)
		rows, err = get(One)
	}
	if err != nil {
		return nil, err
	}
	if err := db.reach(ctx, cls); err != nil {
		return nil, err
	}
	return rows, nil
}

// search runs q: over gRPC unless the DB speaks REST only, else as a
// GraphQL Get.
func (db *DB) search(ctx context.Context, q *query) ([]fetched, error) {
	return db.read(ctx, q.class, func(level Consistency) ([]fetched, error) {
		if db.rpc != nil {
			return db.rpc.search(ctx, q, level)
		}
		return db.runGet(ctx, q.class, q.graphQLArgs(level), getFields(q.props, q.withVec, q.vec != nil), q.props)
	})
}

// graphQLArgs returns q's arguments of a GraphQL Get at level.
func (q *query) graphQLArgs(level Consistency) string {
	var b strings.Builder
	if q.vec != nil {
		b.WriteString("nearVector: {vector: [")
		for i, x := range q.vec {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.FormatFloat(float64(x), 'g', -1, 32))
		}
		b.WriteString("]}, ")
	}
	fmt.Fprintf(&b, "limit: %d", q.limit)
	if level != "" {
		fmt.Fprintf(&b, ", consistencyLevel: %s", level)
	}
	if q.where != nil {
		b.WriteString(", where: ")
		q.where.graphQL(&b)
	}
	return b.String()
}

// runGet runs a GraphQL Get on cls with the given arguments and
// selection, and decodes its objects.
func (db *DB) runGet(ctx context.Context, cls, args, fields string, props []string) ([]fetched, error) {
	q := "{ Get { " + cls + "(" + args + ") { " + fields + " } } }"
	var data struct {
		Get map[string][]map[string]any `json:"Get"`
	}
	if err := db.cl.graphQL(ctx, cls, q, &data); err != nil {
		return nil, err
	}
	return getRows(data.Get[cls], props)
}

// errGraphQL is wrapped by the errors of decoding a malformed GraphQL
// answer.
var errGraphQL = fmt.Errorf("%w: malformed GraphQL answer", vector.ErrCorrupt)

// getRows decodes the objects of a GraphQL Get answer: each one's
// _additional id, creation time, distance and vector, and the properties
// props. A vector that holds anything but numbers a float32 holds, or a
// creation time that is not an integer, is an error wrapping errGraphQL
// rather than a zero.
func getRows(rows []map[string]any, props []string) ([]fetched, error) {
	out := make([]fetched, 0, len(rows))
	for _, r := range rows {
		add, _ := r["_additional"].(map[string]any)
		f := fetched{Props: map[string]any{}}
		f.UUID, _ = add["id"].(string)
		if s, ok := add["creationTimeUnix"].(string); ok {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: object %s: creationTimeUnix %q", errGraphQL, f.UUID, s)
			}
			f.Created = n
		}
		if d, ok := add["distance"].(float64); ok {
			f.Distance = float32(d)
		}
		if vs, ok := add["vector"].([]any); ok {
			f.HasVector = true
			f.Vector = make([]float32, len(vs))
			for i, x := range vs {
				n, ok := x.(float64)
				if !ok || math.IsInf(float64(float32(n)), 0) {
					return nil, fmt.Errorf("%w: object %s: vector component %d is %v", errGraphQL, f.UUID, i, x)
				}
				f.Vector[i] = float32(n)
			}
		}
		for _, p := range props {
			f.Props[p] = r[p]
		}
		out = append(out, f)
	}
	return out, nil
}

// idsWhere is the where-filter "the UUID is one of uuids".
func idsWhere(uuids []string) *where {
	return &where{Operator: "ContainsAny", Path: []string{"id"}, TextArray: uuids}
}

func (w *where) gql() string {
	var b strings.Builder
	w.graphQL(&b)
	return b.String()
}

// restReads is the batch size up to which getByUUID reads object by
// object (a true read at the read consistency, which repairs a replica
// that missed a write) rather than by a search.
const restReads = 64

// getByUUID reads the objects among uuids that exist, at the read
// consistency. Up to restReads UUIDs it reads each object by itself,
// several at once; more it looks up by searches of batchChunk UUIDs, which
// are much faster but, in the seconds after a node rejoins, may miss an
// object on a replica not yet repaired.
func (db *DB) getByUUID(ctx context.Context, cls string, uuids []string, props []string, vec bool) (map[string]fetched, error) {
	if len(uuids) <= restReads {
		return db.getEach(ctx, cls, uuids, props, vec)
	}
	out := make(map[string]fetched, len(uuids))
	for start := 0; start < len(uuids); start += batchChunk {
		chunk := uuids[start:min(start+batchChunk, len(uuids))]
		rows, err := db.search(ctx, &query{class: cls, limit: len(chunk), where: idsWhere(chunk), props: props, withVec: vec})
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			out[r.UUID] = r
		}
	}
	return out, nil
}

// deleteWhere deletes the objects of cls that w matches, at the write
// consistency, and returns how many it deleted. It repeats the delete
// while the server's limit cut it short, and retries failed objects for
// up to MaxAttempts rounds.
func (db *DB) deleteWhere(ctx context.Context, cls string, w *where) (int, error) {
	ctx, cancel := context.WithTimeout(ctx, db.opt.Timeout)
	defer cancel()
	path := "/v1/batch/objects" + levelParam("?", db.level(cls, db.opt.WriteConsistency))
	body := map[string]any{"match": map[string]any{"class": cls, "where": w}, "output": "minimal", "dryRun": false}
	total, failedRounds := 0, 0
	for {
		var ans struct {
			Results struct {
				Matches    int `json:"matches"`
				Limit      int `json:"limit"`
				Successful int `json:"successful"`
				Failed     int `json:"failed"`
			} `json:"results"`
		}
		if _, err := db.cl.call(ctx, http.MethodDelete, path, body, &ans); err != nil {
			if mixedLevels(err.Error()) {
				db.cl.retries.Add(1)
				n, err := db.deleteEach(ctx, cls, w)
				return total + n, err
			}
			return total, err
		}
		r := ans.Results
		total += r.Successful
		if r.Failed > 0 {
			failedRounds++
			if failedRounds >= db.opt.MaxAttempts {
				return total, &APIError{Status: http.StatusOK, Message: fmt.Sprintf("%d objects not deleted", r.Failed)}
			}
			db.cl.retries.Add(1)
			if err := sleep(ctx, backoff(failedRounds)); err != nil {
				return total, fmt.Errorf("%w: %d objects not deleted (%w)", ErrUnavailable, r.Failed, err)
			}
			continue
		}
		if r.Limit == 0 || r.Matches < r.Limit {
			return total, nil
		}
	}
}

// deletePage is the number of objects deleteEach finds per read.
const deletePage = 1000

// deleteEach deletes the objects of cls that w matches one at a time, at
// the write consistency, and returns how many it deleted: each delete
// reaches one shard, where a batch delete over shards whose level
// resolved to different numbers of replicas (a node down) is refused.
func (db *DB) deleteEach(ctx context.Context, cls string, w *where) (int, error) {
	q := levelParam("?", db.level(cls, db.opt.WriteConsistency))
	total := 0
	for {
		rows, err := db.read(ctx, cls, func(level Consistency) ([]fetched, error) {
			args := fmt.Sprintf("limit: %d, where: %s", deletePage, w.gql())
			if level != "" {
				args += ", consistencyLevel: " + string(level)
			}
			return db.runGet(ctx, cls, args, getFields(nil, false, false), nil)
		})
		if err != nil {
			return total, err
		}
		n := 0
		for _, r := range rows {
			_, err := db.cl.objectCall(ctx, db.opt.MaxAttempts, cls, http.MethodDelete, "/v1/objects/"+url.PathEscape(cls)+"/"+r.UUID+q, nil)
			var ae *APIError
			if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				continue // gone since the read
			}
			if err != nil {
				return total + n, err
			}
			n++
		}
		total += n
		if len(rows) < deletePage {
			return total, nil
		}
		if n == 0 {
			return total, fmt.Errorf("%w: %d objects matched and none could be deleted", ErrUnavailable, len(rows))
		}
	}
}

// count returns the number of objects in cls.
func (db *DB) count(ctx context.Context, cls string) (int, error) {
	q := "{ Aggregate { " + cls + " { meta { count } } } }"
	var data struct {
		Aggregate map[string][]struct {
			Meta struct {
				Count int `json:"count"`
			} `json:"meta"`
		} `json:"Aggregate"`
	}
	if err := db.cl.graphQL(ctx, cls, q, &data); err != nil {
		return 0, err
	}
	if err := db.reach(ctx, cls); err != nil {
		return 0, err
	}
	rows := data.Aggregate[cls]
	if len(rows) != 1 {
		return 0, fmt.Errorf("weaviate: count of %s: %d answers", cls, len(rows))
	}
	return rows[0].Meta.Count, nil
}

// nearVector runs a kNN query on cls for the prepared vector q: up to
// limit objects, closest first, that w (nil for none) matches, with their
// vectors if vec is set.
func (db *DB) nearVector(ctx context.Context, cls string, q []float32, limit int, w *where, props []string, vec bool) ([]fetched, error) {
	return db.search(ctx, &query{class: cls, vec: q, limit: limit, where: w, props: props, withVec: vec})
}

// prepare checks v against a collection's dimension and metric and
// returns the form it is stored and searched in (unit length under
// Cosine), as the local store does.
func prepare(v []float32, dim int, m vector.Metric) ([]float32, error) {
	return vector.Prepare(v, dim, m)
}

// confirmMissing reads again, one by one in order, the objects of uuids
// that found (from getByUUID) lacks, until one is not there: getByUUID's
// searches may miss an object on a replica not yet repaired, and a call
// that fails on a missing object must not fail on one of those. It adds
// what it finds to found.
func (db *DB) confirmMissing(ctx context.Context, cls string, uuids []string, found map[string]fetched, props []string, vec bool) error {
	if len(uuids) <= restReads {
		return nil // read one by one already
	}
	for _, u := range uuids {
		if _, ok := found[u]; ok {
			continue
		}
		got, err := db.getEach(ctx, cls, []string{u}, props, vec)
		if err != nil {
			return err
		}
		f, ok := got[u]
		if !ok {
			return nil
		}
		found[u] = f
	}
	return nil
}

// getEach reads each object of uuids with its own request, at most 16 at
// a time.
func (db *DB) getEach(ctx context.Context, cls string, uuids []string, props []string, vec bool) (map[string]fetched, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		out   = make(map[string]fetched, len(uuids))
		first error
		wg    sync.WaitGroup
		sem   = make(chan struct{}, 16)
	)
	q := levelParam("?", db.level(cls, db.opt.ReadConsistency))
	if vec {
		if q == "" {
			q = "?include=vector"
		} else {
			q += "&include=vector"
		}
	}
	for _, u := range uuids {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var obj struct {
				ID         string         `json:"id"`
				Created    int64          `json:"creationTimeUnix"`
				Properties map[string]any `json:"properties"`
				Vector     []float32      `json:"vector"`
			}
			_, err := db.cl.objectCall(ctx, db.opt.MaxAttempts, cls, http.MethodGet, "/v1/objects/"+url.PathEscape(cls)+"/"+u+q, &obj)
			var ae *APIError
			if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if first == nil {
					first = err
					cancel()
				}
				return
			}
			f := fetched{UUID: obj.ID, Created: obj.Created, Vector: obj.Vector, HasVector: obj.Vector != nil, Props: map[string]any{}}
			for _, p := range props {
				f.Props[p] = obj.Properties[p]
			}
			out[u] = f
		}()
	}
	wg.Wait()
	if first != nil {
		return nil, first
	}
	return out, nil
}
