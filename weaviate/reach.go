// This file holds what keeps reads honest and calls bounded: the check
// that a read reached every shard, each call's time bound, and the part
// of a write's bound kept for undoing it.
//
// Weaviate (v1.39) plans a read over the replicas that memberlist holds
// alive, and leaves out, without an error, a shard none of whose replicas
// is: its router's buildReplicas skips nodes it cannot resolve, and a
// search or an Aggregate then answers from the other shards. Until
// memberlist has marked the nodes dead (a few seconds) the same read fails
// or hangs instead. So a search or count cannot tell complete from
// partial by itself; after it, reach asks the cluster which shards of the
// class have a replica on a node that answers.

package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn/vector"
)

// PartialError is the error of a read that could not reach every shard of
// its class: some shard had no replica on a node that answered, so the
// cluster's answer was a subset. It wraps [ErrUnavailable].
//
// It is a plain value, owned by the caller.
type PartialError struct {
	Class   string   // the Weaviate class read
	Shards  int      // how many shards the class has
	Reached []string // the shards with a replica on a node that answered
	Missing []string // the others, when known (nil if never seen complete)
}

func (e *PartialError) Error() string {
	s := fmt.Sprintf("weaviate: class %s: %d of %d shards reachable", e.Class, len(e.Reached), e.Shards)
	if len(e.Missing) > 0 {
		s += ", no live replica of " + strings.Join(e.Missing, ", ")
	}
	return s + ": the answer would be partial"
}

// Unwrap returns ErrUnavailable.
func (e *PartialError) Unwrap() error { return ErrUnavailable }

// nodesAnswer is an answer of /v1/nodes?output=verbose: each node's
// status and shards, as the node asked sees them.
type nodesAnswer struct {
	Nodes []struct {
		Status string `json:"status"`
		Shards []struct {
			Class  string `json:"class"`
			Name   string `json:"name"`
			Loaded *bool  `json:"loaded"`
		} `json:"shards"`
	} `json:"nodes"`
}

// holds reports whether some node holds a shard of cls.
func (a *nodesAnswer) holds(cls string) bool {
	for _, nd := range a.Nodes {
		for _, s := range nd.Shards {
			if s.Class == cls {
				return true
			}
		}
	}
	return false
}

// serving reports whether every node listed is healthy and every shard of
// cls it holds is loaded, and some node holds one: then a read of cls at
// its level reaches every replica, none of them loading.
func (a *nodesAnswer) serving(cls string) bool {
	held := false
	for _, nd := range a.Nodes {
		if nd.Status != "HEALTHY" {
			return false
		}
		for _, s := range nd.Shards {
			if s.Class != cls {
				continue
			}
			if s.Loaded == nil || !*s.Loaded {
				return false
			}
			held = true
		}
	}
	return held
}

// nodeDown reports whether a node status of /v1/nodes means the node did
// not answer the coordinator.
func nodeDown(status string) bool {
	return status == "UNAVAILABLE" || status == "TIMEOUT"
}

// reach returns nil if every shard of cls has a replica on a node that
// answers, and a *PartialError otherwise. A read calls it after the
// cluster answered: a shard left out of the read's plan was left out
// because its nodes were dead, and a node that restarts takes far longer
// than a read to answer again, so a shard missed by the read is missed
// here too.
func (db *DB) reach(ctx context.Context, cls string) error {
	want, err := db.shardCount(ctx, cls)
	if err != nil {
		return err
	}
	var ans nodesAnswer
	_, err = db.cl.call(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(cls)+"?output=verbose", nil, &ans)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		// The class filter is looked up in the leader's schema, and a
		// cluster electing a leader says not found; every class's shards
		// tell without it. A class that has none on any node is gone.
		ans = nodesAnswer{}
		if _, err = db.cl.call(ctx, http.MethodGet, "/v1/nodes?output=verbose", nil, &ans); err == nil && !ans.holds(cls) {
			return fmt.Errorf("%w: class %s", vector.ErrNotFound, cls)
		}
	}
	if err != nil {
		return fmt.Errorf("checking the shards of %s: %w", cls, err)
	}
	seen := map[string]bool{}
	for _, nd := range ans.Nodes {
		if nodeDown(nd.Status) {
			continue
		}
		for _, s := range nd.Shards {
			if s.Class == cls {
				seen[s.Name] = true
			}
		}
	}
	reached := make([]string, 0, len(seen))
	for s := range seen {
		reached = append(reached, s)
	}
	slices.Sort(reached)
	if len(reached) >= want {
		db.shardNames.Store(cls, reached)
		return nil
	}
	e := &PartialError{Class: cls, Shards: want, Reached: reached}
	if all, ok := db.shardNames.Load(cls); ok {
		for _, s := range all.([]string) {
			if !seen[s] {
				e.Missing = append(e.Missing, s)
			}
		}
	}
	return e
}

