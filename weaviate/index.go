// This file holds Index, a vector.Index over one Weaviate class: numeric
// ids are carried in the objects' UUIDs, so results need no properties.

package weaviate

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// Index is a [vector.Index] over one class of the cluster, created by
// [DB.NewIndex]. It passes cairn's index conformance suite, with these
// differences:
//
//   - A [vector.IDSet] filter is sent to the cluster; any other
//     [vector.Filter] is a Go function the cluster cannot run, so Search
//     fetches growing numbers of results and filters them here, which
//     costs more round trips the fewer ids the filter allows, and reaches
//     no further than Options.MaxResults nearest: where fewer than k of
//     those pass the filter while more vectors lie beyond, Search fails
//     with [ErrBeyondReach] rather than answer short.
//   - Ties at the k-th distance are broken by ascending id, as in cairn,
//     by fetching past k until the distance changes.
//   - Len asks the cluster and returns -1 if it cannot answer.
//   - Writes by other clients are seen at the read consistency; an Add
//     checks for an existing id and then writes, so two clients adding one
//     id at once may both succeed (the last write wins). Within one DB,
//     writes of one id run one after the other.
//
// An Index is safe for concurrent use by multiple goroutines.
type Index struct {
	db    *DB
	class string
	dim   int
	m     vector.Metric
	made  string // the class's Made: see Collection.same
}

// NewIndex creates the index name on the cluster (a class of its own,
// apart from the collections) for vectors of dimension dim under metric m,
// searched with kind (cairn.Flat: exact; cairn.HNSW or cairn.Auto:
// Weaviate's HNSW with its defaults unless hnsw is set). It returns an
// error wrapping vector.ErrDuplicateID if it exists; [DB.OpenIndex] opens
// an existing one.
func (db *DB) NewIndex(ctx context.Context, name string, cfg cairn.CollectionConfig) (*Index, error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("weaviate: new index: %w: empty name", vector.ErrInvalidOptions)
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("weaviate: new index %q: %w", name, err)
	}
	cfg = filled(cfg)
	cls, err := className("index-" + name)
	if err != nil {
		return nil, err
	}
	cl := db.newClass("index", name, cls, cfg)
	if err := db.createClass(ctx, cl); err != nil {
		return nil, fmt.Errorf("weaviate: new index %q: %w", name, err)
	}
	st, _, _ := describe(cl, "index")
	return &Index{db: db, class: cls, dim: cfg.Dim, m: cfg.Metric, made: st.Made}, nil
}

// OpenIndex opens the index name, or returns an error wrapping
// vector.ErrNotFound.
func (db *DB) OpenIndex(ctx context.Context, name string) (*Index, error) {
	if err := db.usable(); err != nil {
		return nil, err
	}
	cls, err := className("index-" + name)
	if err != nil {
		return nil, fmt.Errorf("weaviate: open index %q: %w", name, vector.ErrNotFound)
	}
	c, err := db.getClass(ctx, cls)
	if err != nil {
		return nil, fmt.Errorf("weaviate: open index %q: %w", name, err)
	}
	st, cfg, ok := describe(c, "index")
	if !ok {
		return nil, fmt.Errorf("weaviate: open index %q: %w: class %s is not a cairn index", name, vector.ErrNotFound, cls)
	}
	return &Index{db: db, class: cls, dim: cfg.Dim, m: cfg.Metric, made: st.Made}, nil
}

// DropIndex deletes the index name and its vectors.
func (db *DB) DropIndex(ctx context.Context, name string) error {
	ix, err := db.OpenIndex(ctx, name)
	if err != nil {
		return err
	}
	return db.deleteClass(ctx, ix.class)
}

// Class returns the name of the Weaviate class that holds the index.
func (ix *Index) Class() string { return ix.class }

func (ix *Index) objectPath(id vector.ID) string {
	return "/v1/objects/" + url.PathEscape(ix.class) + "/" + vectorUUID(id)
}

