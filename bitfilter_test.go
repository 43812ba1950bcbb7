package cairn

import (
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestBitFilter checks the bitmap allow-list over dense ids, over ids far
// from 0 but close together, and its refusal of sparse ids, whose span no
// bitmap should be sized by.
func TestBitFilter(t *testing.T) {
	const far = vector.ID(1) << 50
	var dense []vector.ID
	for id := vector.ID(1); id < 1000; id += 3 {
		dense = append(dense, id)
	}
	for _, tc := range []struct {
		name   string
		next   vector.ID
		ids    []vector.ID
		bitmap bool
	}{
		{"dense", 1000, dense, true},
		{"far but close together", far + 300, []vector.ID{far, far + 1, far + 64, far + 100, far + 299}, true},
		{"sparse", far + 2, []vector.ID{1, 2, 3, far + 1}, false},
	} {
		set := map[vector.ID]struct{}{}
		for _, id := range tc.ids {
			set[id] = struct{}{}
		}
		for _, m := range []matched{{ids: tc.ids}, {set: set}} {
			b, ok := newBitFilter(tc.next, m)
			if ok != tc.bitmap {
				t.Fatalf("%s: bitmap %v, want %v", tc.name, ok, tc.bitmap)
			}
			if !ok {
				continue
			}
			if len(b.words) > len(tc.ids)+1 {
				t.Fatalf("%s: %d words for %d ids", tc.name, len(b.words), len(tc.ids))
			}
			for _, id := range tc.ids {
				if !b.Allow(id) {
					t.Fatalf("%s: %d not allowed", tc.name, id)
				}
			}
			for _, id := range []vector.ID{0, tc.ids[0] + 3, tc.next, tc.next + 64, far - 1, ^vector.ID(0)} {
				if _, in := set[id]; !in && b.Allow(id) {
					t.Fatalf("%s: %d allowed", tc.name, id)
				}
			}
		}
	}
}