// shardCount returns the number of shards of cls, read from its
// definition once and then remembered (a class's shards do not change).
// The definition is read through Raft, so a DB that has not read it
// before the cluster lost its quorum fails the check with ErrUnavailable.
func (db *DB) shardCount(ctx context.Context, cls string) (int, error) {
	if n, ok := db.shards.Load(cls); ok {
		return n.(int), nil
	}
	c, err := db.getClass(ctx, cls)
	if err != nil {
		return 0, fmt.Errorf("reading the shards of %s: %w", cls, err)
	}
	n, ok := shardsOf(c)
	if !ok {
		return 0, fmt.Errorf("weaviate: class %s: %w: no shard count in its sharding config", cls, vector.ErrCorrupt)
	}
	return n, nil
}

// shardsOf reads the shard count of a class as /v1/schema returns it.
func shardsOf(c class) (int, bool) {
	for _, k := range []string{"actualCount", "desiredCount"} {
		if n, ok := count(c.ShardingConfig[k]); ok {
			return n, true
		}
	}
	return 0, false
}

// count reads a positive count of a class definition: a JSON number as
// decoded, or an int as newClass builds it.
func count(v any) (int, bool) {
	switch n := v.(type) {
	case float64:
		if n >= 1 {
			return int(n), true
		}
	case int:
		if n >= 1 {
			return n, true
		}
	}
	return 0, false
}

// bound returns ctx limited by Options.Timeout: the time bound of a call.
func (db *DB) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, db.opt.Timeout)
}

// maxUndoReserve caps the part of a write's time bound kept for its undo.
const maxUndoReserve = 5 * time.Second

// split divides a write's bounded ctx: the write runs in the first
// context, which ends a quarter of the remaining time (at most
// maxUndoReserve) before ctx does, and undo returns the context an undo
// runs in, which is not cancelled with ctx but ends with ctx's deadline,
// or one reserve from then if ctx was cancelled sooner. So a write that
// fails and is undone still returns by ctx's deadline.
func split(ctx context.Context) (write context.Context, cancel context.CancelFunc, undo func() (context.Context, context.CancelFunc)) {
	dl, ok := ctx.Deadline()
	if !ok { // callers pass a bounded ctx; this is only a guard
		dl = time.Now().Add(30 * time.Second)
	}
	reserve := min(time.Until(dl)/4, maxUndoReserve)
	write, cancel = context.WithDeadline(ctx, dl.Add(-reserve))
	undo = func() (context.Context, context.CancelFunc) {
		end := dl
		if errors.Is(ctx.Err(), context.Canceled) {
			end = time.Now().Add(reserve)
			if end.After(dl) {
				end = dl
			}
		}
		return context.WithDeadline(context.WithoutCancel(ctx), end)
	}
	return write, cancel, undo
}

// ErrNotUndone is wrapped by a [WriteError] when some objects of a failed
// write could not be confirmed undone: they may be stored, or hold the
// new version.
var ErrNotUndone = errors.New("weaviate: failed write not fully undone")

