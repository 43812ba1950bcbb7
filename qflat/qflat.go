// This file holds the Index: its options, its code table and its writes.

package qflat

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// DefaultRescore is the number of candidates per result a search rescores
// exactly when [Options.Rescore] is zero.
//
// Measured by TestRescoreRecall100k on uniform-100000, 768-d (no
// structure, near-equal distances), recall@10 is 0.983 with no extra
// candidates (rescore 1) and 1.000 from 2 on; on the shared real sets the
// estimate alone reaches 0.95–0.99 (TestSharedRecall: cohere 0.974,
// bge-m3 0.946, MiniLM 0.991; 1.000 on all three at the default).
// Rescoring 80 vectors reads 240 KiB at 768-d, about 1% of a scan of
// 100,000 codes, so the default buys a wide margin for data with more
// outliers than these.
const DefaultRescore = 8

// Options tune an [Index]. The zero value (or a nil pointer) takes the
// defaults.
//
// It is a plain value: [New] reads it and keeps a copy.
type Options struct {
	// Rescore is how many candidates per result are rescored exactly:
	// a search for k keeps the Rescore·k best estimates. Default
	// DefaultRescore; at most 1024.
	Rescore int
	// Train tunes the quantizer (sample size, clipping).
	Train quant.TrainOptions
}

// Validate reports every problem with o, as an error wrapping
// [vector.ErrInvalidOptions].
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Rescore < 0 || o.Rescore > 1024 {
		return fmt.Errorf("%w: qflat: rescore %d must be in [0, 1024]", vector.ErrInvalidOptions, o.Rescore)
	}
	if err := o.Train.Validate(); err != nil {
		return fmt.Errorf("qflat: train: %w", err)
	}
	return nil
}

// chunkSlots is the number of codes in one chunk of the code table. Chunks
// are allocated whole and never move, and are the unit of work a search
// hands to each core: 1,024 codes of 772 bytes are 772 KiB at 768-d.
const chunkSlots = 1024

// Index is an approximate flat index over a [vector.Store]: a scan of int8
// codes and an exact rescoring of the best candidates. It is safe for
// concurrent use; see the package documentation.
type Index struct {
	s       vector.Store
	m       vector.Metric
	dim     int
	rescore int
	train   quant.TrainOptions

	// wmu serialises writers. mu guards the code table below; writers
	// hold it exclusively only to publish a change, searches hold it
	// shared for their scan.
	wmu      sync.Mutex
	mu       sync.RWMutex
	t        *table
	rebuilds int
}

// table is the code table: a quantizer and the codes it made, one slot per
// vector ever tracked since it was built, reused after a delete.
type table struct {
	q       *quant.Quantizer // nil while empty and untrained
	size    int              // CodeSize
	chunks  [][]byte         // each chunkSlots*size long
	ids     []vector.ID      // id of each slot
	live    []bool           // whether the slot holds a vector
	slot    map[vector.ID]uint32
	free    []uint32
	encoded int   // codes written since the quantizer was trained
	clipped int64 // clipped components among them
}

// New returns an empty index over s. It indexes only what it is given
// (Add, AddBatch, Track): to index vectors already in s, Track their ids.
// It returns an error wrapping [vector.ErrInvalidOptions] for bad options
// (Train.Dims above the store's dimension too), a nil store, or one whose
// dimension exceeds [quant.MaxDim].
func New(s vector.Store, opts *Options) (*Index, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Rescore == 0 {
		o.Rescore = DefaultRescore
	}
	switch {
	case s == nil:
		return nil, fmt.Errorf("%w: qflat: nil store", vector.ErrInvalidOptions)
	case s.Dim() > quant.MaxDim:
		return nil, fmt.Errorf("%w: qflat: dimension %d above %d", vector.ErrInvalidOptions, s.Dim(), quant.MaxDim)
	case o.Train.Dims > s.Dim():
		return nil, fmt.Errorf("%w: qflat: train Dims %d of vectors of %d", vector.ErrInvalidOptions, o.Train.Dims, s.Dim())
	}
	return &Index{
		s: s, m: s.Metric(), dim: s.Dim(), rescore: o.Rescore, train: o.Train,
		t: &table{slot: map[vector.ID]uint32{}},
	}, nil
}

