package main

// This file is the child: a process that runs a random mixed workload
// through the public cairn API until it is killed, printing each write
// before it starts ("try") and once it returned nil ("ok").

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
)

const writers = 3

// child is the state shared by the child's goroutines.
type child struct {
	path  string
	trial int
	sync  sqlitestore.Sync

	outMu sync.Mutex
	seqMu sync.Mutex
	seq   int

	gate sync.RWMutex // writers hold it shared; a reopen holds it alone
	db   *cairn.DB
}

// say writes one line with a single write(2), so that a kill never leaves
// half a line but the last.
func (ch *child) say(format string, args ...any) {
	ch.outMu.Lock()
	os.Stdout.WriteString(fmt.Sprintf(format, args...) + "\n")
	ch.outMu.Unlock()
}

func (ch *child) next() int {
	ch.seqMu.Lock()
	defer ch.seqMu.Unlock()
	ch.seq++
	return ch.seq
}

func (ch *child) fail(seq int, err error) {
	ch.say("err %d %v", seq, err)
	os.Exit(3)
}

func (ch *child) open() {
	db, err := cairn.Open(context.Background(), ch.path, storeOptions(ch.sync))
	if err != nil {
		ch.fail(0, fmt.Errorf("open: %w", err))
	}
	ch.db = db
}

func runChild(path string, trial int, seed uint64, syncMode sqlitestore.Sync) {
	ch := &child{path: path, trial: trial, sync: syncMode}
	ctx := context.Background()
	ch.open()
	for _, name := range baseColls {
		if _, err := ch.db.Collection(ctx, name); err == nil {
			continue
		}
		seq := ch.next()
		ch.say("try -1 %d mk %s", seq, name)
		if _, err := ch.db.CreateCollection(ctx, name, configOf(name)); err != nil {
			ch.fail(seq, err)
		}
		ch.say("ok -1 %d", seq)
	}
	for _, name := range tenantColls {
		base, tenant, _ := strings.Cut(name, "@")
		c, err := ch.db.Collection(ctx, base)
		if err != nil {
			ch.fail(0, err)
		}
		if _, err := c.Tenant(ctx, tenant); err == nil {
			continue
		}
		seq := ch.next()
		ch.say("try -1 %d mk %s", seq, name)
		if _, err := c.CreateTenant(ctx, tenant); err != nil {
			ch.fail(seq, err)
		}
		ch.say("ok -1 %d", seq)
	}
	ch.say("ready")
	for w := range writers {
		go ch.writer(ctx, w, rand.New(rand.NewPCG(seed, uint64(w))))
	}
	// Reopen now and then: Close saves the HNSW graphs, and the next Open
	// loads them.
	r := rand.New(rand.NewPCG(seed, 99))
	for {
		time.Sleep(time.Duration(200+r.IntN(800)) * time.Millisecond)
		ch.gate.Lock()
		seq := ch.next()
		ch.say("try -1 %d reopen", seq)
		if err := ch.db.Close(); err != nil {
			ch.fail(seq, fmt.Errorf("close: %w", err))
		}
		ch.open()
		ch.say("ok -1 %d", seq)
		ch.gate.Unlock()
	}
}

