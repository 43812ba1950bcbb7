package main

// This file checks a database after a kill against the model: it opens,
// passes SQLite's integrity check, holds exactly the acknowledged state
// (each write in flight wholly or not at all), and its HNSW indexes answer
// like the items they index.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sort"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// verdict is the outcome of one check.
type verdict struct {
	refused  error    // the file did not open
	lost     []string // acknowledged writes not found as acknowledged
	corrupt  []string // anything else wrong
	resolved model    // the state found, for the next trial on this file
	mode     string   // the power-loss image checked, if any
}

func (v *verdict) lose(format string, args ...any) {
	v.lost = append(v.lost, fmt.Sprintf(format, args...))
}

func (v *verdict) damage(format string, args ...any) {
	v.corrupt = append(v.corrupt, fmt.Sprintf(format, args...))
}

// observed is what a collection holds: id -> item.
type observed map[string]cairn.Item

// history is every version an acknowledged write stored: collection -> id
// -> version -> writer.
type history map[string]map[string]map[int]int

func historyOf(ops []*op) history {
	h := history{}
	for _, o := range ops {
		if o.kind != "add" && o.kind != "ups" {
			continue
		}
		if h[o.coll] == nil {
			h[o.coll] = map[string]map[int]int{}
		}
		for _, id := range o.ids {
			if h[o.coll][id] == nil {
				h[o.coll][id] = map[int]int{}
			}
			h[o.coll][id][o.ver] = o.w
		}
	}
	return h
}

// check verifies the database at path against want. An item there that no
// write left is damage, unless hist (which may be nil) shows it as an
// acknowledged earlier version: then a later acknowledged write (a delete,
// an upsert) is what was lost.
//
// With past, it also checks the histories (checkPast).
func check(ctx context.Context, path string, want model, pending []*op, seed uint64, hist history, past *pastCheck) *verdict {
	v := &verdict{}
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		v.refused = err
		return v
	}
	if err := sdb.IntegrityCheck(ctx); err != nil {
		v.damage("integrity check: %v", err)
	}
	if err := sdb.Close(); err != nil {
		v.damage("close after integrity check: %v", err)
	}
	db, err := cairn.Open(ctx, path, storeOptions(sqlitestore.SyncFull))
	if err != nil {
		v.refused = err
		return v
	}
	defer db.Close()
	checkDB(ctx, v, db, want, pending, seed, hist, past)
	return v
}

