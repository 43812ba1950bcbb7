package recall_test

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// naiveTruth is the obviously-correct reference: every distance with
// Metric.Distance, a full sort, ties by position.
func naiveTruth(ds *recall.Dataset, k int) [][]int32 {
	out := make([][]int32, len(ds.Queries))
	for q, qv := range ds.Queries {
		type cand struct {
			d float64
			p int32
		}
		cs := make([]cand, len(ds.Base))
		for i, v := range ds.Base {
			cs[i] = cand{ds.Metric.Distance(qv, v), int32(i)}
		}
		sort.Slice(cs, func(i, j int) bool {
			if cs[i].d != cs[j].d {
				return cs[i].d < cs[j].d
			}
			return cs[i].p < cs[j].p
		})
		for _, c := range cs[:min(k, len(cs))] {
			out[q] = append(out[q], c.p)
		}
	}
	return out
}

func TestGroundTruthMatchesNaive(t *testing.T) {
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	raw := func(n, dim int) []vector.Vector {
		vs := make([]vector.Vector, n)
		for i := range vs {
			vs[i] = make(vector.Vector, dim)
			for j := range vs[i] {
				vs[i][j] = float32(r.NormFloat64() * 3)
			}
		}
		return vs
	}
	cases := []struct {
		name string
		ds   *recall.Dataset
		k    int
	}{
		{"clustered", recall.Clustered(517, 23, 24, 3), 10},
		{"uniform-k100", recall.Uniform(333, 9, 17, 1), 100},
		{"k-exceeds-n", recall.Uniform(7, 3, 5, 1), 10},
	}
	for _, m := range []vector.Metric{vector.Cosine, vector.Dot, vector.L2} {
		cases = append(cases, struct {
			name string
			ds   *recall.Dataset
			k    int
		}{"raw-" + m.String(), &recall.Dataset{Name: "raw", Dim: 13, Metric: m, Base: raw(301, 13), Queries: raw(11, 13)}, 20})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := recall.GroundTruth(ctx, c.ds, c.k)
			if err != nil {
				t.Fatal(err)
			}
			want := naiveTruth(c.ds, c.k)
			if len(got) != len(want) {
				t.Fatalf("%d rows, want %d", len(got), len(want))
			}
			for q := range want {
				if !slices.Equal(got[q], want[q]) {
					t.Fatalf("query %d:\n got %v\nwant %v", q, got[q], want[q])
				}
			}
		})
	}
}

func TestGroundTruthTiesByPosition(t *testing.T) {
	v := vector.Vector{1, 0, 0}
	w := vector.Vector{0, 1, 0}
	ds := &recall.Dataset{Dim: 3, Metric: vector.L2,
		Base:    []vector.Vector{w, v, w, v, v},
		Queries: []vector.Vector{v}}
	got, err := recall.GroundTruth(context.Background(), ds, 4)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1, 3, 4, 0}; !slices.Equal(got[0], want) {
		t.Errorf("got %v, want %v", got[0], want)
	}
}

func TestGroundTruthErrors(t *testing.T) {
	ctx := context.Background()
	ds := recall.Uniform(100, 3, 8, 1)
	if _, err := recall.GroundTruth(ctx, ds, 0); !errors.Is(err, vector.ErrInvalidK) {
		t.Errorf("k=0: %v", err)
	}
	bad := *ds
	bad.Queries = []vector.Vector{make(vector.Vector, 7)}
	if _, err := recall.GroundTruth(ctx, &bad, 5); !errors.Is(err, vector.ErrDimensionMismatch) {
		t.Errorf("short query: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := recall.GroundTruth(cctx, ds, 5); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestAt(t *testing.T) {
	res := func(ids ...vector.ID) []vector.Result {
		out := make([]vector.Result, len(ids))
		for i, id := range ids {
			out[i] = vector.Result{ID: id, Distance: float32(i)}
		}
		return out
	}
	truth := []int32{4, 2, 9, 7, 1}
	for _, c := range []struct {
		name string
		got  []vector.Result
		k    int
		want float64
	}{
		{"perfect", res(4, 2, 9), 3, 1},
		{"order-free", res(9, 4, 2), 3, 1},
		{"one-wrong", res(4, 2, 7), 3, 2.0 / 3},
		{"short-answer", res(4), 3, 1.0 / 3},
		{"duplicates-count-once", res(4, 4, 4), 3, 1.0 / 3},
		{"only-first-k-results", res(0, 4, 2, 9), 1, 0},
		{"k-beyond-truth", res(4, 2, 9, 7, 1, 3), 10, 1},
		{"k-zero", res(4), 0, 0},
		{"empty", nil, 3, 0},
	} {
		if got := recall.At(c.got, truth, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}
