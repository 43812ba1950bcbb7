package cairn

// This file holds the two keepers of a collection's history (pastStore):
// one in memory, one over sqlitestore's history table.

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// item returns the row as the caller sees it.
func (r row) item() Item {
	return Item{ID: r.key, Embedding: r.vec, Text: r.text, Metadata: r.md.toMap(),
		CreatedAt: timeOf(r.created), UpdatedAt: timeOf(r.updated), ExpiresAt: timeOf(r.expires)}
}

// memPast keeps the history of an in-memory collection: each key's
// states, oldest first, each with a copy of its vector.
type memPast struct {
	mu    sync.Mutex
	begun bool
	from  int64
	keys  map[string][]pastState
}

// keep records prior, whose versions' vectors are still in s.
func (m *memPast) keep(s vector.Store, prior []prior) error {
	states := make([]pastState, len(prior))
	for i, p := range prior {
		states[i] = pastState{until: p.until, row: row{key: p.key}}
		if r := p.was; r != nil {
			v, err := s.Get(r.id)
			if err != nil {
				return fmt.Errorf("history of %q: %w", p.key, err)
			}
			states[i].row = row{id: r.id, key: r.key, vec: slices.Clone(v), text: r.text, md: r.md,
				created: r.created, updated: r.updated, expires: r.expires}
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.keys == nil {
		m.keys = make(map[string][]pastState)
	}
	for _, st := range states {
		ks := m.keys[st.row.key]
		if n := len(ks); n > 0 {
			st.until = max(st.until, ks[n-1].until) // in the order written, as sqlitestore keeps them
		}
		m.keys[st.row.key] = append(ks, st)
	}
	return nil
}

func (m *memPast) start(_ context.Context, t int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.begun {
		m.begun, m.from = true, t
	}
	return nil
}

func (m *memPast) since(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.begun {
		return 0, vector.ErrNotFound
	}
	return m.from, nil
}

func (m *memPast) lastWrite(context.Context) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.begun {
		return 0, vector.ErrNotFound
	}
	t := m.from
	for _, ks := range m.keys {
		if n := len(ks); n > 0 {
			t = max(t, ks[n-1].until)
		}
	}
	return t, nil
}

func (m *memPast) states(_ context.Context, key string) ([]pastState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.keys[key]), nil
}

func (m *memPast) statesAt(ctx context.Context, t int64, fn func(pastState) error) error {
	m.mu.Lock()
	var at []pastState
	for _, ks := range m.keys {
		if i := firstAfter(ks, t); i < len(ks) {
			at = append(at, ks[i])
		}
	}
	m.mu.Unlock()
	for _, s := range at {
		if err := fn(s); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// firstAfter is the index of the first of states (in order of until)
// whose until is after t.
func firstAfter(states []pastState, t int64) int {
	i, _ := slices.BinarySearchFunc(states, t, func(s pastState, t int64) int {
		if s.until <= t {
			return -1
		}
		return 1
	})
	return i
}

func (m *memPast) trim(_ context.Context, before int64, keep int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	removed, last := 0, int64(math.MinInt64)
	for key, ks := range m.keys {
		cut := 0
		if before != math.MinInt64 {
			cut = firstAfter(ks, before-1) // the states that ended before before
		}
		if keep > 0 {
			cut = max(cut, len(ks)-keep)
		}
		if cut == 0 {
			continue
		}
		last = max(last, ks[cut-1].until)
		removed += cut
		if cut == len(ks) {
			delete(m.keys, key)
		} else {
			m.keys[key] = slices.Clone(ks[cut:])
		}
	}
	if removed > 0 {
		m.from = max(m.from, last)
	}
	return removed, nil
}

// sqlPast keeps the history of a collection kept in a file, in
// sqlitestore's history table.
type sqlPast struct{ c *sqlitestore.Collection }

func (p sqlPast) start(ctx context.Context, t int64) error { return p.c.StartHistory(ctx, t) }

func (p sqlPast) since(ctx context.Context) (int64, error) { return p.c.HistorySince(ctx) }

// state is s as a pastState: its vector as written, or (prepared) in its
// stored form, as the memory keeper and Get give it.
func (p sqlPast) state(s sqlitestore.Past, prepared bool) (pastState, error) {
	it := s.Item
	st := pastState{until: s.Until, row: row{key: it.Key}}
	if err := pastFault(s); err != nil {
		return pastState{}, err
	}
	if !s.Held() {
		return st, nil
	}
	md, err := decodeMetadata(it.Metadata)
	if err != nil {
		return pastState{}, fmt.Errorf("history of %q: %w", it.Key, err)
	}
	if prepared {
		if it.Vector, err = vector.Prepare(it.Vector, p.c.Dim(), p.c.Metric()); err != nil {
			return pastState{}, fmt.Errorf("history of %q: %w", it.Key, err)
		}
	}
	st.row = row{id: it.ID, key: it.Key, vec: it.Vector, text: it.Text, md: md,
		created: nanosOf(it.Created), updated: nanosOf(it.Updated), expires: nanosOf(it.Expires)}
	return st, nil
}

// pastFault returns an error wrapping [vector.ErrCorrupt] if s is a state
// no write keeps (see [row.fault]; a state without an item has only its
// id).
func pastFault(s sqlitestore.Past) error {
	it := s.Item
	f := keyFault(it.Key)
	if s.Held() {
		r := row{id: it.ID, key: it.Key, text: it.Text, created: nanosOf(it.Created), updated: nanosOf(it.Updated)}
		f = r.fault()
	}
	if f != "" {
		return fmt.Errorf("%w: history: row %d (%q) %s", vector.ErrCorrupt, it.ID, it.Key, f)
	}
	return nil
}

func (p sqlPast) states(ctx context.Context, key string) ([]pastState, error) {
	ps, err := p.c.History(ctx, key)
	if err != nil {
		return nil, err
	}
	out := make([]pastState, len(ps))
	for i, s := range ps {
		if out[i], err = p.state(s, true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (p sqlPast) lastWrite(ctx context.Context) (int64, error) { return p.c.LastWrite(ctx) }

func (p sqlPast) statesAt(ctx context.Context, t int64, fn func(pastState) error) error {
	return p.c.StatesAt(ctx, t, func(s sqlitestore.Past) error {
		st, err := p.state(s, false)
		if err != nil {
			return err
		}
		return fn(st)
	})
}

func (p sqlPast) trim(ctx context.Context, before int64, keep int) (int, error) {
	return p.c.TrimHistory(ctx, before, keep)
}
