package vector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/vector"
)

func newMem(t *testing.T, dim int, m vector.Metric) vector.Store {
	s, err := vector.NewMemStore(dim, m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMemStoreConformance(t *testing.T) {
	vectortest.TestStore(t, newMem)
}

func TestNewMemStoreBadOptions(t *testing.T) {
	for _, c := range []struct {
		dim int
		m   vector.Metric
	}{{0, vector.Cosine}, {-3, vector.L2}, {4, 0}, {4, 9}} {
		if _, err := vector.NewMemStore(c.dim, c.m); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("NewMemStore(%d, %v) = %v, want ErrInvalidOptions", c.dim, c.m, err)
		}
	}
}

func TestMemStoreClosed(t *testing.T) {
	s, _ := vector.NewMemStore(2, vector.L2)
	ctx := context.Background()
	_ = s.Put(ctx, 1, vector.Vector{1, 2})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, 2, vector.Vector{1, 2}); !errors.Is(err, vector.ErrClosed) {
		t.Errorf("Put after Close = %v", err)
	}
	if _, err := s.Get(1); !errors.Is(err, vector.ErrClosed) {
		t.Errorf("Get after Close = %v", err)
	}
	if err := s.ForEach(func(vector.ID, vector.Vector) error { return nil }); !errors.Is(err, vector.ErrClosed) {
		t.Errorf("ForEach after Close = %v", err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func TestSlotReuse(t *testing.T) {
	s, _ := vector.NewMemStore(4, vector.L2)
	ctx := context.Background()
	for round := range 5 {
		for i := range 1000 {
			if err := s.Put(ctx, vector.ID(round*1000+i), vector.Vector{1, 2, 3, float32(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for i := range 1000 {
			if err := s.Delete(ctx, vector.ID(round*1000+i)); err != nil {
				t.Fatal(err)
			}
		}
	}
	slots := 0
	_ = s.ViewBlocks(func(bs []vector.Block) error {
		for _, b := range bs {
			slots += len(b.IDs)
		}
		return nil
	})
	if slots != 1000 {
		t.Fatalf("arena has %d slots after 5 rounds of 1000 puts and deletes, want 1000", slots)
	}
}

func TestResultOrdering(t *testing.T) {
	top := vector.NewTopK(3)
	for i, d := range []float32{5, 1, 3, 1, 0.5, 9, 3} {
		top.Push(vector.ID(10-i), d)
	}
	got := top.Results()
	want := []vector.Result{{ID: 6, Distance: 0.5}, {ID: 7, Distance: 1}, {ID: 9, Distance: 1}}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("TopK results = %v, want %v", got, want)
		}
	}
}
