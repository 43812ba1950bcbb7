package quant_test

import (
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

var metrics = []vector.Metric{vector.Cosine, vector.Dot, vector.L2}

func randVecs(r *rand.Rand, n, dim int) []vector.Vector {
	vs := make([]vector.Vector, n)
	for i := range vs {
		vs[i] = make(vector.Vector, dim)
		for j := range vs[i] {
			vs[i][j] = 2*r.Float32() - 1
		}
	}
	return vs
}

func storeOf(t testing.TB, dim int, m vector.Metric, vs []vector.Vector) *vector.MemStore {
	t.Helper()
	s, err := vector.NewMemStore(dim, m)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]vector.ID, len(vs))
	for i := range ids {
		ids[i] = vector.ID(i)
	}
	if err := s.PutBatch(context.Background(), ids, vs); err != nil {
		t.Fatal(err)
	}
	return s
}

func train(t testing.TB, s vector.Store, opts *quant.TrainOptions) *quant.Quantizer {
	t.Helper()
	q, err := quant.Train(context.Background(), s, opts)
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func encode(t testing.TB, q *quant.Quantizer, v vector.Vector) []byte {
	t.Helper()
	c := make([]byte, q.CodeSize())
	if _, err := q.Encode(c, v); err != nil {
		t.Fatal(err)
	}
	return c
}

// refEstimate computes the documented rule in float64 from the code bytes
// and the quantizer's ranges, with the query's weights unrounded: the
// distance to the reconstruction x̂, but with the exact ‖x‖² under L2.
func refEstimate(q *quant.Quantizer, v vector.Vector, code []byte) float64 {
	qv := slices.Clone(v)
	if q.Metric() == vector.Cosine {
		unit(qv)
	}
	var ip, qq float64
	for j, x := range qv {
		lo, hi := q.Range(j)
		xh := float64(lo) + (float64(hi)-float64(lo))/255*float64(code[j])
		ip += float64(x) * xh
		qq += float64(x) * float64(x)
	}
	switch q.Metric() {
	case vector.Cosine:
		return 1 - ip
	case vector.Dot:
		return -ip
	}
	norm := float64(math.Float32frombits(binary.LittleEndian.Uint32(code[q.Dim():])))
	return qq - 2*ip + norm
}

func unit(v vector.Vector) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	for i := range v {
		v[i] = float32(float64(v[i]) / math.Sqrt(s))
	}
}

