package hnsw_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

// countCalibrations counts the calibrations that reach their exact scan
// (those of MinCalibrationLen vectors or more) until the test ends. No
// calibration may be running when it is called.
func countCalibrations(t *testing.T) *atomic.Int64 {
	t.Helper()
	var n atomic.Int64
	old := hnsw.SetCalibrationTruthHook(func() { n.Add(1) })
	t.Cleanup(func() { hnsw.SetCalibrationTruthHook(old) })
	return &n
}

// TestSavedCalibrationRestored: a graph saved with its calibration loads
// into an index with the same target with that calibration, at once: no
// calibration runs at the load or after it, and the loaded graph answers
// every query as the saved one did, at the beam width it chose.
func TestSavedCalibrationRestored(t *testing.T) {
	for _, q := range []hnsw.Quantize{hnsw.QuantizeNone, hnsw.QuantizeInt8} {
		t.Run(q.String(), func(t *testing.T) {
			ix, ds := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9, Quantize: q})
			want, ok := ix.Calibration()
			if !ok || want.Exact || want.Len != 1200 {
				t.Fatalf("calibration before the save: %+v, %v; want a beam width over 1200 vectors", want, ok)
			}
			graph := saveGraph(t, ix, 4)
			calibrations := countCalibrations(t)
			again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.9, Quantize: q})
			if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
				t.Fatal(err)
			}
			if got, ok := again.Calibration(); !ok || got != want {
				t.Fatalf("calibration on return from ReadFrom: %+v, %v; want the saved %+v", got, ok, want)
			}
			ctx := context.Background()
			for i, v := range ds.Queries[:50] {
				a, err := ix.Search(ctx, v, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				b, err := again.Search(ctx, v, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				if len(a) != len(b) {
					t.Fatalf("query %d: %d results saved, %d loaded", i, len(a), len(b))
				}
				for j := range a {
					if a[j].ID != b[j].ID {
						t.Fatalf("query %d result %d: %v saved, %v loaded", i, j, a[j], b[j])
					}
				}
			}
			if s := again.TargetSearches(); s.Graph != 50 || s.Exact != 0 {
				t.Errorf("searches under the target: %+v, want 50 on the graph", s)
			}
			again.WaitIdle()
			if n := calibrations.Load(); n != 0 {
				t.Errorf("%d calibrations ran after the load", n)
			}
			if got, _ := again.Calibration(); got != want {
				t.Errorf("calibration after the load: %+v, want the saved %+v", got, want)
			}
		})
	}
}

// TestSavedCalibrationDeletes: the deletes counted since the calibration
// are saved with it, so that the loaded graph recalibrates once a quarter
// of it has gone in all, as the saved one would have.
func TestSavedCalibrationDeletes(t *testing.T) {
	ix, _ := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9})
	want, _ := ix.Calibration()
	ctx := context.Background()
	for id := range vector.ID(200) { // a sixth: no recalibration
		if err := ix.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ix.WaitIdle()
	if got, _ := ix.Calibration(); got != want {
		t.Fatalf("recalibrated after deleting a sixth: %+v", got)
	}
	graph := saveGraph(t, ix, 4)
	again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.9})
	if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
		t.Fatal(err)
	}
	if got, _ := again.Calibration(); got != want {
		t.Fatalf("calibration loaded: %+v, want %+v", got, want)
	}
	// A tenth more: a quarter in all from the 300th, which starts a
	// calibration (of the 900 vectors left, or fewer, as the deletes go
	// on beside it). Without the 200 saved, 120 deletes would start none.
	for id := vector.ID(200); id < 320; id++ {
		if err := again.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	got, _, _ := again.WaitCalibration(ctx)
	if got.Len < 880 || got.Len > 900 {
		t.Errorf("calibration after deleting 320 of 1200 across the save: %+v, want one of 880 to 900 vectors", got)
	}
}

