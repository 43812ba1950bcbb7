package hnsw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// node is a dense internal slot number of the graph. It is a type of its own
// so that it cannot be mixed up with the external [vector.ID].
type node uint32

// freeLevel marks a slot that holds no node (never used, deleted, or
// reserved by an insert in progress).
const freeLevel = 0xFF

// Index is a Hierarchical Navigable Small World graph over the vectors of a
// [vector.Store]; it implements [vector.Index], [vector.BatchAdder],
// [vector.Tracker], [io.WriterTo] and [io.ReaderFrom].
//
// Index is safe for concurrent use: searches and inserts run in parallel
// with each other; ReadFrom, Stats and Verify wait for them and run alone;
// Delete, Untrack and Update run alone only to tombstone their nodes, a
// moment, and then repair the graph around earlier deletes beside them
// (one caller at a time), as Flush does; WriteTo repairs beside them and
// encodes alone.
type Index struct {
	store  vector.Store
	dim    int
	metric vector.Metric
	opts   Options
	m, m0  int // Mmax (upper layers) and Mmax0 (layer 0)
	// stride0 and strideU are the lengths of one neighbour list on layer 0
	// and on an upper layer: a count followed by Mmax0 or Mmax links.
	stride0, strideU int
	// slots is the store as a [vector.SlotStore], nil if it is not one.
	// Then node n is the store's slot n, and the graph finds a vector
	// from its node alone (vecp: slotBase holds the bases of the store's
	// blocks), with no copy of it and no pointer to load first; a deleted
	// node's slot is held from its tombstone to its unlinking, so that
	// no other vector takes it meanwhile. It costs a walk a cache miss on
	// the list of the node it expands, which it prefetches one node ahead
	// (walkPool), and saves dim·4 bytes a node against the inline copy.
	slots    vector.SlotStore
	slotBase []unsafe.Pointer
	held     *slotHolds // the slots held, with slots
	// inline is set, when the store has no slots, if the graph keeps its
	// own copy of each vector in the node's layer-0 row, beside its list
	// (dim ≤ inlineMaxDim, 512), as hnswlib's data_level0_memory_ does: at
	// low dimension the walk's time goes to cache misses around the
	// distance (the store's vector behind a pointer, the list in another
	// array) more than to the distance. The store stays the source of
	// truth: the copy is made from it at insert and at ReadFrom, and
	// counted in Stats.GraphBytes. Above inlineMaxDim the copy would
	// double the memory for little gain, and the row keeps a pointer to
	// the store's vector.
	inline bool
	// bcodes holds the codes that batches of inserts walk on
	// (buildcodes.go), nil if none; batches counts the batches running.
	// bcodes is set under idMu and mu held for reading, and replaced or
	// cleared under mu held for writing.
	bcodes  atomic.Pointer[buildCodes]
	batches atomic.Int32
	// sinceConnect counts the nodes linked since the last pass that
	// links unreachable nodes (connect.go).
	sinceConnect atomic.Int64
	// row0 is the length in uint32s of a slot's row in a page (rounded by
	// alignRow when the row holds a vector or a code); lnk0 is the offset
	// of its layer-0 list in the row (dim when inline, else 0).
	row0, lnk0 int
	rowBytes   uintptr // row0·4
	// pfLines is the number of cache lines of a vector to prefetch.
	pfLines int
	// codeLines is the number of cache lines of an int8 code to prefetch
	// (see quantize.go); 0 without quantization.
	codeLines int

	// mu guards the shape of the per-slot arrays below. Searches and
	// inserts hold it for reading; growing the arrays, deleting and
	// encoding hold it for writing, so they never overlap a search.
	mu sync.RWMutex

	// Per-slot state, in pages (see page). A node's vector, level and
	// upper lists are written once by its insert before the node is linked
	// anywhere (so readers that reach it through an atomic link load see
	// them); neighbour lists are written with atomic stores under the
	// node's lock and read with atomic loads.
	pages []*page
	// rowChunk is the unused rest of the array new pages' rows are
	// carved from (see growLocked); rowAlloc counts the bytes allocated
	// for rows so far.
	rowChunk []uint32
	rowAlloc int64
	locks    [lockStripes]sync.Mutex

	// idMu guards byID, free, next, live and pending.
	idMu    sync.Mutex
	byID    idMap
	free    []node // free slots below next, reused most recent first
	next    node   // slots ever handed out
	live    int    // linked nodes
	pending int    // slots reserved by inserts not yet linked

	// ep is the entry point: 0 when the graph is empty, otherwise
	// (top level + 1) << 32 | node. epMu serialises inserts that raise the
	// top level, as hnswlib's global lock does.
	ep   atomic.Uint64
	epMu sync.Mutex

	rngMu sync.Mutex
	rng   *rand.Rand

	scratch sync.Pool // *scratch

	// tombs lists the nodes deleted but not yet unlinked, oldest first;
	// the batch being unlinked, if any, is its prefix (see unlink.go).
	// Guarded by mu (written under mu held for writing), as are unl and
	// dead.
	tombs []node
	// unl is the batch of tombstones being unlinked, nil if none.
	unl *unlinking
	// dead marks the nodes of unl's batch; all false in between. It may
	// be shorter than the pages (see isDead).
	dead []bool
	// repairMu lets one goroutine at a time run unlink steps under the
	// shared lock.
	repairMu sync.Mutex

	// cal is the recall-target state (see calibrate.go).
	cal calibrator

	// quant is the int8 traversal state under Options.Quantize (see
	// quantize.go).
	quant quantState
}