// WriteError is the error of a write that failed on the cluster after
// sending objects, and was then undone as far as its time bound allowed.
// It wraps the write's error (ErrUnavailable or an *APIError) and, if
// NotUndone is not empty, ErrNotUndone.
//
// It is a plain value, owned by the caller.
type WriteError struct {
	Op        string   // "add", "upsert" or "delete"
	Acked     int      // objects the cluster acknowledged before the failure
	Total     int      // objects of the write
	Err       error    // why the write failed
	NotUndone []string // ids whose undo is not confirmed
	UndoErr   error    // why they are not, if any are not
}

func (e *WriteError) Error() string {
	s := fmt.Sprintf("weaviate: %s: %v (%d of %d objects acknowledged", e.Op, e.Err, e.Acked, e.Total)
	if len(e.NotUndone) == 0 {
		return s + ", all undone)"
	}
	ids := e.NotUndone
	more := ""
	if len(ids) > 10 {
		ids, more = ids[:10], fmt.Sprintf(" and %d more", len(e.NotUndone)-10)
	}
	return s + fmt.Sprintf("; not undone: %q%s: %v)", ids, more, e.UndoErr)
}

// Unwrap returns the write's error, and ErrNotUndone if some of it stays.
func (e *WriteError) Unwrap() []error {
	if len(e.NotUndone) > 0 {
		return []error{e.Err, ErrNotUndone}
	}
	return []error{e.Err}
}

// undoWrite takes back a failed write to cls: it deletes the objects
// fresh (written where none was), writes back restore (the versions the
// write replaced), and then reads each of fresh once to confirm it is
// gone. It returns the UUIDs whose undo is not confirmed, and why.
func (db *DB) undoWrite(ctx context.Context, cls string, fresh []string, restore []object) ([]string, error) {
	var left []string
	var first error
	if len(restore) > 0 {
		done, err := db.putObjects(ctx, restore)
		if err != nil {
			first = fmt.Errorf("writing back replaced objects: %w", err)
			ok := map[string]bool{}
			for _, u := range done {
				ok[u] = true
			}
			for _, o := range restore {
				if !ok[o.ID] {
					left = append(left, o.ID)
				}
			}
		}
	}
	if len(fresh) == 0 {
		return left, first
	}
	for start := 0; start < len(fresh); start += batchChunk {
		chunk := fresh[start:min(start+batchChunk, len(fresh))]
		if _, err := db.deleteWhere(ctx, cls, idsWhere(chunk)); err != nil && first == nil {
			first = fmt.Errorf("deleting written objects: %w", err)
		}
	}
	// A delete by filter skips, as a search does, a shard without a live
	// replica: confirm each object is gone, one attempt each.
	present, err := db.absent(ctx, cls, fresh)
	if err != nil && first == nil {
		first = err
	}
	return append(left, present...), first
}

// absent reads each object of uuids once at the write consistency and
// returns those not confirmed absent (found, or not answered for), with
// the first error met.
func (db *DB) absent(ctx context.Context, cls string, uuids []string) ([]string, error) {
	type res struct {
		u   string
		err error
	}
	out := make(chan res, len(uuids))
	sem := make(chan struct{}, 16)
	for _, u := range uuids {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := db.cl.objectCall(ctx, 2, cls, http.MethodGet, "/v1/objects/"+url.PathEscape(cls)+"/"+u+levelParam("?", db.level(cls, db.opt.WriteConsistency)), nil)
			var ae *APIError
			switch {
			case errors.As(err, &ae) && ae.Status == http.StatusNotFound:
				out <- res{u, nil}
			case err == nil:
				out <- res{u, errors.New("still stored")}
			default:
				out <- res{u, err}
			}
		}()
	}
	var left []string
	var first error
	for range uuids {
		r := <-out
		if r.err != nil {
			left = append(left, r.u)
			if first == nil {
				first = fmt.Errorf("object %s: %w", r.u, r.err)
			}
		}
	}
	slices.Sort(left)
	return left, first
}