// checkDB is check's comparison of an open store with want.
func checkDB(ctx context.Context, v *verdict, db *cairn.DB, want model, pending []*op, seed uint64, hist history, past *pastCheck) {
	infos, err := db.Collections(ctx)
	if err != nil {
		v.damage("list collections: %v", err)
		return
	}
	got := map[string]observed{}
	var names []string // of collections and tenants ("collection@tenant")
	for _, info := range infos {
		names = append(names, info.Name)
		c, err := db.Collection(ctx, info.Name)
		if err != nil {
			v.damage("collection %s: %v", info.Name, err)
			return
		}
		tenants, err := c.Tenants(ctx)
		if err != nil {
			v.damage("tenants of %s: %v", info.Name, err)
			return
		}
		for _, t := range tenants {
			names = append(names, info.Name+"@"+t)
		}
	}
	for _, name := range names {
		c, err := target(ctx, db, name)
		if err != nil {
			v.damage("collection %s: %v", name, err)
			return
		}
		items, err := c.Find(ctx, nil, 0)
		if err != nil {
			v.damage("list %s: %v", name, err)
			return
		}
		obs := observed{}
		for _, it := range items {
			obs[it.ID] = it
		}
		if n, err := c.Count(ctx); err != nil || n != len(obs) {
			v.damage("%s: Find lists %d items, Count says %d (%v)", name, len(obs), n, err)
		}
		got[name] = obs
	}
	// Resolve each write in flight: the state found must be the model
	// with the write applied wholly, or not at all.
	state := want.clone()
	for _, o := range pending {
		if _, inFile := got[o.coll]; !inFile && o.kind != "mk" && o.kind != "rm" && o.kind != "reopen" {
			continue // the collection is gone, which is reported below
		}
		after := state.clone()
		if err := after.apply(o); err != nil {
			v.damage("in-flight %v does not apply: %v", o, err)
			continue
		}
		before := matches(state, got, o)
		done := matches(after, got, o)
		if o.kind == "del" {
			// Done when none of its ids is left, not done otherwise (an id
			// missing then is a lost write, reported below).
			done = true
			for _, id := range o.ids {
				if _, ok := got[o.coll][id]; ok {
					done = false
				}
			}
			before = !done
		}
		if o.kind == "ups" {
			// Done when every id is at the new version, not done when none
			// is (an id at some other version is then a lost write,
			// reported below); anything between is a partly visible write.
			n := 0
			for _, id := range o.ids {
				if it, ok := got[o.coll][id]; ok && it.Metadata["v"] == float64(o.ver) {
					n++
				}
			}
			done, before = n == len(o.ids), n == 0
		}
		if o.kind == "delwhere" {
			// Done exactly when no item of its group is left. Otherwise it
			// did not happen, and any item of the group that is missing is
			// an acknowledged write lost, reported as such below.
			done = !anyOfGroup(got[o.coll], o)
			before = !done
		}
		switch {
		case done && !before:
			state = after
		case before:
		default:
			v.damage("in-flight %v is partly visible", o)
		}
	}
	v.resolved = state
	// Every collection and item of the resolved state, exactly.
	for name, items := range state {
		obs, ok := got[name]
		if !ok {
			v.lose("collection %s is gone", name)
			continue
		}
		for id, e := range items {
			it, ok := obs[id]
			if !ok {
				v.lose("%s/%s (v%d) is gone", name, id, e.ver)
				continue
			}
			if msg := sameItem(name, it, itemOf(name, id, e.ver, e.w)); msg != "" {
				if hist == nil || earlier(hist, name, it) {
					v.lose("%s/%s: %s", name, id, msg)
				} else {
					v.damage("%s/%s: %s, and no acknowledged write stored what is there", name, id, msg)
				}
			}
		}
		for id, it := range obs {
			if _, ok := items[id]; !ok {
				if earlier(hist, name, it) {
					v.lose("%s/%s is back: an acknowledged delete of it is gone", name, id)
				} else {
					v.damage("%s/%s is there, but no write left it", name, id)
				}
			}
		}
	}
	for name := range got {
		if _, ok := state[name]; !ok {
			if _, created := hist[name]; created {
				v.lose("collection %s is back: an acknowledged delete of it is gone", name)
			} else {
				v.damage("collection %s is there, but no write left it", name)
			}
		}
	}
	checkPast(ctx, v, db, got, past)
	// Indexes answer like their items.
	r := rand.New(rand.NewPCG(seed, 5))
	for _, name := range []string{"hnsw", "auto", "routed", "hnsw@u0", "hnsw@u1"} {
		if obs, ok := got[name]; ok && len(obs) > 0 {
			c, _ := target(ctx, db, name)
			if msg := checkIndex(ctx, c, obs, r); msg != "" {
				v.damage("%s: %s", name, msg)
			}
		}
	}
}

// earlier reports whether it is exactly a version of its id that an
// acknowledged write stored.
func earlier(hist history, coll string, it cairn.Item) bool {
	ver, ok := it.Metadata["v"].(float64)
	if !ok {
		return false
	}
	w, ok := hist[coll][it.ID][int(ver)]
	return ok && sameItem(coll, it, itemOf(coll, it.ID, int(ver), w)) == ""
}

// anyOfGroup reports whether obs holds an item of the writer and group of
// the DeleteWhere o.
func anyOfGroup(obs observed, o *op) bool {
	for _, it := range obs {
		if it.Metadata["w"] == float64(o.w) && it.Metadata["g"] == float64(o.group) {
			return true
		}
	}
	return false
}