// scratch is the per-search working memory, pooled so that a search does
// not allocate: the visited set, the two heaps, and buffers.
type scratch struct {
	vis   visited
	cands minHeap
	res   maxHeap
	w     []cand     // the result of a layer search, sorted ascending
	pool  []poolCand // the candidates of walkPool
	ent   []cand     // entry points of the next layer
	sel   []cand     // selected neighbours
	sels  [][]cand   // an insert's selected neighbours, by layer
	keep  []cand     // merged links of a new node
	kv    []*float32 // the vectors of the neighbours selectNeighbors keeps
	kd    []float32  // their distances to a candidate
	nb    []cand     // candidates when pruning a neighbour's list
	batch []node     // unvisited neighbours of the node being expanded
	vs    []*float32 // their vectors
	links []uint32   // links of a node to score
	dists []float32  // their distances to the query
	q     []float32
	pq    quant.Query // the query prepared for the codes (walk)
	top   vector.TopK // a walk's results (Results copies them out)
	// rescored counts the finalists the last int8 walk scored exactly.
	rescored int
	deadq    []node   // the deleted nodes a repair walks through
	snap     []uint32 // a copy of the list a repair replaces
	// skip, when skipOn, is a node a search walks around (the calibration's
	// held-out query node); off for every other search.
	skip   node
	skipOn bool
	// walkDists, set by a search, leaves a float32 walk's finalists
	// with the walk's distances (SearchOptions.WalkDistances).
	walkDists bool
	// An insert's candidates scored exactly after a walk on a batch's
	// codes (exactCands), their vectors and distances.
	exact   []cand
	exactVs []*float32
	exactDs []float32
}

// New returns an empty index over s, which it writes through to on Add and
// Delete. o may be nil for the defaults; invalid options give an error
// wrapping [vector.ErrInvalidOptions]. The store may already hold vectors:
// index them with [Index.Track], or load a saved graph with
// [Index.ReadFrom].
func New(s vector.Store, o *Options) (*Index, error) {
	if s == nil {
		return nil, fmt.Errorf("hnsw: %w: nil store", vector.ErrInvalidOptions)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	m := s.Metric()
	if !m.Valid() || s.Dim() <= 0 {
		return nil, fmt.Errorf("hnsw: %w: store has metric %v and dimension %d", vector.ErrInvalidOptions, m, s.Dim())
	}
	if o != nil && o.QuantizeDims > s.Dim() {
		return nil, fmt.Errorf("hnsw: %w: QuantizeDims %d of vectors of %d", vector.ErrInvalidOptions, o.QuantizeDims, s.Dim())
	}
	opts := o.withDefaults()
	ix := &Index{
		store:   s,
		dim:     s.Dim(),
		metric:  m,
		opts:    opts,
		m:       opts.M,
		m0:      2 * opts.M,
		stride0: 1 + 2*opts.M,
		strideU: 1 + opts.M,
		rng:     rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15)),
	}
	if ss, ok := s.(vector.SlotStore); ok && useSlots {
		ix.useStoreSlots(ss)
	}
	ix.setLayout()
	ix.scratch.New = func() any { return new(scratch) }
	return ix, nil
}

