package cairn

import (
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

// IndexKind selects how a collection is searched.
//
// It is a plain value.
type IndexKind uint8

const (
	// Auto searches exactly (as Flat) while the collection holds fewer than
	// its AutoThreshold items, and builds an HNSW graph once it reaches that
	// size: below it an exact scan is about as fast and never misses. The
	// graph is built, with every core, by the write that crosses the
	// threshold, before it returns; meanwhile queries go on with exact search
	// and other writes to the collection wait (BenchmarkCrossover reports the
	// build time). The graph is kept if the collection shrinks again, and a
	// reopened collection starts with the index its size calls for. Auto is
	// the default.
	//
	// With a recall target (HNSW.TargetRecall), the threshold is only where
	// Auto starts measuring, and left at zero it is
	// 500 ([hnsw.MinCalibrationLen], the smallest graph that calibrates), not 20,000: the graph built there
	// calibrates itself for the target, the approximate flat scan (QFlat) is built beside it, and each
	// that meets the target is timed against the exact scan, on the
	// queries the collection answered if it kept enough of them, else on
	// its own vectors held out. Auto uses the fastest: the graph, or else
	// one of the scans, in which case it drops the graph and measures
	// again, in the background, each time the collection has doubled (on
	// data without structure, such as uniform vectors, a scan usually stays
	// the faster way to a high recall), and once a scan that won on held-out
	// vectors has answered enough queries to measure on them ([Route]). A
	// file remembers the verdict: reopened before it has doubled since a
	// scan won, the collection goes on with that scan without building a
	// graph; before it has halved since the graph won, with its graph,
	// measuring nothing.
	Auto IndexKind = iota
	// Flat always searches exactly: every query scores every item (in
	// parallel, with SIMD kernels). Writes cost nothing beyond storing.
	Flat
	// HNSW searches approximately with a hierarchical navigable small
	// world graph (package hnsw): far faster than Flat on large
	// collections, at a small loss of recall tuned by its options.
	HNSW
	// QFlat searches with an approximate flat scan (package qflat): every
	// query scans int8 codes of all items, a quarter of the bytes of the
	// vectors, and rescores the best candidates exactly, so the distances
	// are exact and recall is near 1 even on data without structure, where
	// HNSW loses (uniform 768-d: recall@10 1.000 at the default rescore).
	// The codes are rebuilt from the items when the collection is opened
	// (nothing extra is stored) and as it grows or drifts, by the write
	// that finds them stale.
	QFlat
)

// DefaultAutoThreshold is the collection size at which an [Auto] index
// switches from exact search to HNSW.
//
// HNSW is faster per query from a few thousand items, but below the
// threshold an exact query is still quick, is exact on any data, and costs
// nothing to build, while HNSW at its default ef loses much recall on
// unstructured data. Past it the exact scan grows linearly while HNSW
// stays flat, and the one-off build is soon repaid (BENCHMARKS.md gives
// both sides, measured by BenchmarkCrossover). The threshold counts items,
// so at other dimensions the exact side scales with the dimension: set
// [CollectionConfig.AutoThreshold] for very small or very large vectors.
const DefaultAutoThreshold = 20000

// routedAutoThreshold is the AutoThreshold of an [Auto] collection with a
// recall target (HNSW.TargetRecall) created with AutoThreshold 0:
// the size at which it first measures the ways to its target (and then
// again, in the background, at each doubling while a scan wins). It is
// hnsw.MinCalibrationLen, the smallest graph that calibrates: on real embeddings a graph pays far
// below 20,000 items (the shared 768-d sets of about 1,000 vectors: 15 µs a
// query through the graph at recall@10 0.97, 55 µs for the exact scan), and
// where it does not (uniform data) the scan stays. The first measurement
// builds a graph, calibrates it and times the ways on the path of the
// write that crossed the size (other writes to the collection wait,
// queries go on): on a busy 2-core machine at 768-d, half a second at 500
// items; the later ones run in the background ([Route]). A collection
// stores the threshold it was created with, so one created with the old
// default keeps 20,000.
const routedAutoThreshold = hnsw.MinCalibrationLen

// String returns "auto", "flat", "hnsw" or "qflat".
func (k IndexKind) String() string {
	switch k {
	case Auto:
		return "auto"
	case Flat:
		return "flat"
	case HNSW:
		return "hnsw"
	case QFlat:
		return "qflat"
	}
	return fmt.Sprintf("IndexKind(%d)", uint8(k))
}

// CollectionConfig is the configuration of a collection, fixed when it is
// created and stored with it.
//
// It is a plain value: a collection keeps a copy of it.
type CollectionConfig struct {
	// Dim is the dimension of every embedding. Required.
	Dim int
	// Metric measures distance. Default vector.Cosine.
	Metric vector.Metric
	// Index selects exact or approximate search. Default Auto.
	Index IndexKind
	// AutoThreshold is the size at which an Auto index switches to HNSW,
	// or, with a recall target, first measures which index meets it
	// fastest. Default DefaultAutoThreshold, or 500
	// ([hnsw.MinCalibrationLen]) with HNSW.TargetRecall set. It is stored with the collection.
	AutoThreshold int
	// HNSW tunes the graph of an HNSW index, and of an Auto index once it
	// has switched; zero fields take package hnsw's defaults. Its Workers
	// and Progress fields must be left zero: they belong to a process,
	// not to a stored collection (see [Options].IndexWorkers).
	// HNSW.TargetRecall asks for a recall instead of an ef (see package
	// hnsw): the graph calibrates itself, [IndexInfo].Calibration
	// reports what it chose, and an Auto collection routes by it.
	// HNSW.Quantize = hnsw.QuantizeInt8 makes the graph walk int8 codes
	// of the embeddings (a quarter of the bytes), hnsw.QuantizeBinary
	// 1-bit codes (a thirty-second), and rescore its finalists exactly,
	// so scores stay exact (see [hnsw.Quantize]); HNSW.QuantizeDims codes
	// only the embeddings' first components (Matryoshka truncation); it
	// is off by default, stored with the collection, and an undefined
	// value is refused by Validate.
	HNSW hnsw.Options
	// QFlat tunes a QFlat index (the rescore factor, the quantizer's
	// training); zero fields take package qflat's defaults.
	QFlat qflat.Options
	// TTL, if positive, is the time-to-live of the collection's items: an
	// item written without an ExpiresAt expires TTL after the write that
	// stored it (an Upsert starts the time again). Zero means items do not
	// expire unless they say so; it must not be negative. Stored with the
	// collection. With KeepHistory, removing an expired item is a delete
	// that the history records: the item's last version stays there for
	// as long as the policy keeps versions, so data meant to be forgotten
	// needs a KeepHistory.For no longer than it may be kept.
	TTL time.Duration
	// KeepHistory, if set, keeps every version of an item that a write
	// replaces or deletes, for [Collection.History], [Collection.AsOf] and
	// [Collection.Restore]; nil keeps none. Stored with the collection.
	KeepHistory *HistoryPolicy
}

func (c CollectionConfig) withDefaults() CollectionConfig {
	c = c.clone()
	if c.Metric == 0 {
		c.Metric = vector.Cosine
	}
	if c.AutoThreshold == 0 {
		c.AutoThreshold = DefaultAutoThreshold
		if c.routed() {
			c.AutoThreshold = routedAutoThreshold
		}
	}
	return c
}

// clone returns c with a KeepHistory of its own, so that a caller who
// changes the policy it passed or got back does not change the collection's.
func (c CollectionConfig) clone() CollectionConfig {
	if c.KeepHistory != nil {
		h := *c.KeepHistory
		c.KeepHistory = &h
	}
	return c
}

// CheckEmbedding returns the error a write of embedding v to a collection
// of config c (after defaults) would give for it, the errors of
// [vector.Check], or nil: for a caller that makes the collection for its
// first write, so that a batch it would refuse leaves none made.
func (c CollectionConfig) CheckEmbedding(v []float32) error {
	c = c.withDefaults()
	return vector.Check(v, c.Dim, c.Metric)
}

// CheckItem returns the error a write of it alone to a collection of
// config c (after defaults) would give for it, as of now, or nil: its
// id, text, times, metadata and embedding (see
// [CollectionConfig.CheckEmbedding]; an item without one is refused,
// though a DB with an embedder would embed its text). It is for a caller
// that makes a collection or tenant for a write of embeddings, so that a
// batch the write would refuse leaves none made.
func (c CollectionConfig) CheckItem(it Item) error {
	if _, _, _, err := checkItem("item", 0, &it, time.Now().UnixNano(), c.TTL); err != nil {
		return err
	}
	if _, err := normalizeMetadata(it.Metadata); err != nil {
		return fmt.Errorf("cairn: item %q: %w", it.ID, err)
	}
	if err := c.CheckEmbedding(it.Embedding); err != nil {
		return fmt.Errorf("cairn: item %q: %w", it.ID, err)
	}
	return nil
}

// Validate reports every problem with c (after defaults are applied to
// zero fields), as an error wrapping [vector.ErrInvalidOptions].
func (c CollectionConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	if c.Dim <= 0 {
		errs = append(errs, fmt.Errorf("dimension %d must be positive", c.Dim))
	}
	if !c.Metric.Valid() {
		errs = append(errs, fmt.Errorf("invalid metric %v", c.Metric))
	}
	if c.Index > QFlat {
		errs = append(errs, fmt.Errorf("invalid index kind %v", c.Index))
	}
	if c.AutoThreshold < 0 {
		errs = append(errs, fmt.Errorf("auto threshold %d must not be negative", c.AutoThreshold))
	}
	if c.TTL < 0 {
		errs = append(errs, fmt.Errorf("TTL %v must not be negative", c.TTL))
	}
	if h := c.KeepHistory; h != nil && (h.For < 0 || h.Versions < 0) {
		errs = append(errs, fmt.Errorf("history policy %+v must not be negative", *h))
	}
	if c.HNSW.Workers != 0 || c.HNSW.Progress != nil {
		errs = append(errs, errors.New("HNSW.Workers and HNSW.Progress belong to a process, not to a stored collection: set Options.IndexWorkers and Options.IndexProgress"))
	}
	if err := c.HNSW.Validate(); err != nil {
		errs = append(errs, err)
	}
	if c.Dim > 0 && c.HNSW.QuantizeDims > c.Dim {
		errs = append(errs, fmt.Errorf("HNSW.QuantizeDims %d exceeds Dim %d", c.HNSW.QuantizeDims, c.Dim))
	}
	if err := c.QFlat.Validate(); err != nil {
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", vector.ErrInvalidOptions, errors.Join(errs...))
}

// newIndex returns the index of kind over s: Flat, HNSW or QFlat, never
// Auto.
func newIndex(kind IndexKind, cfg CollectionConfig, s vector.Store) (vector.Index, error) {
	switch kind {
	case Flat:
		return flat.New(s), nil
	case HNSW:
		return hnsw.New(s, &cfg.HNSW)
	case QFlat:
		return qflat.New(s, &cfg.QFlat)
	}
	return nil, fmt.Errorf("%w: index kind %v not available", vector.ErrInvalidOptions, kind)
}

// indexConfig returns the collection's configuration with this process's
// build options (Options.IndexWorkers and IndexProgress) in its HNSW
// fields: the configuration of the indexes it makes.
func (c *Collection) indexConfig() CollectionConfig {
	cfg := c.cfg
	cfg.HNSW.Workers = c.db.workers
	if p := c.db.progress; p != nil {
		name := c.name
		cfg.HNSW.Progress = func(done, total int) { p(name, done, total) }
	}
	return cfg
}

// routed reports whether the collection chooses its index by measuring
// the ways to its recall target (Auto with HNSW.TargetRecall).
func (c CollectionConfig) routed() bool { return c.Index == Auto && c.HNSW.TargetRecall != 0 }

// initialKind is the index a collection of n items starts with.
func (c CollectionConfig) initialKind(n int) IndexKind {
	switch c.Index {
	case Flat, HNSW, QFlat:
		return c.Index
	}
	if n >= c.AutoThreshold {
		return HNSW
	}
	return Flat
}
