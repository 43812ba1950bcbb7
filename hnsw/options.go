package hnsw

import (
	"errors"
	"fmt"
	"math"
	"runtime"

	"github.com/cairndb/cairn/vector"
)

// The defaults of [Options]. Each zero field of an Options takes the value
// here (LevelMult and Workers are derived: 1/ln(M) and GOMAXPROCS).
const (
	// DefaultM is the paper's M, hnswlib's and faiss's default: 16 links per
	// node on the upper layers, 32 on layer 0.
	DefaultM = 16
	// DefaultEfConstruction is hnswlib's default efConstruction.
	DefaultEfConstruction = 200
	// DefaultEfSearch is the beam width of queries, chosen by measurement
	// (BenchmarkSearch, clustered 768-d, M=16, EfConstruction=200, k=10):
	// at n=10,000 ef=16 already gives recall@10 0.998; at n=100,000 ef=16
	// gives 0.924, ef=32 0.983 and ef=64 0.9975. 64 keeps recall above 0.95
	// with a margin for larger or harder collections, at about 1.5× the
	// latency of ef=32; pass a smaller SearchOptions.Ef where speed matters
	// more.
	DefaultEfSearch = 64
	// DefaultSeed seeds the level generator, so that a build from one
	// goroutine in one order is reproducible (hnswlib uses 100).
	DefaultSeed = 100
)

// Limits on [Options] fields, checked by [Options.Validate].
const (
	// MaxM bounds M: layer-0 lists hold 2·M links and a node's lists are
	// rewritten under its lock, so very large M only costs.
	MaxM = 1024
	// MaxEf bounds EfConstruction, EfSearch and [SearchOptions.Ef].
	MaxEf = 1 << 20
	// maxLevel caps the level drawn for a node; with LevelMult=1/ln(16) a
	// level above 31 has probability 16^-31.
	maxLevel = 31
)

// Options tune an [Index]. The zero value of each field means its default;
// the names are the paper's (Malkov & Yashunin, see the package doc). New
// copies the Options, so a caller may reuse or change its value afterwards.
type Options struct {
	// M is the number of links a node keeps on each upper layer (paper: M,
	// and Mmax); layer 0 keeps up to 2·M (Mmax0). Default 16. Larger M
	// raises recall at a given ef and suits high-dimensional or hard data,
	// at the cost of memory (about 8·M bytes per vector), build time and
	// per-query distance computations. Must be in [2, MaxM].
	M int

	// EfConstruction is the beam width used while inserting (paper:
	// efConstruction). Default 200. Larger values build a better graph
	// (higher recall at a given EfSearch) more slowly. Must be in
	// [1, MaxEf].
	EfConstruction int

	// EfSearch is the default beam width of queries (paper: ef), raised to
	// k when k is larger. Default [DefaultEfSearch]. Larger values raise
	// recall and latency; [Index.SearchWith] overrides it per query. Must be
	// in [1, MaxEf].
	EfSearch int

	// LevelMult is the level-generation multiplier (paper: mL): a node's
	// top layer is ⌊−ln(U)·mL⌋ for U uniform in (0, 1]. Default 1/ln(M),
	// the paper's choice, which makes each layer about M times smaller than
	// the one below. Must be positive and finite, and at most 10.
	LevelMult float64

	// Seed seeds the level generator. Default [DefaultSeed]; builds from
	// one goroutine that add the same vectors in the same order are
	// identical. (Zero means the default, so the seed 0 itself cannot be
	// chosen.)
	Seed uint64

	// Workers is the number of goroutines AddBatch and Track insert with.
	// Default runtime.GOMAXPROCS(0). Must not be negative.
	Workers int

	// Progress, if non-nil, is called during AddBatch and Track with the
	// number of vectors inserted so far and the total, every few hundred
	// inserts and once at the end. Calls are serialised (never two at
	// once) but may come from any goroutine; Progress must not call the
	// index.
	Progress func(done, total int)

	// TargetRecall, if not 0, is the recall@TargetK the index's queries
	// aim at, in place of a fixed EfSearch (which must then be left 0).
	// The index measures its own recall (see [Index.Calibrate]) and
	// searches with the smallest beam width that reached the target on its
	// sample, recalibrating in the background as it grows or shrinks; a
	// target that no beam width reaches, or reaches only by scoring half
	// of the vectors a query, and an index smaller than
	// [MinCalibrationLen], are searched exactly. [SearchOptions.Ef] still
	// overrides it per query. Must be in (0, 1], or 0 for none.
	TargetRecall float64

	// TargetK is the k of TargetRecall. Default [DefaultTargetK] (10).
	// Queries for more results widen the beam in proportion.
	TargetK int

	// Quantize chooses what the graph walks at query time: float32
	// vectors ([QuantizeNone], the default), int8 codes ([QuantizeInt8])
	// or 1-bit codes ([QuantizeBinary]), whose finalists are rescored
	// exactly (see [Quantize]). It is saved
	// with the graph by [Index.WriteTo]. Must be a defined Quantize value.
	Quantize Quantize

	// QuantizeDims, if not zero, makes the codes hold only the first
	// QuantizeDims components of each vector (renormalised under Cosine):
	// Matryoshka truncation, for embeddings trained so that a prefix ranks
	// nearly as the whole does (OpenAI's text-embedding-3, nomic-embed).
	// The walk estimates distances between prefixes; the finalists are
	// rescored on whole vectors, so returned distances stay exact. It
	// needs Quantize, must not exceed the store's dimension, and is saved
	// with the graph.
	QuantizeDims int
}