// TestEncodeError checks that every component in its range comes back
// within half a step, that the code ends with ‖x‖², and that nothing in
// range is counted as clipped.
func TestEncodeError(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, m := range metrics {
		for _, dim := range []int{1, 3, 17, 100, 768} {
			vs := randVecs(r, 300, dim)
			s := storeOf(t, dim, m, vs)
			q := train(t, s, &quant.TrainOptions{Clip: -1})
			err := s.ForEach(func(_ vector.ID, v vector.Vector) error {
				c := make([]byte, q.CodeSize())
				clipped, err := q.Encode(c, v)
				if err != nil || clipped != 0 {
					t.Fatalf("%v dim %d: Encode = %d clipped, %v; want 0 with min/max ranges", m, dim, clipped, err)
				}
				var sum float64
				for j, x := range v {
					lo, hi := q.Range(j)
					step := (float64(hi) - float64(lo)) / 255
					xh := float64(lo) + step*float64(c[j])
					if d := math.Abs(xh - float64(x)); d > step/2*1.001+1e-7 {
						t.Fatalf("%v dim %d: component %d = %v decodes to %v, step %v", m, dim, j, x, xh, step)
					}
					sum += float64(x) * float64(x)
				}
				norm := math.Float32frombits(binary.LittleEndian.Uint32(c[dim:]))
				if math.Abs(float64(norm)-sum) > 1e-5*sum {
					t.Fatalf("%v dim %d: norm %v, want %v", m, dim, norm, sum)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestDistanceMatchesRule checks Distance, Distance4 and Distances against
// the rule in float64: they differ only by the rounding of the query's
// weights to int8, which is bounded by half a weight unit per component.
func TestDistanceMatchesRule(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range metrics {
		for _, dim := range []int{1, 7, 16, 33, 384, 769} {
			vs := randVecs(r, 200, dim)
			q := train(t, storeOf(t, dim, m, vs), nil)
			codes := make([]byte, 0, len(vs)*q.CodeSize())
			for _, v := range vs {
				codes = append(codes, encode(t, q, v)...)
			}
			for _, qv := range randVecs(r, 5, dim) {
				p, err := q.Prepare(qv)
				if err != nil {
					t.Fatal(err)
				}
				batch := make([]float32, len(vs))
				p.Distances(codes, batch)
				cs := q.CodeSize()
				// Bound: Σ|δⱼ|·cⱼ with |δⱼ| ≤ α/2 = max|wⱼ|/128 and cⱼ ≤ 255,
				// doubled under L2; plus float32 rounding.
				var wmax, qn float64
				for j, x := range qv {
					lo, hi := q.Range(j)
					wmax = max(wmax, math.Abs(float64(x))*(float64(hi)-float64(lo))/255)
					qn += float64(x) * float64(x)
				}
				if m == vector.Cosine {
					wmax /= math.Sqrt(qn)
				}
				tol := 2*float64(dim)*wmax/128*255 + 1e-4*(1+qn)
				for i := range vs {
					code := codes[i*cs : (i+1)*cs]
					want := refEstimate(q, qv, code)
					got := p.Distance(code)
					if math.Abs(float64(got)-want) > tol {
						t.Fatalf("%v dim %d: Distance = %v, rule %v ± %v", m, dim, got, want, tol)
					}
					if batch[i] != got {
						t.Fatalf("%v dim %d: Distances[%d] = %v, Distance %v", m, dim, i, batch[i], got)
					}
				}
				four := p.Distance4(codes[:cs], codes[cs:2*cs], codes[2*cs:3*cs], codes[3*cs:4*cs])
				if !slices.Equal(four[:], batch[:4]) {
					t.Fatalf("%v dim %d: Distance4 = %v, Distances %v", m, dim, four, batch[:4])
				}
			}
		}
	}
}

// TestEstimateRanks checks that the estimate ranks like the true distance
// on unstructured 768-d data, the hardest case: the true top 10 are among
// the estimate's top 40 nearly always.
func TestEstimateRanks(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const dim, n = 768, 2000
	for _, m := range metrics {
		vs := randVecs(r, n, dim)
		s := storeOf(t, dim, m, vs)
		q := train(t, s, &quant.TrainOptions{Sample: 1000})
		codes := make([][]byte, n)
		for i := range vs {
			v, _ := s.Get(vector.ID(i))
			codes[i] = encode(t, q, v)
		}
		hit, total := 0, 0
		for _, qv := range randVecs(r, 10, dim) {
			p, err := q.Prepare(qv)
			if err != nil {
				t.Fatal(err)
			}
			pq, _ := vector.Prepare(qv, dim, m)
			dist := m.DistanceFunc()
			exact := make([]int, n)
			est := make([]int, n)
			ed := make([]float64, n)
			qd := make([]float32, n)
			for i := range n {
				exact[i], est[i] = i, i
				v, _ := s.Get(vector.ID(i))
				ed[i] = float64(dist(pq, v))
				qd[i] = p.Distance(codes[i])
			}
			slices.SortFunc(exact, func(a, b int) int { return cmpF(ed[a], ed[b]) })
			slices.SortFunc(est, func(a, b int) int { return cmpF(float64(qd[a]), float64(qd[b])) })
			top := map[int]bool{}
			for _, i := range est[:40] {
				top[i] = true
			}
			for _, i := range exact[:10] {
				if top[i] {
					hit++
				}
				total++
			}
		}
		if rec := float64(hit) / float64(total); rec < 0.99 {
			t.Errorf("%v: true top 10 within the estimate's top 40: %.3f, want >= 0.99", m, rec)
		}
	}
}

func cmpF(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestClipOutliers checks that clipping at quantiles keeps one outlier
// from widening a range, and that Encode counts what it clamps.
func TestClipOutliers(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	vs := randVecs(r, 2000, 8)
	vs[17][3] = 1000
	s := storeOf(t, 8, vector.L2, vs)
	q := train(t, s, nil)
	if _, hi := q.Range(3); hi > 1.01 {
		t.Errorf("range of the dimension with an outlier ends at %v, want about 1", hi)
	}
	clipped, err := q.Encode(make([]byte, q.CodeSize()), vs[17])
	if err != nil || clipped < 1 {
		t.Errorf("Encode(outlier) = %d clipped, %v; want at least 1", clipped, err)
	}
	mm := train(t, s, &quant.TrainOptions{Clip: -1})
	if _, hi := mm.Range(3); math.Abs(float64(hi)-1000) > 1e-3 {
		t.Errorf("min/max range ends at %v, want 1000", hi)
	}
}

// TestConstantDimension checks a dimension that never varies: it codes as
// 0, decodes exactly, and counts any other value as clipped.
func TestConstantDimension(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	vs := randVecs(r, 100, 4)
	for _, v := range vs {
		v[2] = 0.5
	}
	q := train(t, storeOf(t, 4, vector.Dot, vs), nil)
	if lo, hi := q.Range(2); lo != 0.5 || hi != 0.5 {
		t.Fatalf("constant dimension range = [%v, %v]", lo, hi)
	}
	p, err := q.Prepare(vector.Vector{0, 0, 2, 0})
	if err != nil {
		t.Fatal(err)
	}
	if got := p.Distance(encode(t, q, vs[0])); got != -1 {
		t.Errorf("Distance along the constant dimension = %v, want -1", got)
	}
	if c, _ := q.Encode(make([]byte, q.CodeSize()), vector.Vector{0, 0, 0.7, 0}); c != 1 {
		t.Errorf("clipped = %d, want 1", c)
	}
}

// TestBadInput checks that quantization refuses what the float path
// refuses, with the same errors, and leaves dst alone.
func TestBadInput(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, m := range metrics {
		q := train(t, storeOf(t, 4, m, randVecs(r, 50, 4)), nil)
		cases := []struct {
			name string
			v    vector.Vector
			want error
		}{
			{"short", vector.Vector{1, 2, 3}, vector.ErrDimensionMismatch},
			{"long", vector.Vector{1, 2, 3, 4, 5}, vector.ErrDimensionMismatch},
			{"NaN", vector.Vector{1, float32(math.NaN()), 0, 0}, vector.ErrNonFinite},
			{"Inf", vector.Vector{float32(math.Inf(-1)), 0, 0, 0}, vector.ErrNonFinite},
		}
		if m == vector.Cosine {
			cases = append(cases, struct {
				name string
				v    vector.Vector
				want error
			}{"zero", vector.Vector{0, 0, 0, 0}, vector.ErrZeroVector})
		} else {
			cases = append(cases, struct {
				name string
				v    vector.Vector
				want error
			}{"huge", vector.Vector{5e18, 5e18, 0, 0}, vector.ErrOutOfRange})
		}
		for _, c := range cases {
			dst := []byte{9, 9, 9, 9, 9, 9, 9, 9}
			if _, err := q.Encode(dst, c.v); !errors.Is(err, c.want) {
				t.Errorf("%v %s: Encode = %v, want %v", m, c.name, err, c.want)
			}
			if !slices.Equal(dst, []byte{9, 9, 9, 9, 9, 9, 9, 9}) {
				t.Errorf("%v %s: Encode wrote %v on error", m, c.name, dst)
			}
			if _, err := q.Prepare(c.v); !errors.Is(err, c.want) {
				t.Errorf("%v %s: Prepare = %v, want %v", m, c.name, err, c.want)
			}
		}
		if _, err := q.Encode(make([]byte, 4), vector.Vector{1, 2, 3, 4}); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Encode into a short dst = %v", err)
		}
		if err := q.Check(5, m); !errors.Is(err, vector.ErrDimensionMismatch) {
			t.Errorf("Check(other dimension) = %v", err)
		}
		if err := q.Check(4, m%3+1); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Check(other metric) = %v", err)
		}
		if err := q.Check(4, m); err != nil {
			t.Errorf("Check(own) = %v", err)
		}
		p, _ := q.Prepare(vector.Vector{1, 2, 3, 4})
		for name, f := range map[string]func(){
			"Distance":  func() { p.Distance(make([]byte, q.CodeSize()+1)) },
			"Distance4": func() { c := make([]byte, q.CodeSize()); p.Distance4(c, c, c, c[:3]) },
			"Distances": func() { p.Distances(make([]byte, q.CodeSize()), make([]float32, 2)) },
		} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s of a code of another size did not panic", name)
					}
				}()
				f()
			}()
		}
	}
	empty, _ := vector.NewMemStore(4, vector.L2)
	if _, err := quant.Train(context.Background(), empty, nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Train(empty) = %v", err)
	}
	s := storeOf(t, 4, vector.L2, randVecs(r, 10, 4))
	for _, o := range []quant.TrainOptions{{Sample: -1}, {Clip: 0.3}, {Clip: math.NaN()}} {
		if _, err := quant.Train(context.Background(), s, &o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Train(%+v) = %v", o, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := quant.Train(ctx, s, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Train(cancelled) = %v", err)
	}
}

// TestStale checks both staleness rules: growth past a small training set,
// and a clipping rate well above the trained one.
func TestStale(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	vs := randVecs(r, 500, 16)
	s := storeOf(t, 16, vector.L2, vs)
	q := train(t, s, nil)
	if q.Trained() != 500 {
		t.Fatalf("Trained = %d", q.Trained())
	}
	if q.Stale(999, 499, 0) || !q.Stale(1000, 500, 0) {
		t.Error("growth: want stale exactly once the store has doubled")
	}
	full := train(t, s, &quant.TrainOptions{Sample: 100})
	if full.Stale(10000, 0, 0) {
		t.Error("growth: a quantizer trained from a full sample went stale by size alone")
	}
	// Same distribution: the clip rate stays near 2·Clip.
	var clipped int64
	for _, v := range randVecs(r, 2000, 16) {
		c, _ := full.Encode(make([]byte, full.CodeSize()), v)
		clipped += int64(c)
	}
	if full.Stale(2500, 2000, clipped) {
		t.Errorf("drift: fresh data from the same distribution is stale (%d clipped)", clipped)
	}
	// Shifted data: most components fall outside.
	clipped = 0
	for _, v := range randVecs(r, 2000, 16) {
		for j := range v {
			v[j] += 1.5
		}
		c, _ := full.Encode(make([]byte, full.CodeSize()), v)
		clipped += int64(c)
	}
	if !full.Stale(2500, 2000, clipped) {
		t.Errorf("drift: shifted data is not stale (%d clipped)", clipped)
	}
	if full.Stale(2500, 999, clipped) {
		t.Error("drift: judged on fewer than 1,000 vectors")
	}
	if full.Stale(20000, 2000, clipped) || !full.Stale(16000, 2000, clipped) {
		t.Error("drift: want stale once an eighth of the store was encoded since training")
	}
}

// TestTrainDeterministic checks that training samples with a fixed seed.
func TestTrainDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	s := storeOf(t, 8, vector.Cosine, randVecs(r, 3000, 8))
	a, _ := train(t, s, &quant.TrainOptions{Sample: 500}).MarshalBinary()
	b, _ := train(t, s, &quant.TrainOptions{Sample: 500}).MarshalBinary()
	if !slices.Equal(a, b) {
		t.Error("two trainings of one store differ")
	}
}

