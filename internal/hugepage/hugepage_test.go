package hugepage

import (
	"testing"
	"unsafe"
)

// TestAllocShapes checks that every size comes back zeroed, of the length
// and capacity asked, and that an array of MinBytes or more starts on a
// huge-page boundary whenever the system gives huge pages at all.
func TestAllocShapes(t *testing.T) {
	for _, on := range []bool{true, false} {
		old := SetEnabled(on)
		for _, n := range []int{0, 1, 1000, MinBytes/4 - 1, MinBytes / 4, MinBytes/4 + 12345, 3 * MinBytes / 4} {
			f, u := Float32s(n), Uint32s(n)
			if len(f) != n || cap(f) != n || len(u) != n || cap(u) != n {
				t.Fatalf("on=%v n=%d: len/cap %d/%d and %d/%d", on, n, len(f), cap(f), len(u), cap(u))
			}
			for i := range f {
				if f[i] != 0 || u[i] != 0 {
					t.Fatalf("on=%v n=%d: element %d not zero", on, n, i)
				}
			}
			wantHuge := on && n*4 >= MinBytes && mode() != modeNever
			if got := AllocBytes(n); wantHuge && got != 4*n+Size || !wantHuge && got != 4*n {
				t.Errorf("on=%v n=%d: AllocBytes %d", on, n, got)
			}
			if wantHuge {
				if a := uintptr(unsafe.Pointer(unsafe.SliceData(f))); a%Size != 0 {
					t.Errorf("on=%v n=%d: array at %#x, not on a huge-page boundary", on, n, a)
				}
				if a := uintptr(unsafe.Pointer(unsafe.SliceData(u))); a%Size != 0 {
					t.Errorf("on=%v n=%d: array at %#x, not on a huge-page boundary", on, n, a)
				}
			}
			// The whole array is writable.
			if n > 0 {
				f[n-1], u[n-1] = 1, 1
			}
		}
		SetEnabled(old)
	}
}

// TestAdvise checks that the advice is accepted for an aligned range of
// the heap and withdrawn again, where the system offers huge pages.
func TestAdvise(t *testing.T) {
	if mode() != modeMadvise {
		t.Skip("transparent huge pages not in madvise mode")
	}
	buf := make([]byte, 3*Size)
	a := uintptr(unsafe.Pointer(unsafe.SliceData(buf)))
	start := (a + Size - 1) &^ (Size - 1)
	if err := advise(start, Size, true); err != nil {
		t.Fatalf("advise on: %v", err)
	}
	if err := advise(start, Size, false); err != nil {
		t.Fatalf("advise off: %v", err)
	}
	if err := advise(start+1, Size, true); err == nil {
		t.Error("advice on an unaligned address accepted")
	}
}