// TestSavedCalibrationRealQueries: a graph loaded with a calibration on
// held-out vectors keeps the real queries it answers, and recalibrates on
// them by the usual rule, as the saved index would have.
func TestSavedCalibrationRealQueries(t *testing.T) {
	ix, ds := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9})
	graph := saveGraph(t, ix, 4)
	again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.9})
	if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
		t.Fatal(err)
	}
	if c, ok := again.Calibration(); !ok || c.Source != hnsw.SourceHeldOut {
		t.Fatalf("calibration loaded: %+v, %v; want one on held-out vectors", c, ok)
	}
	ctx := context.Background()
	for _, q := range ds.Queries[:hnsw.CalibrationQueries+1] {
		if _, err := again.Search(ctx, q, 10, nil); err != nil {
			t.Fatal(err)
		}
	}
	if c, _, _ := again.WaitCalibration(ctx); c.Source != hnsw.SourceQueries || c.Queries != hnsw.CalibrationQueries+1 {
		t.Errorf("calibration after %d real queries: %+v, want one on them", hnsw.CalibrationQueries+1, c)
	}
}

// TestSavedCalibrationOldFormat: a graph saved without a calibration (by
// an index without a target here: the version-1 bytes every build wrote)
// loads into an index with a target without one, and calibrates in the
// background as before.
func TestSavedCalibrationOldFormat(t *testing.T) {
	ix, _ := hardIndex(t, 1200, hnsw.Options{})
	graph := saveGraph(t, ix, 1)
	calibrations := countCalibrations(t)
	again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.9})
	if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
		t.Fatal(err)
	}
	c, ok, err := again.WaitCalibration(context.Background())
	if err != nil || !ok || c.Target != 0.9 || c.Len != 1200 {
		t.Fatalf("calibration of a version-1 graph: %+v, %v, %v", c, ok, err)
	}
	if n := calibrations.Load(); n != 1 {
		t.Errorf("%d calibrations after the load, want 1", n)
	}
}

// TestSavedCalibrationOtherTarget: a saved calibration made for another
// recall@K, or read by an index without a target, is ignored: the loaded
// graph has none until the one its load starts ends, which measures for
// the reading index's target.
func TestSavedCalibrationOtherTarget(t *testing.T) {
	ix, _ := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9})
	graph := saveGraph(t, ix, 4)
	for _, o := range []hnsw.Options{{TargetRecall: 0.95}, {TargetRecall: 0.9, TargetK: 5}, {}} {
		calibrations := countCalibrations(t)
		again := newIndex(t, ix.Store(), &o)
		if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
			t.Fatal(err)
		}
		if c, ok := again.Calibration(); ok && o.TargetRecall == 0 || ok && c.Target == 0.9 && c.K == 10 {
			t.Errorf("%+v: the saved calibration was kept: %+v", o, c)
		}
		c, ok, _ := again.WaitCalibration(context.Background())
		wantK := o.TargetK
		if wantK == 0 {
			wantK = hnsw.DefaultTargetK
		}
		switch {
		case o.TargetRecall == 0:
			if ok || calibrations.Load() != 0 {
				t.Errorf("no target: calibration %+v, %v after %d runs", c, ok, calibrations.Load())
			}
		case !ok || c.Target != o.TargetRecall || c.K != wantK:
			t.Errorf("%+v: calibration after the load %+v, %v", o, c, ok)
		case calibrations.Load() != 1:
			t.Errorf("%+v: %d calibrations after the load, want 1", o, calibrations.Load())
		}
	}
}

// TestSavedCalibrationOtherWalk: a graph saved with its calibration by an
// index without quantization loads into an int8 one as a version-1 graph
// does, with codes trained at the load; the calibration, measured on the
// float32 walk, is dropped, and the loaded graph calibrates on its codes.
func TestSavedCalibrationOtherWalk(t *testing.T) {
	ix, _ := hardIndex(t, 1200, hnsw.Options{TargetRecall: 0.9})
	graph := saveGraph(t, ix, 4)
	calibrations := countCalibrations(t)
	again := newIndex(t, ix.Store(), &hnsw.Options{TargetRecall: 0.9, Quantize: hnsw.QuantizeInt8})
	if _, err := again.ReadFrom(bytes.NewReader(graph)); err != nil {
		t.Fatal(err)
	}
	if q := again.Options().Quantize; q != hnsw.QuantizeInt8 || again.Quantizer() == nil {
		t.Fatalf("loaded with quantization %v, quantizer %v; want int8 codes", q, again.Quantizer())
	}
	if c, ok := again.Calibration(); ok {
		t.Errorf("the float32 walk's calibration was kept for the codes: %+v", c)
	}
	if c, ok, _ := again.WaitCalibration(context.Background()); !ok || c.Len != 1200 || calibrations.Load() != 1 {
		t.Errorf("calibration after the load: %+v, %v, after %d runs", c, ok, calibrations.Load())
	}
}

