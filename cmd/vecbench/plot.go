// This file holds --plot's trade-off figure, drawn from the sweep: recall@k
// against queries per second in the style of ann-benchmarks, one series
// per index and build setting over its search settings, each series'
// Pareto front drawn strongly and its dominated settings faintly, with the
// peers of --peers-json beside cairn.

package main

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// writePlots writes --plot: the trade-off figure when the run swept HNSW,
// the build figure when it ran the index table; when it did both, the
// build figure goes to FILE-build.svg (or .png) beside FILE.
func (b *bench) writePlots() error {
	var sweep, built bool
	for _, r := range b.results {
		sweep = sweep || r.Report == "sweep"
		built = built || r.Report == "indexes"
	}
	var peers []peerResult
	if b.c.peersJSON != "" {
		var err error
		if peers, err = readPeers(b.c.peersJSON); err != nil {
			return err
		}
	}
	path := b.c.plotPath
	if sweep {
		if err := writeTradeoff(path, b.results, peers, b.machine); err != nil {
			return err
		}
		path = buildPlotPath(path)
	}
	if built {
		if err := writeBuildPlot(path, b.results, b.machine); err != nil {
			return err
		}
	}
	if !sweep && !built {
		return fmt.Errorf("nothing measured to plot")
	}
	return nil
}

// buildPlotPath is where the build figure goes beside the trade-off
// figure at path: sweep.svg gives sweep-build.svg.
func buildPlotPath(path string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-build" + ext
}

// tradePoint is one measured setting on the trade-off figure.
type tradePoint struct {
	recall, qps float64
	front       bool // on its series' Pareto front
}

// tradeSeries is one index and build setting over its search settings.
type tradeSeries struct {
	name   string
	peer   bool
	order  [3]int // legend order: cairn's HNSW by M and efConstruction, flat, then the peers
	points []tradePoint
}

// seriesOrder is the legend place of a series of index with m and efc.
func seriesOrder(index string, m, efc int) [3]int {
	rank := map[string]int{"hnsw": 0, "flat": 1, "qflat": 2, "coder-hnsw": 3}
	r, ok := rank[index]
	if !ok {
		r = 4
	}
	return [3]int{r, m, efc}
}

// markFront marks the points no other point of the series beats on both
// recall and QPS, and sorts the points by recall.
func (s *tradeSeries) markFront() {
	slices.SortFunc(s.points, func(a, b tradePoint) int {
		return cmp.Or(cmp.Compare(a.recall, b.recall), cmp.Compare(a.qps, b.qps))
	})
	best := math.Inf(-1)
	for i := len(s.points) - 1; i >= 0; i-- {
		p := &s.points[i]
		p.front = p.qps > best
		best = max(best, p.qps)
	}
}

// sameMetric reports whether a peer's metric (hnswlib's names: ip, the
// inner product, which bench/peers.sh runs on unit vectors for cosine;
// l2) is cairn's metric m.
func sameMetric(peer, m string) bool {
	if peer == "ip" {
		return m == "cosine" || m == "dot"
	}
	return peer == m
}

// seriesName names the series of a cairn result.
func seriesName(r result) string {
	name := r.Index
	if r.Params.M > 0 {
		name += fmt.Sprintf(" M=%d", r.Params.M)
	}
	if r.Params.EfConstruction > 0 && r.Index != "coder-hnsw" {
		name += fmt.Sprintf(" efC=%d", r.Params.EfConstruction)
	}
	if r.Params.Overfetch {
		name += " overfetch"
	}
	if r.Params.Quantize != "" {
		name += " " + r.Params.Quantize
	}
	if r.Index == "flat" {
		name += " (exact)"
	}
	return name
}

// tradeoffSeries gathers the series of the figure: the sweep's, the index
// table's rows on the same data sets and k, and the peers that measured a
// data set of the same size, dimension and k. It returns the data sets'
// results that head the figure.
func tradeoffSeries(results []result, peers []peerResult) ([]*tradeSeries, []result, error) {
	sets := map[string]result{}
	var heads []result
	for _, r := range results {
		if _, ok := sets[r.Dataset]; r.Report == "sweep" && !ok {
			sets[r.Dataset] = r
			heads = append(heads, r)
		}
	}
	multi := len(heads) > 1
	byName := map[string]*tradeSeries{}
	var out []*tradeSeries
	add := func(name string, peer bool, order [3]int, p tradePoint) {
		s := byName[name]
		if s == nil {
			s = &tradeSeries{name: name, peer: peer, order: order}
			byName[name] = s
			out = append(out, s)
		}
		s.points = append(s.points, p)
	}
	for _, r := range results {
		h, ok := sets[r.Dataset]
		if !ok || r.K != h.K || r.QPS <= 0 || (r.Report != "sweep" && r.Report != "indexes" && r.Report != "peers") {
			continue
		}
		name := seriesName(r)
		if multi {
			name = r.Dataset + " " + name
		}
		add(name, r.Index == "coder-hnsw", seriesOrder(r.Index, r.Params.M, r.Params.EfConstruction), tradePoint{recall: r.Recall, qps: r.QPS})
	}
	if len(peers) > 0 {
		used := 0
		for _, p := range peers {
			for _, h := range heads {
				if p.N != h.N || p.Dim != h.Dim || p.K != h.K || !sameMetric(p.Metric, h.Metric) {
					continue
				}
				name := p.System
				if p.Index != "" {
					name += " " + p.Index
				}
				name += fmt.Sprintf(" M=%d efC=%d", p.M, p.EfConstruction)
				if p.BuildThreads > 0 {
					name += fmt.Sprintf(" (%d build threads)", p.BuildThreads)
				}
				if multi {
					name = h.Dataset + " " + name
				}
				add(name, true, seriesOrder(p.System, p.M, p.EfConstruction), tradePoint{recall: p.Recall, qps: p.QPS})
				used++
			}
		}
		if used == 0 {
			h := heads[0]
			return nil, nil, fmt.Errorf("--peers-json: no line measured n = %d, dim = %d, k = %d under %s, as this run did (export the same data with --export)", h.N, h.Dim, h.K, h.Metric)
		}
	}
	for _, s := range out {
		s.markFront()
	}
	slices.SortStableFunc(out, func(a, b *tradeSeries) int {
		return cmp.Or(cmp.Compare(a.order[0], b.order[0]), cmp.Compare(a.order[1], b.order[1]), cmp.Compare(a.order[2], b.order[2]))
	})
	return out, heads, nil
}