// matches reports whether the items o touches are, in got, as m has them.
func matches(m model, got map[string]observed, o *op) bool {
	items, inModel := m[o.coll]
	obs, inFile := got[o.coll]
	switch o.kind {
	case "mk", "rm":
		return inModel == inFile
	case "reopen":
		return true
	}
	if !inModel || !inFile {
		return inModel == inFile
	}
	ids := o.ids
	if o.kind == "delwhere" {
		ids = nil
		for id, it := range obs {
			if it.Metadata["w"] == float64(o.w) && it.Metadata["g"] == float64(o.group) {
				ids = append(ids, id)
			}
		}
		for id, e := range items {
			if e.w == o.w && groupOf(id) == float64(o.group) {
				ids = append(ids, id)
			}
		}
	}
	for _, id := range ids {
		e, want := items[id]
		it, have := obs[id]
		if want != have {
			return false
		}
		if have && it.Metadata["v"] != float64(e.ver) {
			return false
		}
	}
	return true
}

// sameItem compares a stored item with the one written; embeddings in
// their stored form (unit length under Cosine), bit for bit.
func sameItem(coll string, got, want cairn.Item) string {
	cfg := configOf(coll)
	emb, err := vector.Prepare(want.Embedding, cfg.Dim, cfg.Metric)
	if err != nil {
		return fmt.Sprintf("the written embedding is invalid: %v", err)
	}
	if len(got.Embedding) != len(emb) {
		return fmt.Sprintf("embedding of %d components, want %d", len(got.Embedding), len(emb))
	}
	for i := range emb {
		if math.Float32bits(got.Embedding[i]) != math.Float32bits(emb[i]) {
			return fmt.Sprintf("embedding component %d is %v, want %v", i, got.Embedding[i], emb[i])
		}
	}
	if got.Text != want.Text {
		return fmt.Sprintf("text differs (%d bytes, want %d)", len(got.Text), len(want.Text))
	}
	if !reflect.DeepEqual(got.Metadata, want.Metadata) {
		return fmt.Sprintf("metadata %v, want %v", got.Metadata, want.Metadata)
	}
	return ""
}

// checkIndex queries c with the embeddings of a few of its items: every
// hit must be an item of c at the distance its embedding gives, and the
// hits must overlap the exact nearest neighbours (recall@10 ≥ 0.8 on
// average; an index that answers from a stale or foreign graph does not).
func checkIndex(ctx context.Context, c cairn.MemoryCollection, obs observed, r *rand.Rand) string {
	cfg := c.Config()
	ids := make([]string, 0, len(obs))
	for id := range obs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	const queries, k = 10, 10
	var found, total int
	for range queries {
		q := obs[ids[r.IntN(len(ids))]].Embedding
		hits, err := c.Query(ctx, q, k, nil)
		if err != nil {
			return fmt.Sprintf("query: %v", err)
		}
		type cand struct {
			id string
			d  float64
		}
		exact := make([]cand, 0, len(ids))
		for _, id := range ids {
			exact = append(exact, cand{id, cfg.Metric.Distance(q, obs[id].Embedding)})
		}
		slices.SortFunc(exact, func(a, b cand) int {
			if a.d != b.d {
				if a.d < b.d {
					return -1
				}
				return 1
			}
			if a.id < b.id {
				return -1
			}
			return 1
		})
		want := min(k, len(exact))
		if len(hits) != want {
			return fmt.Sprintf("query returned %d hits, the collection holds %d items", len(hits), len(ids))
		}
		top := map[string]bool{}
		for _, e := range exact[:want] {
			top[e.id] = true
		}
		kth := exact[want-1].d
		for _, h := range hits {
			it, ok := obs[h.ID]
			if !ok {
				return fmt.Sprintf("query returned %s, which the collection does not hold", h.ID)
			}
			if d := cfg.Metric.Distance(q, it.Embedding); math.Abs(d-h.Distance) > 1e-3*math.Max(1, math.Abs(d)) {
				return fmt.Sprintf("query returned %s at distance %v, its embedding is at %v", h.ID, h.Distance, d)
			}
			if top[h.ID] || h.Distance <= kth+1e-6*math.Max(1, math.Abs(kth)) {
				found++
			}
		}
		total += want
	}
	if recall := float64(found) / float64(total); recall < 0.8 {
		return fmt.Sprintf("recall@%d %.2f over %d queries", k, recall, queries)
	}
	return ""
}

var errNoReady = errors.New("the child never got ready")
