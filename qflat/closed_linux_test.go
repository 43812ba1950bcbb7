package qflat_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/vector"
)

// closeOnGet is a paged store that, once armed, closes itself right after
// the next Get, as a Close of another goroutine landing between an index's
// read of a vector and its use of it; the vector then reads as zeros.
type closeOnGet struct {
	*vector.MemStore
	armed *atomic.Bool
}

func (s closeOnGet) Get(id vector.ID) (vector.Vector, error) {
	v, err := s.MemStore.Get(id)
	if s.armed.CompareAndSwap(true, false) {
		s.MemStore.Close()
	}
	return v, err
}

// TestAddPagedStoreClosed: an Add whose paged store is closed after it
// read the vector fails with ErrClosed, where the encoder refused the
// zeros it then read as a zero vector (ErrZeroVector), whether the add
// encodes with the trained quantizer or trains it anew.
func TestAddPagedStoreClosed(t *testing.T) {
	for _, trained := range []bool{true, false} {
		ms, err := vector.NewPagedMemStore(8, vector.Cosine, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		s := closeOnGet{ms, new(atomic.Bool)}
		idx, err := qflat.New(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		vec := func(i int) vector.Vector {
			v := make(vector.Vector, 8)
			for j := range v {
				v[j] = float32((i*7+j*3)%11) - 5
			}
			v[i%8] += 20
			return v
		}
		if trained {
			for i := range 64 {
				if err := idx.Add(ctx, vector.ID(i), vec(i)); err != nil {
					t.Fatal(err)
				}
			}
		}
		s.armed.Store(true)
		if err := idx.AddBatch(ctx, []vector.ID{1000}, []vector.Vector{vec(3)}); !errors.Is(err, vector.ErrClosed) {
			t.Errorf("trained %v: AddBatch over a store closed after its Get: %v, want ErrClosed", trained, err)
		}
	}
}