// writer runs writes on items of its own (ids carry its number), so that
// the parent can tell the expected state of each id from the log alone.
func (ch *child) writer(ctx context.Context, w int, r *rand.Rand) {
	live := map[string]map[string]int{} // collection -> own id -> version
	targets := slices.Concat(baseColls, tenantColls)
	for _, c := range targets {
		live[c] = map[string]int{}
	}
	fresh := 0
	newID := func() string {
		fresh++
		return fmt.Sprintf("t%dw%dn%d", ch.trial, w, fresh)
	}
	pick := func(coll string, n int) []string {
		var ids []string
		for id := range live[coll] { // map order is random enough
			if len(ids) == n {
				break
			}
			ids = append(ids, id)
		}
		return ids
	}
	tmps := 0
	marks := map[string][]mark{} // collection -> the last few marks taken of it
	for {
		coll := targets[r.IntN(len(targets))]
		if configOf(coll).KeepHistory != nil && r.IntN(6) == 0 {
			marks[coll] = append(marks[coll], markNow(live[coll]))
			if len(marks[coll]) > 4 {
				marks[coll] = marks[coll][1:]
			}
		}
		ch.gate.RLock()
		db := ch.db
		c, err := target(ctx, db, coll)
		if err != nil {
			ch.fail(0, err)
		}
		seq := ch.next()
		op := r.IntN(100)
		if ch.trial%3 == 0 && r.IntN(3) == 0 {
			op = 84 // every third trial is heavy in restores, so that kills land in them
		}
		switch {
		case op < 45: // add a batch of fresh items
			n := 1 + r.IntN(64)
			items := make([]cairn.Item, n)
			ids := make([]string, n)
			for i := range items {
				ids[i] = newID()
				items[i] = itemOf(coll, ids[i], 1, w)
			}
			ch.say("try %d %d add %s 1 %s", w, seq, coll, strings.Join(ids, " "))
			if err := c.Add(ctx, items...); err != nil {
				ch.fail(seq, err)
			}
			for _, id := range ids {
				live[coll][id] = 1
			}
		case op < 60: // upsert some of ours, and maybe a fresh one
			ids := pick(coll, 1+r.IntN(8))
			if r.IntN(3) == 0 || len(ids) == 0 {
				ids = append(ids, newID())
			}
			ver := 2 + r.IntN(1000)
			items := make([]cairn.Item, len(ids))
			for i, id := range ids {
				items[i] = itemOf(coll, id, ver, w)
			}
			ch.say("try %d %d ups %s %d %s", w, seq, coll, ver, strings.Join(ids, " "))
			if err := c.Upsert(ctx, items...); err != nil {
				ch.fail(seq, err)
			}
			for _, id := range ids {
				live[coll][id] = ver
			}
		case op < 75: // delete some of ours
			ids := pick(coll, 1+r.IntN(8))
			if len(ids) == 0 {
				ch.gate.RUnlock()
				continue
			}
			ch.say("try %d %d del %s 0 %s", w, seq, coll, strings.Join(ids, " "))
			if err := c.Delete(ctx, ids...); err != nil {
				ch.fail(seq, err)
			}
			for _, id := range ids {
				delete(live[coll], id)
			}
		case op < 80: // delete a group of ours, of this trial and earlier ones
			g := float64(r.IntN(8))
			ch.say("try %d %d delwhere %s %d", w, seq, coll, int(g))
			n, err := c.DeleteWhere(ctx, cairn.And(cairn.Eq("w", float64(w)), cairn.Eq("g", g)))
			if err != nil {
				ch.fail(seq, err)
			}
			for id := range live[coll] {
				if groupOf(id) == g {
					delete(live[coll], id)
				}
			}
			ch.say("ok %d %d %d", w, seq, n)
			ch.gate.RUnlock()
			continue
		case op < 84 && w == 0: // a temporary collection: create, fill, drop
			tmps++
			name := fmt.Sprintf("tmp-%d-%d", ch.trial, tmps)
			ch.say("try %d %d mk %s", w, seq, name)
			t, err := db.CreateCollection(ctx, name, configOf(name))
			if err != nil {
				ch.fail(seq, err)
			}
			ch.say("ok %d %d", w, seq)
			seq = ch.next()
			ids := []string{newID(), newID()}
			ch.say("try %d %d add %s 1 %s", w, seq, name, strings.Join(ids, " "))
			if err := t.Add(ctx, itemOf(name, ids[0], 1, w), itemOf(name, ids[1], 1, w)); err != nil {
				ch.fail(seq, err)
			}
			ch.say("ok %d %d", w, seq)
			if r.IntN(4) != 0 { // some are left for later trials to see
				seq = ch.next()
				ch.say("try %d %d rm %s", w, seq, name)
				if err := db.DeleteCollection(ctx, name); err != nil {
					ch.fail(seq, err)
				}
			} else {
				ch.gate.RUnlock()
				continue
			}
		case op >= 84 && op < 90 && len(marks[coll]) > 0: // restore some of ours to a mark, maybe undo it
			m := marks[coll][r.IntN(len(marks[coll]))]
			ids := pick(coll, 1+r.IntN(4))
			for id := range m.snap {
				if len(ids) < 8 && r.IntN(3) == 0 && !slices.Contains(ids, id) {
					ids = append(ids, id)
				}
			}
			if len(ids) == 0 {
				ids = []string{fmt.Sprintf("t%dw%dnone", ch.trial, w)} // held by no write: a restore that changes nothing
			}
			undo, err := ch.restore(ctx, c, w, seq, coll, m, ids, live[coll])
			if err != nil {
				ch.fail(seq, err)
			}
			ch.say("ok %d %d", w, seq)
			if !undo.t.IsZero() && r.IntN(2) == 0 {
				seq = ch.next()
				if _, err := ch.restore(ctx, c, w, seq, coll, undo, ids, live[coll]); err != nil {
					ch.fail(seq, err)
				}
				ch.say("ok %d %d", w, seq)
			}
			ch.gate.RUnlock()
			continue
		default: // a read
			q := itemOf(coll, newID(), 1, w).Embedding
			if _, err := c.Query(ctx, q, 10, nil); err != nil {
				ch.fail(seq, err)
			}
			ch.gate.RUnlock()
			continue
		}
		ch.say("ok %d %d", w, seq)
		ch.gate.RUnlock()
	}
}

