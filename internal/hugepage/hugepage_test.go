package hugepage

import (
	"errors"
	"slices"
	"testing"
	"unsafe"
)

// TestAllocShapes checks that every size comes back zeroed, of the length
// and capacity asked, and writable to its end.
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
			// The whole array is writable.
			if n > 0 {
				f[n-1], u[n-1] = 1, 1
			}
		}
		SetEnabled(old)
	}
}

// TestInterior checks that the range advised for an array is made of
// whole huge pages inside it, and leaves less than a huge page out at
// each end.
func TestInterior(t *testing.T) {
	for _, base := range []uintptr{0, 1, Size - 4, Size, Size + 4096, 7*Size + 12} {
		for _, size := range []uintptr{0, 4, Size - 1, Size, 2 * Size, MinBytes, MinBytes + 5, 9*Size + 3} {
			start, length := interior(base, size)
			if length == 0 {
				if base+size >= (base+Size-1)&^(Size-1)+Size {
					t.Errorf("interior(%#x, %#x): none, but a huge page fits", base, size)
				}
				continue
			}
			if start%Size != 0 || length%Size != 0 {
				t.Errorf("interior(%#x, %#x) = %#x, %#x: not whole huge pages", base, size, start, length)
			}
			if start < base || start+length > base+size {
				t.Errorf("interior(%#x, %#x) = %#x, %#x: outside the array", base, size, start, length)
			}
			if start-base >= Size || base+size-(start+length) >= Size {
				t.Errorf("interior(%#x, %#x) = %#x, %#x: leaves a huge page out", base, size, start, length)
			}
		}
	}
	if _, length := interior(Size-4, MinBytes); length == 0 {
		t.Error("an array of MinBytes holds no whole huge page")
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

// TestLedger checks that an array's cleanup withdraws the advice only
// from the pages no newer array has claimed: Go may reuse the memory of a
// garbage array for a new one before the old one's cleanup runs.
func TestLedger(t *testing.T) {
	type call struct {
		start, length uintptr
		on            bool
	}
	var calls []call
	refuse := false
	l := ledger{owner: map[uintptr]uint64{}, advise: func(start, length uintptr, on bool) error {
		if refuse {
			return errors.New("refused")
		}
		calls = append(calls, call{start, length, on})
		return nil
	}}
	a, okA := l.claim(1*Size, 4*Size) // pages 1..4
	b, okB := l.claim(3*Size, 3*Size) // pages 3..5: a's last two reused
	if !okA || !okB {
		t.Fatal("claims refused")
	}
	calls = nil
	l.release(a)
	if want := []call{{1 * Size, 2 * Size, false}}; !slices.Equal(calls, want) {
		t.Fatalf("releasing the older claim: %v, want %v", calls, want)
	}
	calls = nil
	l.release(b)
	if want := []call{{3 * Size, 3 * Size, false}}; !slices.Equal(calls, want) {
		t.Fatalf("releasing the newer claim: %v, want %v", calls, want)
	}
	if len(l.owner) != 0 {
		t.Fatalf("pages left in the ledger: %v", l.owner)
	}

	// A claim in the middle of an older one splits its withdrawal.
	a, _ = l.claim(1*Size, 5*Size)
	_, _ = l.claim(3*Size, Size)
	calls = nil
	l.release(a)
	if want := []call{{1 * Size, 2 * Size, false}, {4 * Size, 2 * Size, false}}; !slices.Equal(calls, want) {
		t.Fatalf("releasing around a newer claim: %v, want %v", calls, want)
	}

	// No pages, or advice refused: no claim, nothing recorded.
	if _, ok := l.claim(8*Size, 0); ok {
		t.Error("a claim of no pages")
	}
	refuse = true
	if _, ok := l.claim(8*Size, Size); ok {
		t.Error("a claim the system refused")
	}
	if _, ok := l.owner[8*Size]; ok {
		t.Error("a refused claim recorded its page")
	}
}