// TestQuantiles checks where the ranges fall on known values: every
// dimension holds a shuffled 0…999, so clipping 1% leaves out 10 values at
// each end.
func TestQuantiles(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	const n, dim = 1000, 20
	vs := make([]vector.Vector, n)
	for i := range vs {
		vs[i] = make(vector.Vector, dim)
	}
	for j := range dim {
		for i, p := range r.Perm(n) {
			vs[i][j] = float32(p)
		}
	}
	s := storeOf(t, dim, vector.L2, vs)
	for _, c := range []struct {
		clip   float64
		lo, hi float32
	}{{0.01, 10, 989}, {-1, 0, 999}, {0.1, 100, 899}} {
		q := train(t, s, &quant.TrainOptions{Clip: c.clip})
		for j := range dim {
			lo, hi := q.Range(j)
			if lo != c.lo || math.Abs(float64(hi-c.hi)) > 1e-3 {
				t.Fatalf("clip %v: range %d = [%v, %v], want [%v, %v]", c.clip, j, lo, hi, c.lo, c.hi)
			}
		}
	}
}

// FuzzPrepare checks that Prepare, which checks its query in the same
// pass that prepares it, refuses exactly what vector.Check refuses, with
// the same sentinel, for any bits of a 4-d query under each metric.
func FuzzPrepare(f *testing.F) {
	f.Add(uint32(0x3f800000), uint32(0), uint32(0x7fc00000), uint32(0))
	f.Add(uint32(0), uint32(0), uint32(0), uint32(0))
	f.Add(uint32(0x5f8e1bc9), uint32(0x5f8e1bc9), uint32(0), uint32(0xff800000))
	r := rand.New(rand.NewPCG(13, 14))
	var qs []*quant.Quantizer
	for _, m := range metrics {
		qs = append(qs, train(f, storeOf(f, 4, m, randVecs(r, 50, 4)), nil))
	}
	sentinels := []error{vector.ErrDimensionMismatch, vector.ErrNonFinite, vector.ErrZeroVector, vector.ErrOutOfRange}
	f.Fuzz(func(t *testing.T, a, b, c, d uint32) {
		v := vector.Vector{math.Float32frombits(a), math.Float32frombits(b), math.Float32frombits(c), math.Float32frombits(d)}
		for i, q := range qs {
			want := vector.Check(v, 4, metrics[i])
			_, got := q.Prepare(v)
			if (want == nil) != (got == nil) {
				t.Fatalf("%v %v: Prepare = %v, Check = %v", metrics[i], v, got, want)
			}
			for _, s := range sentinels {
				if errors.Is(want, s) != errors.Is(got, s) {
					t.Fatalf("%v %v: Prepare = %v, Check = %v", metrics[i], v, got, want)
				}
			}
		}
	})
}