// target returns the collection name, or the tenant "collection@tenant".
func target(ctx context.Context, db *cairn.DB, name string) (cairn.MemoryCollection, error) {
	base, tenant, isTenant := strings.Cut(name, "@")
	c, err := db.Collection(ctx, base)
	if err != nil {
		return nil, err
	}
	if !isTenant {
		return c, nil
	}
	t, err := c.Tenant(ctx, tenant)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mark is a moment between two writes of a writer, and the versions its
// items of one collection had then.
type mark struct {
	t    time.Time
	snap map[string]int // id -> version
}

// markNow takes a mark of live, the writer's items of a collection: the
// writer's last write stamped them before now, and its next one stamps
// them after.
func markNow(live map[string]int) mark {
	t := time.Now()
	for !time.Now().After(t) { // the next write's time is after t
	}
	return mark{t: t, snap: maps.Clone(live)}
}

// restorer is a collection or tenant that keeps a history.
type restorer interface {
	Restore(ctx context.Context, t time.Time, o *cairn.RestoreOptions) (cairn.Restored, error)
}

// restore restores c's ids to mark m (the writer's own items only),
// logging the version each id must then have (0: none), and updates live.
// It returns the mark of the moment before the restore (its Undo), with
// the versions the ids had then; a zero mark if the restore changed
// nothing.
func (ch *child) restore(ctx context.Context, c cairn.MemoryCollection, w, seq int, coll string, m mark, ids []string, live map[string]int) (mark, error) {
	before := mark{snap: map[string]int{}}
	var want strings.Builder
	for _, id := range ids {
		if v, ok := live[id]; ok {
			before.snap[id] = v
		}
		fmt.Fprintf(&want, " %s:%d", id, m.snap[id])
	}
	ch.say("try %d %d restore %s%s", w, seq, coll, want.String())
	res, err := c.(restorer).Restore(ctx, m.t, &cairn.RestoreOptions{IDs: ids})
	if err != nil {
		return mark{}, fmt.Errorf("restore of %d ids to %v: %w", len(ids), m.t, err)
	}
	for _, id := range ids {
		if v, ok := m.snap[id]; ok {
			live[id] = v
		} else {
			delete(live, id)
		}
	}
	before.t = res.Undo
	return before, nil
}