// Store returns the store the index rescores from.
func (x *Index) Store() vector.Store { return x.s }

// Len returns the number of indexed vectors.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return len(x.t.slot)
}

// Stats describes an index: a plain value, safe to copy.
type Stats struct {
	// Len is the number of indexed vectors.
	Len int
	// CodeBytes is the memory of the code table: the codes (Dim+4 bytes a
	// slot, allocated 1,024 slots at a time) and the slot table (id and
	// live flag), not counting the id map.
	CodeBytes int64
	// Trained is how many vectors the store held when the quantizer was
	// trained; 0 before the first write.
	Trained int
	// Rebuilds counts the times the quantizer was trained and every code
	// rebuilt.
	Rebuilds int
}

// Stats returns the index's statistics.
func (x *Index) Stats() Stats {
	x.mu.RLock()
	defer x.mu.RUnlock()
	t := x.t
	st := Stats{Len: len(t.slot), Rebuilds: x.rebuilds}
	st.CodeBytes = int64(len(t.chunks))*int64(chunkSlots*t.size) + int64(len(t.ids))*9
	if t.q != nil {
		st.Trained = t.q.Trained()
	}
	return st
}

// MemoryBytes returns Stats().CodeBytes: the index's own memory, beside
// the store's vectors (recall.MemoryReporter).
func (x *Index) MemoryBytes() int64 { return x.Stats().CodeBytes }

// code returns the code of slot sl.
func (t *table) code(sl uint32) []byte {
	off := int(sl%chunkSlots) * t.size
	return t.chunks[sl/chunkSlots][off : off+t.size : off+t.size]
}

// insert gives id a slot (reusing a free one) and encodes v into it. It
// must be called with mu held exclusively, or on a table no search sees.
func (t *table) insert(id vector.ID, v vector.Vector) error {
	var sl uint32
	if n := len(t.free); n > 0 {
		sl = t.free[n-1]
	} else {
		sl = uint32(len(t.ids))
		if int(sl)/chunkSlots == len(t.chunks) {
			t.chunks = append(t.chunks, make([]byte, chunkSlots*t.size))
		}
	}
	c, err := t.q.Encode(t.code(sl), v)
	if err != nil {
		return err
	}
	if n := len(t.free); n > 0 && t.free[n-1] == sl {
		t.free = t.free[:n-1]
		t.ids[sl], t.live[sl] = id, true
	} else {
		t.ids = append(t.ids, id)
		t.live = append(t.live, true)
	}
	t.slot[id] = sl
	t.encoded++
	t.clipped += int64(c)
	return nil
}

// remove frees the slot of id; it reports whether id was indexed.
func (t *table) remove(id vector.ID) bool {
	sl, ok := t.slot[id]
	if !ok {
		return false
	}
	delete(t.slot, id)
	t.live[sl] = false
	t.free = append(t.free, sl)
	return true
}

