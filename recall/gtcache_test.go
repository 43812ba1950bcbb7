package recall_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cairndb/cairn/recall"
)

func TestCachedGroundTruth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	ds := recall.Clustered(500, 30, 16, 1)
	path := filepath.Join(dir, ds.Name+".gt.ivecs")
	want, err := recall.GroundTruth(ctx, ds, 10)
	if err != nil {
		t.Fatal(err)
	}
	progressed := false
	gt, reused, err := recall.CachedGroundTruth(ctx, ds, 10, path, func(d, n int) { progressed = true })
	if err != nil || reused || !progressed {
		t.Fatalf("first run: reused %v, progress %v, %v", reused, progressed, err)
	}
	if !slices.EqualFunc(gt, want, slices.Equal) {
		t.Fatal("first run gave wrong ground truth")
	}
	// The file holds the top 100, whatever k was asked.
	rows, err := recall.LoadIvecs(path)
	if err != nil || len(rows) != 30 || len(rows[0]) != recall.GroundTruthK {
		t.Fatalf("cache file: %d rows of %d, %v", len(rows), len(rows[0]), err)
	}
	info, _ := os.Stat(path)

	gt, reused, err = recall.CachedGroundTruth(ctx, ds, 10, path, func(d, n int) { t.Error("recomputed") })
	if err != nil || !reused || !slices.EqualFunc(gt, want, slices.Equal) {
		t.Fatalf("second run: reused %v, %v", reused, err)
	}
	if info2, _ := os.Stat(path); !info2.ModTime().Equal(info.ModTime()) {
		t.Error("cache file rewritten on reuse")
	}
	gt100, reused, err := recall.CachedGroundTruth(ctx, ds, 100, path, nil)
	if err != nil || !reused || len(gt100[0]) != 100 {
		t.Fatalf("k=100 from cache: %v %v", reused, err)
	}

	// Foreign, truncated or mis-shaped files are recomputed and replaced.
	other := recall.Clustered(500, 30, 16, 2)
	otherTruth, _ := recall.GroundTruth(ctx, other, 100)
	for name, setup := range map[string]func(){
		"other-seed":   func() { recall.SaveIvecs(path, otherTruth) },
		"truncated":    func() { b, _ := os.ReadFile(path); os.WriteFile(path, b[:len(b)-3], 0o644) },
		"fewer-rows":   func() { recall.SaveIvecs(path, want[:5]) },
		"too-shallow":  func() { recall.SaveIvecs(path, [][]int32{{1}}) },
		"out-of-range": func() { r := slices.Clone(want); r[4] = slices.Repeat([]int32{9999}, 10); recall.SaveIvecs(path, r) },
	} {
		t.Run(name, func(t *testing.T) {
			setup()
			gt, reused, err := recall.CachedGroundTruth(ctx, ds, 10, path, nil)
			if err != nil || reused || !slices.EqualFunc(gt, want, slices.Equal) {
				t.Fatalf("reused %v, %v", reused, err)
			}
			if _, reused, _ := recall.CachedGroundTruth(ctx, ds, 10, path, nil); !reused {
				t.Error("rewritten cache not reused")
			}
		})
	}
}