// writeTradeoff draws the trade-off figure of results (and peers) to path.
func writeTradeoff(path string, results []result, peers []peerResult, m machine) error {
	series, heads, err := tradeoffSeries(results, peers)
	if err != nil {
		return err
	}
	h := heads[0]
	queries := 0
	for _, r := range results {
		queries = max(queries, r.Queries)
	}
	scale := recallScale{top: recallTop(queries, h.K)}

	p := newPlot()
	p.X.Label.Text = fmt.Sprintf("recall@%d (spaced by 1 − recall, log scale)", h.K)
	// gonum centres a y-axis label at the arithmetic middle of the range,
	// far off centre on a log axis: the title names the axis.
	p.Title.Text = "Queries per second (log scale)"
	p.X.Scale, p.X.Tick.Marker = scale, scale
	p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	legend := newLegend()
	lo, minQ, maxQ := 1.0, math.Inf(1), 0.0
	for i, s := range series {
		st := styleOf(i, s.peer)
		var front, dominated plotter.XYs
		for _, pt := range s.points {
			xy := plotter.XY{X: scale.clamp(pt.recall), Y: pt.qps}
			if pt.front {
				front = append(front, xy)
			} else {
				dominated = append(dominated, xy)
			}
			lo, minQ, maxQ = min(lo, pt.recall), min(minQ, pt.qps), max(maxQ, pt.qps)
		}
		if len(dominated) > 0 {
			sc, err := plotter.NewScatter(dominated)
			if err != nil {
				return err
			}
			sc.GlyphStyle = draw.GlyphStyle{Color: faint(st.color), Shape: st.shape, Radius: vg.Points(3)}
			p.Add(sc)
		}
		marks, err := plotter.NewScatter(front)
		if err != nil {
			return err
		}
		marks.GlyphStyle = draw.GlyphStyle{Color: st.color, Shape: st.shape, Radius: vg.Points(3.5)}
		if len(front) > 1 {
			line, err := plotter.NewLine(front)
			if err != nil {
				return err
			}
			line.LineStyle = draw.LineStyle{Color: st.color, Width: vg.Points(1.6), Dashes: st.dashes}
			p.Add(line, marks)
			legend.Add(s.name, line, marks)
		} else {
			p.Add(marks)
			legend.Add(s.name, marks)
		}
	}
	dom, _ := plotter.NewScatter(plotter.XYs{{}})
	dom.GlyphStyle = draw.GlyphStyle{Color: faint(color.Black), Shape: draw.CircleGlyph{}, Radius: vg.Points(3)}
	legend.Add("faint: beaten on recall and QPS", dom)
	legend.Add("  by a setting of its own series")
	p.X.Min, p.X.Max = scale.recallRange(lo)
	p.Y.Min, p.Y.Max = minQ/1.3, maxQ*1.3

	names := make([]string, len(heads))
	for i, r := range heads {
		names[i] = r.Dataset
	}
	sub := fmt.Sprintf("%s: n = %s, %d-d, %s · k = %d · %s queries, one at a time on one goroutine",
		strings.Join(names, ", "), fmtInt(h.N), h.Dim, h.Metric, h.K, fmtInt(queries))
	if len(heads) > 1 {
		sub = fmt.Sprintf("%s: %d-d, %s · k = %d · %s queries, one at a time on one goroutine", strings.Join(names, ", "), h.Dim, h.Metric, h.K, fmtInt(queries))
	}
	if len(peers) > 0 {
		sub += " (peers: their harness, on the same files)"
	}
	pg := &page{
		title:    fmt.Sprintf("Recall@%d against queries per second", h.K),
		subtitle: []string{sub, machineLine(m)},
		panels:   []*plot.Plot{p},
		legend:   legend,
		width:    10 * vg.Inch,
		height:   6 * vg.Inch,
	}
	return pg.save(path)
}

// logTicks labels a log axis at 1, 2 and 5 times each power of ten, with
// thousands separators, and marks the other multiples unlabelled; an axis
// spanning little more than a decade gets every multiple labelled.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	every := hi/lo < 15
	var ticks []plot.Tick
	for e := math.Floor(math.Log10(lo)); math.Pow(10, e) <= hi; e++ {
		base := math.Pow(10, e)
		for m := 1; m < 10; m++ {
			v := float64(m) * base
			if v < lo || v > hi {
				continue
			}
			label := ""
			if every || m == 1 || m == 2 || m == 5 {
				label = fmtTick(v)
			}
			ticks = append(ticks, plot.Tick{Value: v, Label: label})
		}
	}
	return ticks
}

// fmtTick prints an axis value: whole numbers with separators, fractions
// with up to six significant digits (m·10ᵉ is not exact in binary).
func fmtTick(v float64) string {
	if v >= 1 {
		return fmtInt(int(math.Round(v)))
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// plotterGrid is a light grid behind the data.
func plotterGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = color.Gray{Y: 0xe0}
	g.Horizontal.Color = color.Gray{Y: 0xe0}
	return g
}
