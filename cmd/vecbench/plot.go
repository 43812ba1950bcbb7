package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// writePlot draws recall@k against QPS (one goroutine, log scale), one
// line per index and build setting over its search settings, and saves it
// as SVG or PNG by the file's extension.
func writePlot(path string, results []result) error {
	type key struct {
		dataset, store, index string
		m, efc                int
		overfetch             bool
	}
	series := map[key]plotter.XYs{}
	var keys []key
	k := 0
	for _, r := range results {
		if r.QPS <= 0 {
			continue
		}
		kk := key{r.Dataset, r.Store, r.Index, r.Params.M, r.Params.EfConstruction, r.Params.Overfetch}
		if r.Index == "coder-hnsw" {
			kk.efc = 0 // one build, several search settings
		}
		if _, ok := series[kk]; !ok {
			keys = append(keys, kk)
		}
		series[kk] = append(series[kk], plotter.XY{X: r.Recall, Y: r.QPS})
		k = r.K
	}
	if len(keys) == 0 {
		return fmt.Errorf("nothing measured to plot")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("recall@%d against queries per second", k)
	p.X.Label.Text = fmt.Sprintf("recall@%d", k)
	p.Y.Label.Text = "queries per second (one goroutine, log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	// The legend sits bottom left, in room made below the slowest point:
	// fast, accurate settings gather top right.
	p.Legend.Top = false
	p.Legend.Left = true
	p.Legend.XOffs = vg.Points(8)
	p.Legend.YOffs = vg.Points(8)
	p.Add(plotter.NewGrid())
	datasets := map[string]bool{}
	for _, kk := range keys {
		datasets[kk.dataset] = true
	}
	for i, kk := range keys {
		pts := series[kk]
		slices.SortFunc(pts, func(a, b plotter.XY) int { return cmp.Compare(a.X, b.X) })
		line, points, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		line.Color = plotutil.Color(i)
		line.Dashes = plotutil.Dashes(i / 7)
		points.Color = plotutil.Color(i)
		points.Shape = plotutil.Shape(i)
		p.Add(line, points)
		name := kk.index
		if kk.m > 0 {
			name += fmt.Sprintf(" M=%d", kk.m)
		}
		if kk.efc > 0 {
			name += fmt.Sprintf(" efC=%d", kk.efc)
		}
		if kk.overfetch {
			name += " overfetch"
		}
		if kk.store != "memory" {
			name += " (" + kk.store + ")"
		}
		if len(datasets) > 1 {
			name = kk.dataset + " " + name
		}
		p.Legend.Add(name, line, points)
	}
	lo, hi, minQ, maxQ := 1.0, 0.0, math.Inf(1), 0.0
	for _, pts := range series {
		for _, pt := range pts {
			lo, hi = min(lo, pt.X), max(hi, pt.X)
			minQ, maxQ = min(minQ, pt.Y), max(maxQ, pt.Y)
		}
	}
	p.X.Min, p.X.Max = max(0, lo-0.02), min(1, hi+0.01)
	if p.X.Max-p.X.Min < 0.05 {
		p.X.Min = max(0, p.X.Max-0.05)
	}
	p.Y.Min = minQ / math.Pow(maxQ/minQ+1, 0.6) / 2
	p.Y.Max = maxQ * 1.5
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
