package vector_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestPagedMemStoreDiskFull fills a 1 MiB tmpfs with a paged store's
// arena: the Put or PutBatch that needs room the disk does not have
// fails with an error and stores nothing, and every vector stored before
// it reads back as it was.
func TestPagedMemStoreDiskFull(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
		t.Skipf("cannot mount a tmpfs (needs root): %v", err)
	}
	// Detached, as the store's mapping holds the file until a collection.
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	const dim = 64 // a block of 256 vectors is 64 KiB
	s, err := vector.NewPagedMemStore(dim, vector.L2, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	vec := func(i int) vector.Vector {
		v := make(vector.Vector, dim)
		for j := range v {
			v[j] = float32(i + j)
		}
		return v
	}
	n := 0
	for ; n < 1<<20; n++ {
		if err := s.Put(ctx, vector.ID(n), vec(n)); err != nil {
			if errors.Is(err, vector.ErrDuplicateID) {
				t.Fatal(err)
			}
			t.Logf("put %d: %v", n, err)
			break
		}
	}
	if n == 1<<20 || n < 256 {
		t.Fatalf("%d vectors stored in 1 MiB of disk", n)
	}
	ids := []vector.ID{vector.ID(n), vector.ID(n + 1)}
	if err := s.PutBatch(ctx, ids, []vector.Vector{vec(n), vec(n + 1)}); err == nil {
		t.Fatal("PutBatch on a full disk succeeded")
	}
	if s.Len() != n {
		t.Fatalf("Len %d after %d puts", s.Len(), n)
	}
	for _, id := range ids {
		if _, err := s.Get(id); !errors.Is(err, vector.ErrNotFound) {
			t.Fatalf("id %d of the failed writes: %v", id, err)
		}
	}
	for i := range n {
		got, err := s.Get(vector.ID(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := vec(i); got[0] != want[0] || got[dim-1] != want[dim-1] {
			t.Fatalf("id %d: %v…, want %v…", i, got[0], want[0])
		}
	}
	// Room made, writes go on.
	if err := s.Delete(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, ids[0], vec(n)); err != nil {
		t.Fatalf("put into a freed slot: %v", err)
	}
	// Close gives the disk back at once.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatal(err)
	}
	if st.Bfree != st.Blocks {
		t.Fatalf("%d of %d blocks still used after Close", st.Blocks-st.Bfree, st.Blocks)
	}
}
