// This file holds the recall axis of the trade-off plot: spaced by
// 1 − recall on a log scale, so that 0.9, 0.99 and 0.999 are equally far
// apart and the settings people tune in (recall above 0.95) spread out
// instead of piling up at 1, as ann-benchmarks' logit axis does.

package main

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// recallScale places recall r at −log10(1 − r). Recall 1, which the log
// cannot reach, is drawn at top: points are placed with clamp, and the
// axis ends a little beyond top.
type recallScale struct{ top float64 }

func (s recallScale) pos(r float64) float64 { return -math.Log10(max(1-r, 1e-15)) }

// clamp is where recall r is drawn.
func (s recallScale) clamp(r float64) float64 { return min(r, s.top) }

// inv is the recall at position x.
func (s recallScale) inv(x float64) float64 { return 1 - math.Pow(10, -x) }

// Normalize implements plot.Normalizer.
func (s recallScale) Normalize(lo, hi, x float64) float64 {
	a, b := s.pos(lo), s.pos(hi)
	return (s.pos(x) - a) / (b - a)
}

// niceRecalls are the recalls worth a tick, from the bottom of the axis up.
var niceRecalls = []float64{0, 0.5, 0.8, 0.9, 0.95, 0.98, 0.99, 0.995, 0.998, 0.999, 0.9995, 0.9999, 0.99995, 0.99999}

// recallTop is where recall 1 is drawn when the smallest miss a run can
// measure is 1/(queries·k): half a miss beyond it, so that exact answers
// sit apart from those with one miss.
func recallTop(queries, k int) float64 {
	if queries <= 0 || k <= 0 {
		return 0.9999
	}
	return 1 - 0.5/float64(queries*k)
}

// recallRange returns the axis ends for recalls from lo up, padded a
// little in the scale's own terms, starting from a nice recall.
func (s recallScale) recallRange(lo float64) (min, max float64) {
	start := 0.0
	for _, r := range niceRecalls {
		if r <= lo {
			start = r
		}
	}
	a, b := s.pos(start), s.pos(s.top)
	pad := (b - a) * 0.03
	return s.inv(a - pad), s.inv(b + pad)
}

// Ticks implements plot.Ticker: the nice recalls in range, and "1" where
// recall 1 is drawn. A label too close to the one before it is left off.
func (s recallScale) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	last := math.Inf(-1)
	span := s.pos(hi) - s.pos(lo)
	for _, r := range niceRecalls {
		if r < lo || r > hi || r >= s.top {
			continue
		}
		label := strconv.FormatFloat(r, 'f', -1, 64)
		if s.pos(r)-last < span/14 || s.pos(s.top)-s.pos(r) < span/20 {
			label = ""
		} else {
			last = s.pos(r)
		}
		ticks = append(ticks, plot.Tick{Value: r, Label: label})
	}
	return append(ticks, plot.Tick{Value: s.top, Label: "1"})
}