// exists reports whether id is stored, at the read consistency.
func (ix *Index) exists(ctx context.Context, id vector.ID) (bool, error) {
	st, err := ix.db.cl.objectCall(ctx, ix.db.opt.MaxAttempts, ix.class, http.MethodHead, ix.objectPath(id)+levelParam("?", ix.db.level(ix.class, ix.db.opt.ReadConsistency)), nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st/100 == 2, nil
}

// Add stores v under id. It returns an error wrapping vector.ErrDuplicateID
// if id is stored, and the errors of vector.Check; on error nothing is
// stored.
func (ix *Index) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	return ix.AddBatch(ctx, []vector.ID{id}, []vector.Vector{v})
}

// AddBatch stores vs under ids, all or nothing: it validates every vector
// and id first, and deletes what it wrote if the cluster fails midway.
func (ix *Index) AddBatch(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if err := ix.db.usable(); err != nil {
		return err
	}
	if len(ids) != len(vs) {
		return fmt.Errorf("weaviate: add: %w: %d ids for %d vectors", vector.ErrInvalidOptions, len(ids), len(vs))
	}
	ctx, cancel := ix.db.bound(ctx)
	defer cancel()
	wctx, wcancel, undo := split(ctx)
	defer wcancel()
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("weaviate: add: %w", err)
	}
	objs := make([]object, len(ids))
	seen := make(map[vector.ID]bool, len(ids))
	uuids := make([]string, len(ids))
	keys := make([]string, len(ids))
	for i, id := range ids {
		p, err := prepare(vs[i], ix.dim, ix.m)
		if err != nil {
			return fmt.Errorf("weaviate: add %d: %w", id, err)
		}
		if seen[id] {
			return fmt.Errorf("weaviate: add %d: %w (repeated in the batch)", id, vector.ErrDuplicateID)
		}
		seen[id] = true
		uuids[i], keys[i] = vectorUUID(id), strconv.FormatUint(uint64(id), 10)
		objs[i] = object{Class: ix.class, ID: uuids[i], Vector: p}
	}
	unlock, err := ix.db.lockIDs(wctx, ix.class, keys)
	if err != nil {
		return fmt.Errorf("weaviate: add: %w", err)
	}
	defer unlock()
	if err := ix.db.sameClass(wctx, ix.class, "index", ix.made); err != nil {
		return fmt.Errorf("weaviate: add: %w", err)
	}
	if len(ids) == 1 {
		ok, err := ix.exists(wctx, ids[0])
		if err != nil {
			return fmt.Errorf("weaviate: add %d: %w", ids[0], err)
		}
		if ok {
			return fmt.Errorf("weaviate: add %d: %w", ids[0], vector.ErrDuplicateID)
		}
	} else {
		found, err := ix.db.getByUUID(wctx, ix.class, uuids, nil, false)
		if err != nil {
			return fmt.Errorf("weaviate: add: %w", err)
		}
		for i, u := range uuids {
			if _, ok := found[u]; ok {
				return fmt.Errorf("weaviate: add %d: %w", ids[i], vector.ErrDuplicateID)
			}
		}
	}
	done, err := ix.db.putObjects(wctx, objs)
	if err != nil {
		// Every object sent is undone: one whose request timed out may
		// have been written without an answer.
		uctx, ucancel := undo()
		defer ucancel()
		left, uerr := ix.db.undoWrite(uctx, ix.class, uuids, nil)
		we := &WriteError{Op: "add", Acked: len(done), Total: len(objs), Err: err, UndoErr: uerr}
		for _, u := range left {
			we.NotUndone = append(we.NotUndone, keys[slices.Index(uuids, u)])
		}
		return we
	}
	return nil
}

// Delete removes id, or returns an error wrapping vector.ErrNotFound.
func (ix *Index) Delete(ctx context.Context, id vector.ID) error {
	if err := ix.db.usable(); err != nil {
		return err
	}
	ctx, cancel := ix.db.bound(ctx)
	defer cancel()
	unlock, err := ix.db.lockIDs(ctx, ix.class, []string{strconv.FormatUint(uint64(id), 10)})
	if err != nil {
		return fmt.Errorf("weaviate: delete %d: %w", id, err)
	}
	defer unlock()
	if err := ix.db.sameClass(ctx, ix.class, "index", ix.made); err != nil {
		return fmt.Errorf("weaviate: delete %d: %w", id, err)
	}
	ok, err := ix.exists(ctx, id)
	if err != nil {
		return fmt.Errorf("weaviate: delete %d: %w", id, err)
	}
	if !ok {
		return fmt.Errorf("weaviate: delete %d: %w", id, vector.ErrNotFound)
	}
	_, err = ix.db.cl.objectCall(ctx, ix.db.opt.MaxAttempts, ix.class, http.MethodDelete, ix.objectPath(id)+levelParam("?", ix.db.level(ix.class, ix.db.opt.WriteConsistency)), nil)
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return nil // a retried delete whose first attempt went through
	}
	if err != nil {
		return fmt.Errorf("weaviate: delete %d: %w", id, err)
	}
	return nil
}

