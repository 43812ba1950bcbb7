// This file holds the choice an Auto collection with a recall target makes
// between exact search and its HNSW graph: by measuring both, on this
// machine, at the target.

package cairn

import (
	"context"
	"slices"
	"time"

	"github.com/cairndb/cairn/flat"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/vector"
)

// routeProbes is the number of queries each side is timed on.
const routeProbes = 64

// graphPaysFunc is graphPays, replaced by tests of the routing around it.
var graphPaysFunc = graphPays

// graphPays calibrates the freshly built graph g of an Auto collection with
// a recall target and times it against the exact scan on a sample of the
// collection's own vectors, alternating. It reports whether the graph is
// the faster way to meet the target; a graph whose calibration fell back to
// exact search never is. ids are the collection's ids; no write is in
// flight (the caller holds wmu).
func graphPays(ctx context.Context, g *hnsw.Index, st vector.Store, ids []vector.ID) (bool, error) {
	cal, err := g.Calibrate(ctx, nil)
	if err != nil {
		return false, err
	}
	if cal.Exact {
		return false, nil
	}
	ex := flat.New(st)
	var probes []vector.Vector
	for i := 0; i < len(ids) && len(probes) < routeProbes; i += max(1, len(ids)/routeProbes) {
		v, err := st.Get(ids[i])
		if err != nil {
			return false, err
		}
		probes = append(probes, v)
	}
	k := g.Options().TargetK
	var tg, tf []time.Duration
	for _, q := range probes {
		t0 := time.Now()
		// An explicit ef keeps the probes out of the graph's sample of
		// real queries.
		if _, err := g.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: cal.Ef}); err != nil {
			return false, err
		}
		t1 := time.Now()
		if _, err := ex.Search(ctx, q, k, nil); err != nil {
			return false, err
		}
		tg, tf = append(tg, t1.Sub(t0)), append(tf, time.Since(t1))
	}
	return median(tg) < median(tf), nil
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
