package recall

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// DefaultDim is the dimension of the synthetic benchmark data sets: that
// of many text embedding models.
const DefaultDim = 768

// DefaultQueries is the number of queries of the benchmark data sets.
const DefaultQueries = 1000

// Centres is the number of cluster centres of [Clustered].
const Centres = 500

// ClusterNoise is the standard deviation, per component, of the Gaussian
// noise [Clustered] adds to a centre.
const ClusterNoise = 0.02

// Dataset is a set of base vectors to index and of queries to ask of them,
// under one metric. The id of a base vector in an index built from a
// Dataset is its position in Base, which is what ground truth and [At]
// speak of. A Dataset is read-only once made and safe for concurrent reads.
type Dataset struct {
	// Name identifies the data set in reports and file names, such as
	// "clustered-10000" (the dimension and seed are appended when they are
	// not the defaults, e.g. "uniform-1000-d32-s7").
	Name string
	// Dim is the dimension of every vector.
	Dim int
	// Metric is the metric the data set is meant to be searched under.
	Metric vector.Metric
	// Base holds the vectors to index; Queries the vectors to search for.
	Base, Queries []vector.Vector
}

// Streams of the generators. Every chunk of genChunk vectors has its own
// PCG stream, derived from the seed, the stream kind and the chunk number,
// so generation runs on every core, and vector i depends only on the seed,
// the dimension and i: the first n vectors of a larger set are the vectors
// of a smaller one, and the base does not depend on the number of queries.
const (
	streamCentres = 1
	streamBase    = 2
	streamQueries = 3

	genChunk = 256
)

// Uniform returns the "uniform" family: n base vectors and
// nq queries of dimension dim, each with every component drawn uniformly
// from [-1, 1) and then L2-normalised, under the Cosine metric. Queries are
// drawn independently of the base. The result is deterministic for (seed,
// n, nq, dim). It panics if n, nq or dim is negative or dim is zero, as
// make does for a negative length.
func Uniform(n, nq, dim int, seed int64) *Dataset {
	checkSizes(n, nq, dim)
	draw := func(r *rand.Rand, dst []float32) { drawUniform(r, dst) }
	return &Dataset{
		Name:    name("uniform", n, dim, seed),
		Dim:     dim,
		Metric:  vector.Cosine,
		Base:    generate(n, dim, seed, streamBase, draw),
		Queries: generate(nq, dim, seed, streamQueries, draw),
	}
}

// Clustered returns the "clustered" family: Centres centres,
// each drawn like a [Uniform] vector; every base vector and query picks a
// centre uniformly at random, adds Gaussian noise of standard deviation
// ClusterNoise to each component (a noise norm of about 0.55 at 768
// dimensions) and is L2-normalised. The metric is Cosine, queries are drawn
// independently of the base, and the result is deterministic for (seed, n,
// nq, dim). It panics on negative sizes or a zero dimension.
func Clustered(n, nq, dim int, seed int64) *Dataset {
	checkSizes(n, nq, dim)
	centres := generate(Centres, dim, seed, streamCentres, func(r *rand.Rand, dst []float32) { drawUniform(r, dst) })
	draw := func(r *rand.Rand, dst []float32) {
		c := centres[r.IntN(len(centres))]
		for i := range dst {
			dst[i] = float32(float64(c[i]) + r.NormFloat64()*ClusterNoise)
		}
		normalise(dst)
	}
	return &Dataset{
		Name:    name("clustered", n, dim, seed),
		Dim:     dim,
		Metric:  vector.Cosine,
		Base:    generate(n, dim, seed, streamBase, draw),
		Queries: generate(nq, dim, seed, streamQueries, draw),
	}
}

func checkSizes(n, nq, dim int) {
	if n < 0 || nq < 0 || dim <= 0 {
		panic(fmt.Sprintf("recall: invalid data set size n=%d nq=%d dim=%d", n, nq, dim))
	}
}

func name(family string, n, dim int, seed int64) string {
	s := fmt.Sprintf("%s-%d", family, n)
	if dim != DefaultDim {
		s += fmt.Sprintf("-d%d", dim)
	}
	if seed != 1 {
		s += fmt.Sprintf("-s%d", seed)
	}
	return s
}

// drawUniform fills dst with components uniform in [-1, 1), normalised to
// unit length in float64.
func drawUniform(r *rand.Rand, dst []float32) {
	for i := range dst {
		dst[i] = float32(2*r.Float64() - 1)
	}
	normalise(dst)
}

// normalise scales dst to unit length, computing the norm in float64 from
// the float32 values themselves so the result is as close to unit length as
// float32 allows. A zero vector (never drawn in practice) is left alone.
func normalise(dst []float32) {
	var sum float64
	for _, x := range dst {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := 1 / math.Sqrt(sum)
	for i, x := range dst {
		dst[i] = float32(float64(x) * inv)
	}
}

// stream returns the random source of one chunk of one kind of vector.
func stream(seed int64, kind, chunk int) *rand.Rand {
	return rand.New(rand.NewPCG(uint64(seed), splitmix(uint64(kind)<<40^uint64(chunk))))
}

// splitmix is the SplitMix64 finaliser, spreading nearby stream numbers
// over the whole 64-bit space.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// generate draws n vectors of dimension dim into one contiguous arena,
// chunk by chunk on every core.
func generate(n, dim int, seed int64, kind int, draw func(*rand.Rand, []float32)) []vector.Vector {
	data := make([]float32, n*dim)
	out := make([]vector.Vector, n)
	for i := range out {
		out[i] = data[i*dim : (i+1)*dim : (i+1)*dim]
	}
	chunks := (n + genChunk - 1) / genChunk
	var wg sync.WaitGroup
	next := make(chan int, chunks)
	for c := range chunks {
		next <- c
	}
	close(next)
	for range min(runtime.GOMAXPROCS(0), max(chunks, 1)) {
		wg.Go(func() {
			for c := range next {
				r := stream(seed, kind, c)
				for i := c * genChunk; i < min((c+1)*genChunk, n); i++ {
					draw(r, out[i])
				}
			}
		})
	}
	wg.Wait()
	return out
}
