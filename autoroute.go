// This file holds what an Auto collection with a recall target keeps of
// the choice between exact search, the approximate flat scan and its HNSW
// graph, which internal/route makes by measuring them on this machine:
// the verdict as the collection keeps and reports it (Route).

package cairn

import (
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/route"
)

// Route is an Auto collection's latest measurement of the ways to its
// recall target (the exact scan, the approximate scan and its graph), as
// [IndexInfo] reports it. A snapshot value.
//
// The collection measures when it first reaches its AutoThreshold (on the
// path of the write that reached it). While a scan wins, it measures again
// in the background, beside queries and writes, when it has doubled
// (2 × Len), and once a scan that won on held-out vectors has answered
// [hnsw.MinRealQueries] distinct queries. A file keeps the latest verdict
// (once a write has come since it), and a reopen measures again only if
// the collection has doubled since a scan won, or halved since the graph
// won. It measures on the queries it
// answered, if it has kept that many (queries with a filter, or in keyword
// or hybrid mode, are not kept), else on its own vectors held out, which on
// real embeddings read lower recall than real queries and so favour the
// scans. A background measurement builds its graph with one worker that
// rests as long as it works, about half of one core: seconds at 20,000
// items of 128 dimensions, minutes at 100,000 of 768; the scan answers
// meanwhile, and the writes made during it are added to the graph if it
// wins. A measurement that fails (a store error) keeps the queries it took
// for the next, which waits 10 seconds, twice as long after each failure in
// a row, up to 10 minutes.
type Route struct {
	// Index is the way that met the target fastest: Flat, QFlat or HNSW.
	Index IndexKind
	// Len is the number of items measured.
	Len int
	// Queries is how many distinct recorded queries the measurement used:
	// the graph's calibration measured on them (topped up with held-out
	// vectors below hnsw.MinRealQueries), and the ways were timed on them.
	// 0 when it measured on the collection's own vectors alone.
	Queries int
}

// measuredRoute is a Route as the collection keeps it: with next, the size
// at which a scan that won is measured against the graph again (0 once
// the graph has won).
type measuredRoute struct {
	Route
	next int
}

// holds reports whether r, a verdict the collection's file kept, still
// stands for the collection at n items, so that its load measures
// nothing: a scan's until the collection has doubled (next), the graph's
// until it has halved. A measurement at load would be no better informed
// than the one kept: it has no real queries to measure on.
func (r *measuredRoute) holds(n int) bool {
	switch {
	case r == nil:
		return false
	case r.Index == HNSW:
		return r.Len > 0 && 2*n >= r.Len
	}
	return n < r.next
}

// onQueries reports whether r was measured on enough real queries that
// more of them would not measure better.
func (r *measuredRoute) onQueries() bool { return r != nil && r.Queries >= hnsw.MinRealQueries }

// chooseRouteFunc is route.Choose, replaced by tests of the routing
// around it.
var chooseRouteFunc = route.Choose

// routeOf is the Route of verdict v, measured at n items on recorded
// queries, with the size at which a scan is measured again
// (route.NextLen).
func routeOf(v route.Verdict, n, recorded int) *measuredRoute {
	return &measuredRoute{Route: Route{Index: indexKind(v.Kind), Len: n, Queries: recorded}, next: route.NextLen(v.Kind, n)}
}

// indexKind is the IndexKind of a way internal/route measures.
func indexKind(k route.Kind) IndexKind {
	switch k {
	case route.Flat:
		return Flat
	case route.QFlat:
		return QFlat
	}
	return HNSW
}