// useStoreSlots numbers the index's nodes by the slots of ss (see
// Index.slots), and has a cleanup release the slots it holds once the
// index is garbage.
func (ix *Index) useStoreSlots(ss vector.SlotStore) {
	ix.slots = ss
	if ix.held == nil {
		ix.held = &slotHolds{store: ss}
		runtime.AddCleanup(ix, (*slotHolds).releaseAll, ix.held)
	}
}

// setLayout derives the row layout from dim and stride0.
func (ix *Index) setLayout() {
	ix.pfLines = pfLines(ix.dim)
	ix.inline = ix.dim <= inlineMaxDim && ix.slots == nil
	ix.row0, ix.lnk0 = ix.stride0, 0
	if ix.inline {
		ix.row0, ix.lnk0 = alignRow(ix.dim+ix.stride0, false), ix.dim
	}
	if ix.opts.Quantize != QuantizeNone {
		// The row holds the code in place of the float32 copy
		// (quantize.go); the walk reads the code, not the vector.
		cw := codeWords(ix.coded(), ix.opts.Quantize)
		ix.inline = false
		ix.row0, ix.lnk0 = alignRow(cw+ix.stride0, true), cw
		ix.codeLines = min((ix.codeSize()+63)/64, 2)
	}
	ix.rowBytes = uintptr(ix.row0) * 4
}

// Options returns the options in effect, defaults filled in (Progress
// included).
func (ix *Index) Options() Options { return ix.opts }

// setBuild is hnswseam.SetBuild.
func (ix *Index) setBuild(workers int, progress func(done, total int)) {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ix.opts.Workers, ix.opts.Progress = workers, progress
}

// Len returns the number of indexed vectors.
func (ix *Index) Len() int {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	return ix.live
}

