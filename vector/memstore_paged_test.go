package vector_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/cairndb/cairn/internal/vectortest"
	"github.com/cairndb/cairn/vector"
)

func newPaged(t *testing.T, dim int, m vector.Metric) vector.Store {
	s, err := vector.NewPagedMemStore(dim, m, t.TempDir())
	if runtime.GOOS != "linux" {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Fatalf("NewPagedMemStore on %s: %v, want ErrUnsupported", runtime.GOOS, err)
		}
		return newMem(t, dim, m)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestPagedMemStoreConformance(t *testing.T) {
	vectortest.TestStore(t, newPaged)
}

// TestPagedMemStorePageOut fills a paged store over several chunks,
// deletes and reuses slots, pages the arena out and reads every vector
// back from the file.
func TestPagedMemStorePageOut(t *testing.T) {
	if runtime.GOOS != "linux" {
		newPaged(t, 4, vector.L2) // checks the error
		return
	}
	const dim, n = 24, 3000
	s := newPaged(t, dim, vector.L2).(*vector.MemStore)
	if !s.Paged() {
		t.Fatal("Paged() is false")
	}
	ctx := context.Background()
	r := rand.New(rand.NewPCG(1, 2))
	want := map[vector.ID]vector.Vector{}
	ids := make([]vector.ID, 0, n)
	vs := make([]vector.Vector, 0, n)
	for i := range n {
		v := make(vector.Vector, dim)
		for j := range v {
			v[j] = r.Float32()
		}
		ids, vs = append(ids, vector.ID(i)), append(vs, v)
		want[vector.ID(i)] = v
	}
	if err := s.PutBatch(ctx, ids[:n/2], vs[:n/2]); err != nil {
		t.Fatal(err)
	}
	for i := n / 2; i < n; i++ {
		if err := s.Put(ctx, ids[i], vs[i]); err != nil {
			t.Fatal(err)
		}
	}
	for i := 0; i < n; i += 3 {
		if err := s.Delete(ctx, vector.ID(i)); err != nil {
			t.Fatal(err)
		}
		delete(want, vector.ID(i))
	}
	for i := 0; i < n; i += 6 {
		id := vector.ID(n + i)
		if err := s.Put(ctx, id, vs[i]); err != nil {
			t.Fatal(err)
		}
		want[id] = vs[i]
	}
	if err := s.PageOut(); err != nil {
		t.Fatal(err)
	}
	if s.Len() != len(want) {
		t.Fatalf("Len %d, want %d", s.Len(), len(want))
	}
	for id, w := range want {
		got, err := s.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		for j := range w {
			if got[j] != w[j] {
				t.Fatalf("id %d [%d]: %v, want %v", id, j, got[j], w[j])
			}
		}
	}
	m := s.Memory()
	if !m.Paged || m.Resident() != m.Slots+m.IDMap || m.Vectors < int64(n*dim*4) {
		t.Fatalf("Memory %+v (resident %d)", m, m.Resident())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.PageOut(); !errors.Is(err, vector.ErrClosed) {
		t.Fatalf("PageOut after Close: %v", err)
	}
}

func TestPagedMemStoreBadDir(t *testing.T) {
	if _, err := vector.NewPagedMemStore(4, vector.L2, t.TempDir()+"/missing"); err == nil {
		t.Fatal("NewPagedMemStore in a missing directory succeeded")
	}
	if _, err := vector.NewPagedMemStore(0, vector.L2, t.TempDir()); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Fatalf("dimension 0: %v", err)
	}
}

func TestMemStoreNotPaged(t *testing.T) {
	s := newMem(t, 4, vector.L2).(*vector.MemStore)
	if s.Paged() || s.PageOut() != nil || s.Memory().Paged {
		t.Fatal("a MemStore in memory reports itself paged")
	}
}