// rebuild trains a quantizer from the store and encodes the vectors of ids
// into a new table, which it returns, on every core. It reads the store but
// changes nothing, so searches go on with the current table meanwhile.
func (x *Index) rebuild(ctx context.Context, ids []vector.ID) (*table, error) {
	q, err := quant.Train(ctx, x.s, &x.train)
	if err != nil {
		return nil, err
	}
	n := len(ids)
	t := &table{
		q: q, size: q.CodeSize(),
		ids: slices.Clone(ids), live: make([]bool, n),
		slot: make(map[vector.ID]uint32, n),
	}
	for range (n + chunkSlots - 1) / chunkSlots {
		t.chunks = append(t.chunks, make([]byte, chunkSlots*t.size))
	}
	workers := max(1, min(runtime.GOMAXPROCS(0), n/1024))
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for {
				lo := int(next.Add(1024) - 1024)
				if lo >= n {
					return
				}
				if errs[w] = ctx.Err(); errs[w] != nil {
					return
				}
				for sl := lo; sl < min(lo+1024, n); sl++ {
					v, err := x.s.Get(ids[sl])
					if err == nil {
						_, err = q.Encode(t.code(uint32(sl)), v)
					}
					if err != nil {
						errs[w] = fmt.Errorf("id %d: %w", ids[sl], err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	for sl, id := range ids {
		t.live[sl] = true
		t.slot[id] = uint32(sl)
	}
	return t, nil
}

// indexed returns the ids of t in slot order.
func (t *table) indexed() []vector.ID {
	ids := make([]vector.ID, 0, len(t.slot))
	for sl, id := range t.ids {
		if t.live[sl] {
			ids = append(ids, id)
		}
	}
	return ids
}

// addLocked indexes ids, whose vectors are already in the store, as one
// change: it encodes them into the current table, or rebuilds the table
// when there is no quantizer yet or the codes would be stale. The caller
// holds wmu and has checked that no id is indexed yet.
//
// An add over a store closed before or during it fails with the store's
// [vector.ErrClosed]: it reads the vectors' memory, not the store, and a
// closed paged store's memory reads as zeros, which the encoder refuses
// as a zero vector. One read of the store after a failure tells.
func (x *Index) addLocked(ctx context.Context, ids []vector.ID) error {
	err := x.encodeLocked(ctx, ids)
	if err != nil && len(ids) > 0 {
		if _, gerr := x.s.Get(ids[0]); errors.Is(gerr, vector.ErrClosed) {
			return gerr
		}
	}
	return err
}

// encodeLocked is addLocked but for a store closed under it.
func (x *Index) encodeLocked(ctx context.Context, ids []vector.ID) error {
	t := x.t
	stale := t.q == nil
	if !stale {
		stale = t.q.Stale(len(t.slot)+len(ids), t.encoded+len(ids), t.clipped)
	}
	if stale {
		return x.retrainLocked(ctx, ids)
	}
	vs := make([]vector.Vector, len(ids))
	for i, id := range ids {
		v, err := x.s.Get(id)
		if err != nil {
			return err
		}
		vs[i] = v
	}
	x.mu.Lock()
	var err error
	for i, id := range ids {
		if err = t.insert(id, vs[i]); err != nil {
			for _, done := range ids[:i] {
				t.remove(done)
			}
			break
		}
	}
	// Drift shows only in the clipping of new codes: look again.
	stale = err == nil && t.q.Stale(len(t.slot), t.encoded, t.clipped)
	x.mu.Unlock()
	if stale {
		// The new codes are in and valid, if stale: a failed rebuild
		// (a cancelled ctx) is tried again by the next write.
		_ = x.retrainLocked(ctx, nil)
	}
	return err
}

// retrainLocked rebuilds the table from the store, with extra ids (not yet
// indexed) added, and publishes it. The caller holds wmu, not mu.
func (x *Index) retrainLocked(ctx context.Context, extra []vector.ID) error {
	x.mu.RLock()
	ids := append(x.t.indexed(), extra...)
	x.mu.RUnlock()
	if len(ids) == 0 {
		x.mu.Lock()
		x.t = &table{slot: map[vector.ID]uint32{}}
		x.mu.Unlock()
		return nil
	}
	t, err := x.rebuild(ctx, ids)
	if err != nil {
		return err
	}
	x.mu.Lock()
	x.t = t
	x.rebuilds++
	x.mu.Unlock()
	return nil
}

// Retrain trains the quantizer again from the store and rebuilds every
// code, as a write does by itself when the codes go stale. Searches go on
// with the old codes until it is done; other writes wait.
func (x *Index) Retrain(ctx context.Context) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.retrainLocked(ctx, nil); err != nil {
		return fmt.Errorf("qflat: retrain: %w", err)
	}
	return nil
}

// Add stores v under id and indexes it. See [vector.Index.Add].
func (x *Index) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.s.Put(ctx, id, v); err != nil {
		return fmt.Errorf("qflat: add: %w", err)
	}
	if err := x.addLocked(ctx, []vector.ID{id}); err != nil {
		_ = x.s.Delete(context.WithoutCancel(ctx), id)
		return fmt.Errorf("qflat: add %d: %w", id, err)
	}
	return nil
}

// AddBatch stores vs under ids and indexes them: all or nothing if the
// store supports batch writes ([vector.BatchPutter]); otherwise the
// vectors are validated first and put one by one. See [vector.BatchAdder].
func (x *Index) AddBatch(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) != len(vs) {
		return fmt.Errorf("qflat: add batch: %w: %d ids for %d vectors", vector.ErrInvalidOptions, len(ids), len(vs))
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	undo := func(n int) {
		for _, id := range ids[:n] {
			_ = x.s.Delete(context.WithoutCancel(ctx), id)
		}
	}
	if bp, ok := x.s.(vector.BatchPutter); ok {
		if err := bp.PutBatch(ctx, ids, vs); err != nil {
			return fmt.Errorf("qflat: add batch: %w", err)
		}
	} else {
		seen := make(map[vector.ID]bool, len(ids))
		for i, v := range vs {
			if err := vector.Check(v, x.dim, x.m); err != nil {
				return fmt.Errorf("qflat: add batch: item %d: %w", i, err)
			}
			if _, err := x.s.Get(ids[i]); err == nil || seen[ids[i]] {
				return fmt.Errorf("qflat: add batch: item %d (id %d): %w", i, ids[i], vector.ErrDuplicateID)
			}
			seen[ids[i]] = true
		}
		for i, v := range vs {
			if err := x.s.Put(ctx, ids[i], v); err != nil {
				undo(i)
				return fmt.Errorf("qflat: add batch: item %d: %w", i, err)
			}
		}
	}
	if err := x.addLocked(ctx, ids); err != nil {
		undo(len(ids))
		return fmt.Errorf("qflat: add batch: %w", err)
	}
	return nil
}

// Delete removes id from the store and the index. See
// [vector.Index.Delete].
func (x *Index) Delete(ctx context.Context, id vector.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.s.Delete(ctx, id); err != nil {
		return fmt.Errorf("qflat: delete: %w", err)
	}
	x.mu.Lock()
	x.t.remove(id)
	x.mu.Unlock()
	return nil
}

// Track indexes vectors already in the store, all or nothing: an error
// wrapping [vector.ErrNotFound] for an id the store lacks,
// [vector.ErrDuplicateID] for one already indexed or repeated. Opening an
// index over a full store is one Track of every id, which trains the
// quantizer once and encodes every vector. See [vector.Tracker].
func (x *Index) Track(ctx context.Context, ids []vector.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	seen := make(map[vector.ID]bool, len(ids))
	x.mu.RLock()
	for _, id := range ids {
		_, dup := x.t.slot[id]
		if dup || seen[id] {
			x.mu.RUnlock()
			return fmt.Errorf("qflat: track %d: %w", id, vector.ErrDuplicateID)
		}
		seen[id] = true
	}
	x.mu.RUnlock()
	for _, id := range ids {
		if _, err := x.s.Get(id); err != nil {
			return fmt.Errorf("qflat: track %d: %w", id, err)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := x.addLocked(ctx, ids); err != nil {
		return fmt.Errorf("qflat: track: %w", err)
	}
	return nil
}

// Untrack removes ids from the index and leaves them in the store, all or
// nothing: an error wrapping [vector.ErrNotFound] for an id not indexed or
// repeated (its second removal finds it gone). See [vector.Tracker].
func (x *Index) Untrack(ctx context.Context, ids []vector.ID) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.Lock()
	defer x.mu.Unlock()
	seen := make(map[vector.ID]bool, len(ids))
	for _, id := range ids {
		if _, ok := x.t.slot[id]; !ok || seen[id] {
			return fmt.Errorf("qflat: untrack %d: %w", id, vector.ErrNotFound)
		}
		seen[id] = true
	}
	for _, id := range ids {
		x.t.remove(id)
	}
	return nil
}