// reserve assigns slots to ids (none of which may be indexed), growing the
// arrays if needed, and returns with mu held for reading. On error it
// returns without holding mu. With the store's slots (see Index.slots) the
// slots are the store's for the ids, which it must hold; a slot still
// held by a deleted node (an id untracked and tracked again before its
// node was unlinked) is freed first by unlinking every deleted node.
func (ix *Index) reserve(ctx context.Context, ids []vector.ID) ([]node, error) {
	var want []node
	if ix.slots != nil {
		want = make([]node, len(ids))
		for i, id := range ids {
			s, ok := ix.slots.Slot(id)
			if !ok {
				if _, err := ix.store.Get(id); errors.Is(err, vector.ErrClosed) {
					return nil, err // closed since the caller put it there
				}
				return nil, fmt.Errorf("item %d (id %d): %w: not in the store", i, id, vector.ErrNotFound)
			}
			want[i] = node(s)
		}
	}
	flushed := false
	for {
		ix.mu.RLock()
		ix.idMu.Lock()
		for i, id := range ids {
			if _, ok := ix.idGet(id); ok {
				ix.idMu.Unlock()
				ix.mu.RUnlock()
				return nil, fmt.Errorf("item %d (id %d): %w", i, id, vector.ErrDuplicateID)
			}
		}
		need, busy := ix.slotsNeeded(ids, want)
		if need > math.MaxUint32-1 {
			ix.idMu.Unlock()
			ix.mu.RUnlock()
			return nil, fmt.Errorf("%w: index full", vector.ErrInvalidOptions)
		}
		if busy >= 0 {
			ix.idMu.Unlock()
			ix.mu.RUnlock()
			if flushed {
				return nil, fmt.Errorf("item %d (id %d): %w: its slot %d holds another node", busy, ids[busy], vector.ErrCorrupt, want[busy])
			}
			if err := ix.unlinkSome(ctx, 0, true); err != nil {
				return nil, err
			}
			flushed = true
			continue
		}
		room := need <= ix.capacity() && (ix.slots == nil || need <= len(ix.slotBase)<<vector.SlotBlockShift)
		if room {
			slots := want
			if slots == nil {
				slots = make([]node, len(ids))
				for i := range slots {
					if n := len(ix.free); n > 0 {
						slots[i] = ix.free[n-1]
						ix.free = ix.free[:n-1]
					} else {
						slots[i] = ix.next
						ix.next++
					}
				}
			}
			for i, s := range slots {
				ix.next = max(ix.next, s+1)
				ix.setID(s, ids[i])
				ix.idPut(s)
			}
			ix.pending += len(ids)
			ix.idMu.Unlock()
			return slots, nil
		}
		ix.idMu.Unlock()
		ix.mu.RUnlock()
		ix.mu.Lock()
		err := ix.coverLocked(need)
		ix.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

// slotsNeeded returns the number of slots the index must have room for to
// take ids at the store's slots want (nil without them), and the position
// of an id whose slot another node holds still, -1 if none. idMu is held.
func (ix *Index) slotsNeeded(ids []vector.ID, want []node) (need, busy int) {
	if want == nil {
		return int(ix.next) + max(0, len(ids)-len(ix.free)), -1
	}
	busy = -1
	for i, s := range want {
		need = max(need, int(s)+1)
		if busy < 0 && int(s) < ix.capacity() && ix.levelOf(s) != freeLevel {
			busy = i
		}
	}
	return need, busy
}

// release undoes reserve for slots that were never linked; mu is held.
func (ix *Index) release(ids []vector.ID, slots []node) {
	ix.idMu.Lock()
	defer ix.idMu.Unlock()
	ix.pending -= len(slots)
	for i, s := range slots {
		ix.idDelete(ids[i])
		ix.setID(s, 0)
		ix.setVec(s, nil)
		ix.freeSlot(s)
	}
}

// freeSlot lets reserve hand slot s out again: the index's own slots go
// on its free list; the store's are the store's to hand out (see
// Index.slots). idMu is held.
func (ix *Index) freeSlot(s node) {
	if ix.slots == nil {
		ix.free = append(ix.free, s)
	}
}

// randomLevel draws a node's top layer, ⌊−ln(U)·mL⌋ (paper, Algorithm 1).
func (ix *Index) randomLevel() int {
	ix.rngMu.Lock()
	u := 1 - ix.rng.Float64() // in (0, 1]
	ix.rngMu.Unlock()
	l := -math.Log(u) * ix.opts.LevelMult
	if l >= maxLevel {
		return maxLevel
	}
	return int(l)
}

// Add stores v under id in the store and links it into the graph. It
// returns an error wrapping [vector.ErrDuplicateID] if id is present and the
// validation errors of [vector.Check]; on error nothing changes, but for an
// Add cut short by the store's Close (it fails with [vector.ErrClosed]),
// whose vector may have reached the store, as one cut short by a crash.
func (ix *Index) Add(ctx context.Context, id vector.ID, v vector.Vector) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: add %d: %w", id, err)
	}
	if err := vector.Check(v, ix.dim, ix.metric); err != nil {
		return fmt.Errorf("hnsw: add %d: %w", id, err)
	}
	ids := []vector.ID{id}
	defer ix.refreshCodes(ctx) // after mu is released
	// The store first: with its slots, it picks the node's.
	if err := ix.store.Put(ctx, id, v); err != nil {
		return fmt.Errorf("hnsw: add %d: %w", id, err)
	}
	slots, err := ix.reserve(ctx, ids)
	if err != nil {
		_ = ix.store.Delete(context.WithoutCancel(ctx), id)
		return fmt.Errorf("hnsw: add %d: %w", id, err)
	}
	connect := false
	defer func() { // after mu is released
		if connect {
			ix.connect(false)
		}
	}()
	defer ix.mu.RUnlock()
	sv, err := ix.storedVector(id)
	if err != nil {
		ix.release(ids, slots)
		_ = ix.store.Delete(context.WithoutCancel(ctx), id)
		return fmt.Errorf("hnsw: add %d: %w", id, err)
	}
	ix.idMu.Lock()
	ix.setVec(slots[0], unsafe.SliceData(sv))
	ix.idMu.Unlock()
	sc := ix.getScratch()
	ix.insert(sc, slots[0], sv, ix.randomLevel())
	ix.noteInserted(slots[0])
	ix.scratch.Put(sc)
	ix.idMu.Lock()
	ix.live++
	ix.pending--
	live := ix.live
	ix.idMu.Unlock()
	ix.noteChange(0)
	connect = ix.noteLinked(1, live)
	return nil
}