// calibratedTiny is the graph of tinyGraph's vectors (less id 107) saved
// by an index with a target of 0.9, calibrated: exact, being small.
func calibratedTiny(t testing.TB) []byte {
	ds := recall.Clustered(40, 1, 4, 3)
	s := memStore(t, 4, vector.L2)
	ix := newIndex(t, s, &hnsw.Options{M: 4, EfConstruction: 16, TargetRecall: 0.9})
	for i, v := range ds.Base {
		if i == 7 {
			continue
		}
		if err := ix.Add(context.Background(), vector.ID(100+i), v); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := ix.Calibrate(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	return saveGraph(t, ix, 4)
}

// TestSavedCalibrationBad damages each field of a saved calibration: the
// checksum catches a flipped bit, and with the checksum made good again
// the decoder refuses every value no calibration holds, with ErrCorrupt;
// the index is left unchanged.
func TestSavedCalibrationBad(t *testing.T) {
	good := calibratedTiny(t)
	// The body starts at 20; the calibration follows the options (33
	// bytes) and the empty quantizer's fields (9).
	const at = 20 + 33 + 9
	le := binary.LittleEndian
	if math.Float64frombits(le.Uint64(good[at:])) != 0.9 {
		t.Fatalf("no calibration at %d", at)
	}
	_, s := tinyGraph(t)
	loaded := newIndex(t, s, &hnsw.Options{TargetRecall: 0.9})
	if _, err := loaded.ReadFrom(bytes.NewReader(good)); err != nil {
		t.Fatal(err)
	}
	if c, ok := loaded.Calibration(); !ok || !c.Exact || c.Len != 39 || c.Source != hnsw.SourceHeldOut || c.Reason == "" {
		t.Fatalf("calibration loaded: %+v, %v", c, ok)
	}
	mutate := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return fixChecksum(b)
	}
	f64 := func(off int, v float64) []byte {
		return mutate(func(b []byte) { le.PutUint64(b[at+off:], math.Float64bits(v)) })
	}
	u32 := func(off int, v uint32) []byte { return mutate(func(b []byte) { le.PutUint32(b[at+off:], v) }) }
	u8 := func(off int, v byte) []byte { return mutate(func(b []byte) { b[at+off] = v }) }
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"flipped bit", func() []byte { b := bytes.Clone(good); b[at+8] ^= 1; return b }()},
		{"target NaN", f64(0, math.NaN())},
		{"target 0", f64(0, 0)},
		{"target above 1", f64(0, 1.5)},
		{"k 0", u32(8, 0)},
		{"ef with exact", u32(12, 16)},
		{"exact flag 2", u8(16, 2)},
		{"no exact, no ef", u8(16, 0)},
		{"recall NaN", f64(17, math.NaN())},
		{"recall above 1", f64(17, 2)},
		{"standard error negative", f64(25, -1)},
		{"more real queries than queries", u32(37, 1000)},
		{"source 0", u8(41, 0)},
		{"source 9", u8(41, 9)},
		{"negative duration", mutate(func(b []byte) { le.PutUint64(b[at+46:], 1<<63) })},
		{"reason too long", u32(58, 1<<30)},
		{"reason not UTF-8", u8(62, 0xff)},
		{"truncated", fixChecksum(bytes.Clone(good[:at+30]))},
		{"QuantizeDims without Quantize", mutate(func(b []byte) { le.PutUint32(b[at-8:], 2) })},
		{"truncated at the reason", fixChecksum(bytes.Clone(good[:at+62]))},
	} {
		t.Run(c.name, func(t *testing.T) {
			ix := newIndex(t, s, &hnsw.Options{TargetRecall: 0.9})
			if _, err := ix.ReadFrom(bytes.NewReader(c.data)); !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("ReadFrom: %v, want ErrCorrupt", err)
			}
			if _, ok := ix.Calibration(); ok || ix.Len() != 0 {
				t.Errorf("after a failed load: Len %d, calibration %v", ix.Len(), ok)
			}
		})
	}
}