// TestLargeQuery prepares, under Dot and L2, a query whose components are
// near the largest a store accepts against codes of data as large: the
// float32 sums of its weights overflow, and the preparation must still
// give finite estimates and bounds that hold.
func TestLargeQuery(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	for _, m := range []vector.Metric{vector.Dot, vector.L2} {
		vs := randVecs(r, 60, 4)
		for _, v := range vs {
			for j := range v {
				v[j] *= 1e18
			}
		}
		q := train(t, storeOf(t, 4, m, vs), nil)
		qv := vector.Vector{4e18, -3e18, 5e17, 1e18}
		pq, err := q.Prepare(qv)
		if err != nil {
			t.Fatalf("%v: Prepare: %v", m, err)
		}
		bound, noise := float64(pq.ErrorBound()), float64(pq.NoiseSD())
		if math.IsInf(bound, 0) || math.IsNaN(bound) || math.IsInf(noise, 0) || math.IsNaN(noise) {
			t.Fatalf("%v: ErrorBound %v, NoiseSD %v", m, bound, noise)
		}
		code := make([]byte, q.CodeSize())
		for i, v := range vs {
			if _, err := q.Encode(code, v); err != nil {
				t.Fatal(err)
			}
			est := float64(pq.Distance(code))
			exact := float64(vector.SquaredL2(qv, v))
			if m == vector.Dot {
				exact = -float64(vector.InnerProduct(qv, v))
			}
			if math.IsInf(est, 0) || math.IsNaN(est) || exact < est-bound*(1+1e-3) {
				t.Errorf("%v: vector %d: estimate %g, exact %g, bound %g", m, i, est, exact, bound)
			}
		}
	}
}
