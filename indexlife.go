package cairn

// This file holds the state of a collection's index beyond the index
// itself: how an Auto collection chose it (routing.go, autoroute.go; the
// measurement is internal/route's), the queries it keeps to measure again,
// and the graphs built beside it (rebuild.go).

import (
	"sync/atomic"

	"github.com/cairndb/cairn/internal/reservoir"
	"github.com/cairndb/cairn/internal/route"
)

// indexLife is the collection's one handle on its index's life: the
// choice, the measurement and the rebuilds.
type indexLife struct {
	// route is an Auto collection's latest measurement of the ways to
	// its recall target (routing.go), nil before the first. Under the
	// collection's mu, as are routeUnsaved and retry.
	route *measuredRoute
	// routeUnsaved is set while route is not the verdict the file keeps
	// and, the collection not being written to since its load, may not
	// be saved yet.
	routeUnsaved bool
	// queries samples the queries a scan answers for the next
	// measurement (and is safe for concurrent use).
	queries reservoir.Reservoir
	// remeasuring is set while a measurement runs in the background, and
	// retry holds back the next after one that failed.
	remeasuring atomic.Bool
	retry       route.Retry
	// rebuild is the bookkeeping of graph rebuilds, under a lock of its
	// own (rebuild.go).
	rebuild rebuildState
}