// withDefaults returns o with every zero field replaced by its default. A
// nil o gives all defaults.
func (o *Options) withDefaults() Options {
	var r Options
	if o != nil {
		r = *o
	}
	if r.M == 0 {
		r.M = DefaultM
	}
	if r.EfConstruction == 0 {
		r.EfConstruction = DefaultEfConstruction
	}
	if r.EfSearch == 0 {
		r.EfSearch = DefaultEfSearch
	}
	if r.LevelMult == 0 && r.M > 1 {
		r.LevelMult = 1 / math.Log(float64(r.M))
	}
	if r.Seed == 0 {
		r.Seed = DefaultSeed
	}
	if r.Workers == 0 {
		r.Workers = runtime.GOMAXPROCS(0)
	}
	if r.TargetK == 0 {
		r.TargetK = DefaultTargetK
	}
	return r
}

// Validate reports every out-of-range field of o at once, in one error
// wrapping [vector.ErrInvalidOptions]; zero fields are valid (they mean the
// default). A nil o is valid.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf(format, args...))
	}
	if o.M != 0 && (o.M < 2 || o.M > MaxM) {
		bad("M = %d, want 2..%d", o.M, MaxM)
	}
	if o.EfConstruction < 0 || o.EfConstruction > MaxEf {
		bad("EfConstruction = %d, want 1..%d", o.EfConstruction, MaxEf)
	}
	if o.EfSearch < 0 || o.EfSearch > MaxEf {
		bad("EfSearch = %d, want 1..%d", o.EfSearch, MaxEf)
	}
	if math.IsNaN(o.LevelMult) || o.LevelMult < 0 || o.LevelMult > 10 {
		bad("LevelMult = %v, want in (0, 10]", o.LevelMult)
	}
	if o.Workers < 0 {
		bad("Workers = %d, want >= 0", o.Workers)
	}
	o.validateTarget(bad)
	if !o.Quantize.valid() {
		bad("Quantize = %d, want QuantizeNone, QuantizeInt8 or QuantizeBinary", o.Quantize)
	}
	if o.QuantizeDims < 0 || o.QuantizeDims > 0 && o.Quantize == QuantizeNone {
		bad("QuantizeDims = %d, want 0, or a positive number with Quantize", o.QuantizeDims)
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("hnsw: %w: %w", vector.ErrInvalidOptions, errors.Join(errs...))
}

// SearchOptions are the per-query options of [Index.SearchWith]: the
// options every index understands, and HNSW's beam width. A search only
// reads them, so one value may serve concurrent searches.
type SearchOptions struct {
	vector.SearchOptions
	// Ef overrides [Options.EfSearch] for this query when positive; it is
	// raised to k when smaller. Must be in [0, MaxEf].
	Ef int
	// WalkDistances leaves the results of a walk on float32 vectors with
	// the distances the walk gave them, for a caller that scores again
	// what it reports: they can differ in the last bits from one scoring
	// of the same vector (the walk scores most nodes four at a time, the
	// kernel of [vector.InnerProduct4], and some one at a time), and so
	// depend on the walk's path. A walk on codes, and an exact search,
	// give exact distances all the same.
	WalkDistances bool
}