// AddBatch stores and indexes many vectors, inserting with
// [Options.Workers] goroutines. Validation is all or nothing: if any vector
// is invalid, any id is repeated or already present, nothing is added. If
// ctx is cancelled midway, the vectors linked so far stay indexed and
// stored, the others are removed from the store again, and ctx's error is
// returned.
//
// A batch of at least 1,024 vectors, and an eighth of the index, at
// dimension 192 or more first makes int8 codes of every node (about
// d + 4 bytes each, in a table with room for twice the slots), and its
// inserts walk the graph on them, choosing neighbours on exact distances:
// builds take 0.6–0.8 of the time at equal recall. The codes stay for the
// batches and adds that follow, and the first search or [Index.Flush]
// drops them ([Memory].Build counts them meanwhile). An index with
// [Options].Quantize walks the codes of its rows instead, once trained.
func (ix *Index) AddBatch(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if len(ids) != len(vs) {
		return fmt.Errorf("hnsw: add batch: %w: %d ids for %d vectors", vector.ErrInvalidOptions, len(ids), len(vs))
	}
	seen := make(map[vector.ID]struct{}, len(ids))
	for i, v := range vs {
		if err := vector.Check(v, ix.dim, ix.metric); err != nil {
			return fmt.Errorf("hnsw: add batch: item %d (id %d): %w", i, ids[i], err)
		}
		if _, dup := seen[ids[i]]; dup {
			return fmt.Errorf("hnsw: add batch: item %d (id %d): %w (repeated in batch)", i, ids[i], vector.ErrDuplicateID)
		}
		seen[ids[i]] = struct{}{}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: add batch: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	// The store first: with its slots, it picks the nodes'.
	if err := ix.putAll(ctx, ids, vs); err != nil {
		return fmt.Errorf("hnsw: add batch: %w", err)
	}
	slots, err := ix.reserve(ctx, ids)
	if err != nil {
		for _, id := range ids {
			_ = ix.store.Delete(context.WithoutCancel(ctx), id)
		}
		return fmt.Errorf("hnsw: add batch: %w", err)
	}
	ix.mu.RUnlock()
	defer ix.noteChange(0)
	defer ix.refreshCodes(ctx)
	ix.refreshCodes(ctx) // the batch walks the rows' codes: fresh ones
	if err := ix.link(ctx, ids, slots, true); err != nil {
		return fmt.Errorf("hnsw: add batch: %w", err)
	}
	return nil
}

// putAll writes vs to the store, all or nothing.
func (ix *Index) putAll(ctx context.Context, ids []vector.ID, vs []vector.Vector) error {
	if bp, ok := ix.store.(vector.BatchPutter); ok {
		return bp.PutBatch(ctx, ids, vs)
	}
	for i, id := range ids {
		if err := ix.store.Put(ctx, id, vs[i]); err != nil {
			for _, done := range ids[:i] {
				_ = ix.store.Delete(context.WithoutCancel(ctx), done)
			}
			return fmt.Errorf("item %d (id %d): %w", i, id, err)
		}
	}
	return nil
}

// Track indexes vectors already in the store, with [Options.Workers]
// goroutines; see [vector.Tracker]. It returns an error wrapping
// [vector.ErrNotFound] if the store lacks an id and [vector.ErrDuplicateID]
// if an id is already indexed or repeated, and then indexes nothing. If ctx
// is cancelled midway, the vectors linked so far stay indexed. A large
// batch walks on codes as one of AddBatch does.
func (ix *Index) Track(ctx context.Context, ids []vector.ID) error {
	seen := make(map[vector.ID]struct{}, len(ids))
	for i, id := range ids {
		if _, dup := seen[id]; dup {
			return fmt.Errorf("hnsw: track: item %d (id %d): %w (repeated)", i, id, vector.ErrDuplicateID)
		}
		seen[id] = struct{}{}
		if _, err := ix.store.Get(id); err != nil {
			return fmt.Errorf("hnsw: track: item %d (id %d): %w", i, id, err)
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: track: %w", err)
	}
	if len(ids) == 0 {
		return nil
	}
	slots, err := ix.reserve(ctx, ids)
	if err != nil {
		return fmt.Errorf("hnsw: track: %w", err)
	}
	ix.mu.RUnlock()
	defer ix.noteChange(0)
	defer ix.refreshCodes(ctx)
	ix.refreshCodes(ctx) // the batch walks the rows' codes: fresh ones
	if err := ix.link(ctx, ids, slots, false); err != nil {
		return fmt.Errorf("hnsw: track: %w", err)
	}
	return nil
}

// link inserts the reserved slots in parallel. mu is not held: each insert
// holds it for reading, so that a writer (Delete, growth for another Add)
// waits for one insert, not for the whole batch, and searches are never
// held up behind it for long. On cancellation the slots not yet linked are
// released (and, if owned, their vectors deleted from the store).
func (ix *Index) link(ctx context.Context, ids []vector.ID, slots []node, owned bool) error {
	vecs := make([][]float32, len(ids))
	for i, id := range ids {
		v, err := ix.storedVector(id)
		if err != nil {
			ix.mu.RLock()
			ix.release(ids, slots)
			ix.mu.RUnlock()
			if owned {
				for _, id := range ids {
					_ = ix.store.Delete(context.WithoutCancel(ctx), id)
				}
			}
			return fmt.Errorf("item %d (id %d): %w", i, id, err)
		}
		vecs[i] = v
	}
	ix.mu.RLock()
	ix.idMu.Lock()
	for i, s := range slots {
		ix.setVec(s, unsafe.SliceData(vecs[i]))
	}
	ix.idMu.Unlock()
	ix.startBatch(ctx, len(ids))
	ix.mu.RUnlock()
	defer ix.endBatch()
	levels := make([]int, len(ids))
	for i := range levels {
		levels[i] = ix.randomLevel()
	}
	workers := min(ix.opts.Workers, len(ids))
	var (
		nextItem atomic.Int64
		linked   = make([]bool, len(ids))
		progMu   sync.Mutex
		done     int
		wg       sync.WaitGroup
	)
	report := func(n int) {
		if ix.opts.Progress == nil {
			return
		}
		progMu.Lock()
		done += n
		ix.opts.Progress(done, len(ids))
		progMu.Unlock()
	}
	const chunk = 256 // inserts between checks of ctx and progress reports
	for range workers {
		wg.Go(func() {
			sc := ix.getScratch()
			defer ix.scratch.Put(sc)
			count := 0
			for {
				i := int(nextItem.Add(1) - 1)
				if i >= len(ids) {
					break
				}
				if count%chunk == 0 && ctx.Err() != nil {
					break
				}
				ix.mu.RLock()
				ix.insert(sc, slots[i], vecs[i], levels[i])
				ix.noteInserted(slots[i])
				ix.idMu.Lock()
				ix.live++
				ix.pending--
				ix.idMu.Unlock()
				ix.mu.RUnlock()
				linked[i] = true
				count++
				if count%chunk == 0 {
					report(chunk)
				}
			}
			report(count % chunk)
		})
	}
	wg.Wait()
	var restIDs []vector.ID
	var restSlots []node
	for i, ok := range linked {
		if !ok {
			restIDs = append(restIDs, ids[i])
			restSlots = append(restSlots, slots[i])
		}
	}
	if n := len(ids) - len(restIDs); n > 0 && ix.noteLinked(n, ix.liveCount()) {
		ix.connect(false)
	}
	if len(restIDs) > 0 {
		ix.mu.RLock()
		ix.release(restIDs, restSlots)
		ix.mu.RUnlock()
		if owned {
			for _, id := range restIDs {
				_ = ix.store.Delete(context.WithoutCancel(ctx), id)
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes id from the store, then from the index; its slot is
// reused once the graph is repaired. It returns an error wrapping
// [vector.ErrNotFound] if id is not indexed (or its batch insert has not
// linked it yet); if the store refuses, nothing changes.
//
// The node is tombstoned, under the exclusive lock for a moment (running
// searches and inserts are waited for, new ones wait): searches no longer
// return it but still walk through it. The graph around tombstones is
// repaired in batches, once they make up an eighth of the graph, beside
// running searches and inserts (see [Index.Flush]); until then each holds
// its slot and its vector: the store's slot, held from reuse (over a
// [vector.SlotStore]), or a copy (dim·4 bytes, counted in
// [Stats].GraphBytes; the row's own at dimension ≤ 512, no more). The
// deletes that follow a batch's start do its work, a bounded share each,
// in the caller's goroutine and under the shared lock (see unlink.go): a
// batch costs one O(n·M) scan plus the repair of every node linking to
// one of its nodes, so a Delete costs on average about 16 nodes scanned
// and, in a dense graph, as many repaired. Should deletes come faster
// than that, a Delete that finds a second batch waiting finishes the
// first.
func (ix *Index) Delete(ctx context.Context, id vector.ID) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: delete %d: %w", id, err)
	}
	ix.mu.Lock()
	s, ok := ix.idGet(id)
	if !ok || ix.levelOf(s) == freeLevel {
		ix.mu.Unlock()
		// Absent, or reserved by a batch insert that has not linked it
		// yet.
		return fmt.Errorf("hnsw: delete %d: %w", id, vector.ErrNotFound)
	}
	ix.keepVecLocked(s) // before the store may hand its memory on
	if err := ix.store.Delete(ctx, id); err != nil {
		ix.dropVecLocked(s)
		ix.mu.Unlock()
		return fmt.Errorf("hnsw: delete %d: %w", id, err)
	}
	ix.tombstoneLocked(s)
	ix.mu.Unlock()
	_ = ix.unlinkSome(ctx, 1, false) // fails only for all
	ix.noteChange(1)
	return nil
}

// Untrack removes ids from the index but leaves them in the store; see
// [vector.Tracker]. It returns an error wrapping [vector.ErrNotFound],
// and removes nothing, if an id is not indexed. The nodes are tombstoned
// under the exclusive lock, O(len(ids)), and repaired in batches under
// the shared lock, as by [Index.Delete]; an Untrack of many ids does the
// work of the batches they fill before it returns.
func (ix *Index) Untrack(ctx context.Context, ids []vector.ID) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: untrack: %w", err)
	}
	ix.mu.Lock()
	slots := make([]node, len(ids))
	seen := make(map[vector.ID]struct{}, len(ids))
	for i, id := range ids {
		s, ok := ix.idGet(id)
		if _, dup := seen[id]; !ok || dup || ix.levelOf(s) == freeLevel {
			ix.mu.Unlock()
			return fmt.Errorf("hnsw: untrack: item %d (id %d): %w", i, id, vector.ErrNotFound)
		}
		seen[id] = struct{}{}
		slots[i] = s
	}
	for _, s := range slots {
		ix.keepVecLocked(s)
		ix.tombstoneLocked(s)
	}
	ix.mu.Unlock()
	_ = ix.unlinkSome(ctx, len(slots), false) // fails only for all
	ix.noteChange(len(slots))
	return nil
}

// Flush repairs the graph around every deleted node not yet unlinked and
// frees their slots, drops the codes large batches walk on (see
// [Index.AddBatch]), and links every node no search could reach (see
// connect.go), leaving the index at its best: Deletes do the repairs
// on their own in batches, the first search drops the codes, inserts
// link the nodes cut off once an eighth of the index is new; Flush is
// for when the writes are done (WriteTo flushes first). It runs beside
// searches and inserts, holding the exclusive lock only for moments, as
// Delete does, and for one pass over the graph's lists at the end;
// deletes made while it runs may be left for later. It returns ctx's
// error if ctx ends first, with the batches before done.
func (ix *Index) Flush(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("hnsw: flush: %w", err)
	}
	ix.dropBuildCodes()
	if err := ix.unlinkSome(ctx, 0, true); err != nil {
		return err
	}
	ix.connect(true)
	return nil
}

// tombstoneLocked deletes node s from the index's view without unlinking
// it: its id leaves the id map (so it may be added again at once), it
// stops counting as live and searches stop returning it. Searches keep
// routing through it until its batch is unlinked, so its vector must
// outlive the store's: keepVecLocked has kept it. mu is held for writing.
func (ix *Index) tombstoneLocked(s node) {
	ix.idMu.Lock()
	ix.idDelete(ix.idOf(s))
	ix.setID(s, 0)
	ix.setTomb(s, true)
	ix.live--
	ix.idMu.Unlock()
	ix.tombs = append(ix.tombs, s)
}

// keepVecLocked makes node s's vector outlive the store's, which may hand
// its memory to another vector once it is deleted: it holds the store's
// slot (see Index.slots), or copies the vector (unless it is inline, a
// copy already). dropVecLocked undoes it, once s is unlinked or if the
// store refuses the delete. mu is held for writing.
func (ix *Index) keepVecLocked(s node) {
	switch {
	case ix.slots != nil:
		ix.held.hold(s)
	case !ix.inline:
		ix.setVec(s, unsafe.SliceData(slices.Clone(ix.vec(s))))
	}
}

// dropVecLocked undoes keepVecLocked: it releases the store's slot, and
// leaves a copy to the garbage collector (the caller, unlinking s, sets
// its vector to nil; a refused delete keeps the copy, the same floats).
func (ix *Index) dropVecLocked(s node) {
	if ix.slots != nil {
		ix.held.release(s)
	}
}

// Update replaces the vector of id: a Delete then an Add under the same id.
// It returns an error wrapping [vector.ErrNotFound] if id is not indexed,
// and the validation errors of [vector.Check], in which case nothing
// changes.
func (ix *Index) Update(ctx context.Context, id vector.ID, v vector.Vector) error {
	if err := vector.Check(v, ix.dim, ix.metric); err != nil {
		return fmt.Errorf("hnsw: update %d: %w", id, err)
	}
	if err := ix.Delete(ctx, id); err != nil {
		return err
	}
	return ix.Add(context.WithoutCancel(ctx), id, v)
}

func (ix *Index) getScratch() *scratch { return ix.scratch.Get().(*scratch) }

// entry returns the entry point and its level; ok is false if the graph is
// empty.
func (ix *Index) entry() (n node, top int, ok bool) {
	e := ix.ep.Load()
	if e == 0 {
		return 0, 0, false
	}
	return node(uint32(e)), int(e>>32) - 1, true
}

func packEntry(n node, top int) uint64 { return uint64(top+1)<<32 | uint64(n) }

// pfLines returns how many cache lines of a vector the walk prefetches:
// two, enough to start the fetch of every neighbour's vector at once, after
// which the hardware prefetcher streams the rest. Measured on clustered
// 768-d, n=100,000 (BenchmarkSearch, ef=32 and 128): no prefetch 175–180 µs
// and 400–420 µs at the median; one or two lines 130–154 and 320–340; four
// or eight lines no better, and eight sometimes worse (the core's line-fill
// buffers run out).
func pfLines(dim int) int {
	return min((dim*4+63)/64, 2)
}

// vec returns node n's vector. The index keeps only a pointer to the
// store's slice (8 bytes a node rather than a 24-byte slice header); the
// store guarantees the slice stays valid until the vector is deleted.
func (ix *Index) vec(n node) []float32 { return unsafe.Slice(ix.vecp(n), ix.dim) }

// storedVector returns the store's vector of id, checking its length: the
// index reads dim floats from it without bounds checks.
func (ix *Index) storedVector(id vector.ID) ([]float32, error) {
	v, err := ix.store.Get(id)
	if err != nil {
		return nil, err
	}
	if len(v) != ix.dim {
		return nil, fmt.Errorf("%w: store returned %d floats for id %d, want %d", vector.ErrDimensionMismatch, len(v), id, ix.dim)
	}
	return v, nil
}

// dist is the distance under the index's metric between two prepared
// vectors of length dim. It calls the kernels directly rather than through
// a function value (Metric.DistanceFunc): under Cosine the vectors are unit
// length, so the distance is 1 − a·b; under Dot it is −a·b.
func (ix *Index) dist(a, b []float32) float32 {
	switch ix.metric {
	case vector.Cosine:
		return 1 - vector.InnerProduct(a, b)
	case vector.Dot:
		return -vector.InnerProduct(a, b)
	}
	return vector.SquaredL2(a, b)
}