// Len returns the number of stored vectors, or -1 if the cluster did not
// answer within the DB's timeout.
func (ix *Index) Len() int {
	ctx, cancel := ix.db.bound(context.Background())
	defer cancel()
	n, err := ix.db.count(ctx, ix.class)
	if err != nil {
		return -1
	}
	return n
}

// Search returns up to k results nearest to q, closest first (ties by
// ascending id). See [Index] for how filters are applied.
func (ix *Index) Search(ctx context.Context, q vector.Vector, k int, opts *vector.SearchOptions) ([]vector.Result, error) {
	if k <= 0 {
		return nil, fmt.Errorf("weaviate: search: %w: %d", vector.ErrInvalidK, k)
	}
	if err := ix.db.usable(); err != nil {
		return nil, err
	}
	p, err := prepare(q, ix.dim, ix.m)
	if err != nil {
		return nil, fmt.Errorf("weaviate: search: %w", err)
	}
	ctx, cancel := ix.db.bound(ctx)
	defer cancel()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("weaviate: search: %w", err)
	}
	var w *where
	var allow func(vector.ID) bool
	if opts != nil && opts.Filter != nil {
		if set, ok := opts.Filter.(*vector.IDSet); ok {
			if set.Len() == 0 {
				return []vector.Result{}, nil
			}
			var us []string
			set.All(func(id vector.ID) bool { us = append(us, vectorUUID(id)); return true })
			slices.Sort(us)
			w = idsWhere(us)
		} else {
			allow = opts.Filter.Allow
		}
	}
	// Ask for one more than k, so that a tie at the k-th distance shows,
	// and for more while ties run on or the Go filter leaves fewer than k;
	// never for more than the cluster answers (a k beyond it, up to the
	// largest int, would overflow the sums).
	most := ix.db.opt.MaxResults
	limit := min(k, most-1) + 1
	if allow != nil {
		limit = min(4*min(k, most)+16, most)
	}
	for {
		rows, err := ix.db.nearVector(ctx, ix.class, p, limit, w, nil, false)
		if err != nil {
			return nil, fmt.Errorf("weaviate: search: %w", err)
		}
		res := make([]vector.Result, 0, len(rows))
		for _, r := range rows {
			id, ok := vectorID(r.UUID)
			if !ok {
				return nil, fmt.Errorf("weaviate: search: %w: object %s is not an index vector", vector.ErrCorrupt, r.UUID)
			}
			if allow == nil || allow(id) {
				res = append(res, vector.Result{ID: id, Distance: r.Distance})
			}
		}
		slices.SortFunc(res, func(a, b vector.Result) int {
			if a.Less(b) {
				return -1
			}
			if b.Less(a) {
				return 1
			}
			return 0
		})
		exhausted := len(rows) < limit
		last := float32(0)
		if len(rows) > 0 {
			last = rows[len(rows)-1].Distance
		}
		switch {
		case exhausted:
		case limit >= ix.db.opt.MaxResults:
			// As far as the cluster lets a query reach: short of k,
			// the filter's answer is not known.
			if len(res) < min(k, ix.db.opt.MaxResults) {
				return nil, fmt.Errorf("weaviate: search: %w: %d of the %d nearest pass the filter, %d asked", ErrBeyondReach, len(res), limit, k)
			}
		case len(res) < k || res[k-1].Distance >= last:
			// Too few pass the filter, or the k-th may tie with results
			// not fetched yet.
			limit = min(limit*4, ix.db.opt.MaxResults)
			continue
		}
		if len(res) > k {
			res = res[:k]
		}
		return res, nil
	}
}

var _ vector.Index = (*Index)(nil)
var _ vector.BatchAdder = (*Index)(nil)
