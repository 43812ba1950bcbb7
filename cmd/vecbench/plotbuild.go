// This file holds --plot's build figure, drawn from the index table: build
// time and memory of every index at every size, side by side.

package main

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// buildSeries is one index's builds, by size.
type buildSeries struct {
	name   string
	peer   bool
	n      []int
	secs   []float64
	mib    []float64
	labels [2][]string
}

// buildFigure gathers one series per index and build setting from the
// index table's rows (each build once: coder/hnsw's several search
// settings share one), and the sizes measured.
func buildFigure(results []result) ([]*buildSeries, []int, []result) {
	byName := map[string]*buildSeries{}
	var out []*buildSeries
	var sizes []int
	var rows []result
	for _, r := range results {
		if r.Report != "indexes" && r.Report != "peers" {
			continue
		}
		name := seriesName(r)
		if r.Index == "hnsw" {
			name = fmt.Sprintf("hnsw M=%d efC=%d", r.Params.M, r.Params.EfConstruction)
		}
		if r.Index == "coder-hnsw" {
			name = fmt.Sprintf("coder-hnsw M=%d", r.Params.M)
		}
		s := byName[name]
		if s == nil {
			s = &buildSeries{name: name, peer: r.Index == "coder-hnsw"}
			byName[name] = s
			out = append(out, s)
		}
		if slices.Contains(s.n, r.N) {
			continue
		}
		s.n = append(s.n, r.N)
		s.secs = append(s.secs, max(r.BuildS, 1e-6))
		s.mib = append(s.mib, max(float64(r.IndexBytes)/(1<<20), 1e-3))
		s.labels[0] = append(s.labels[0], fmtDur(secs(r.BuildS)))
		s.labels[1] = append(s.labels[1], fmtBytes(r.IndexBytes))
		if !slices.Contains(sizes, r.N) {
			sizes = append(sizes, r.N)
		}
		rows = append(rows, r)
	}
	slices.Sort(sizes)
	return out, sizes, rows
}

// writeBuildPlot draws the build figure of results to path: build time
// and memory on log axes against the sizes (evenly spaced), one marked
// line per index, each point labelled with its value.
func writeBuildPlot(path string, results []result, m machine) error {
	series, sizes, rows := buildFigure(results)
	if len(series) == 0 {
		return fmt.Errorf("nothing measured to plot")
	}
	at := func(n int) float64 { return float64(slices.Index(sizes, n)) }
	sizeTicks := plot.ConstantTicks(nil)
	for i, n := range sizes {
		sizeTicks = append(sizeTicks, plot.Tick{Value: float64(i), Label: fmtInt(n)})
	}
	panels := []*plot.Plot{newPlot(), newPlot()}
	// gonum centres a y-axis label at the arithmetic middle of the range,
	// far off centre on a log axis: the panels' titles name the axes.
	panels[0].Title.Text = "Build time, s (log scale)"
	panels[1].Title.Text = "Memory, MiB (log scale)"
	legend := newLegend()
	for pi, p := range panels {
		p.X.Label.Text = "items"
		p.X.Tick.Marker = sizeTicks
		p.X.Min, p.X.Max = -0.5, float64(len(sizes))-0.5
		p.Y.Scale, p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
		lo, hi := math.Inf(1), 0.0
		for i, s := range series {
			st := styleOf(i, s.peer)
			vals := s.secs
			if pi == 1 {
				vals = s.mib
			}
			xys := make(plotter.XYs, len(s.n))
			for j, n := range s.n {
				xys[j] = plotter.XY{X: at(n), Y: vals[j]}
				lo, hi = min(lo, vals[j]), max(hi, vals[j])
			}
			line, marks, err := plotter.NewLinePoints(xys)
			if err != nil {
				return err
			}
			line.LineStyle = draw.LineStyle{Color: st.color, Width: vg.Points(1.6), Dashes: st.dashes}
			marks.GlyphStyle = draw.GlyphStyle{Color: st.color, Shape: st.shape, Radius: vg.Points(3.5)}
			labels, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: s.labels[pi]})
			if err != nil {
				return err
			}
			for k := range labels.TextStyle {
				labels.TextStyle[k] = textStyle(8.5, st.color)
			}
			labels.Offset = vg.Point{X: vg.Points(6), Y: vg.Points(2)}
			p.Add(line, marks, labels)
			if pi == 0 {
				legend.Add(s.name, line, marks)
			}
		}
		p.Y.Min, p.Y.Max = lo/2, hi*2
	}
	h := rows[0]
	data := rows[0].Dataset
	if len(sizes) > 1 {
		data = fmt.Sprintf("%s to %s items", fmtInt(sizes[0]), fmtInt(sizes[len(sizes)-1]))
	}
	pg := &page{
		title: "Build time and memory per index",
		subtitle: []string{
			fmt.Sprintf("%s, %d-d, %s · build: adding every vector in batches, on %d threads · memory: growth of the live heap, vectors included",
				data, h.Dim, h.Metric, m.Threads),
			machineLine(m),
		},
		panels: panels,
		legend: legend,
		width:  11 * vg.Inch,
		height: 5 * vg.Inch,
	}
	return pg.save(path)
}
