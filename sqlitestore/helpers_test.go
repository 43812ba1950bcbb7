package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// openTemp opens a new database in a temporary directory and closes it
// (after an integrity check) when the test ends.
func openTemp(t testing.TB, o *Options) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "test.cairn")
	db, err := Open(context.Background(), path, o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := db.IntegrityCheck(context.Background()); err != nil && err != vector.ErrClosed {
			t.Errorf("integrity check: %v", err)
		}
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db, path
}

func mustCollection(t testing.TB, db *DB, name string, dim int, m vector.Metric) *Collection {
	t.Helper()
	c, err := db.CreateCollection(context.Background(), name, CollectionConfig{Dim: dim, Metric: m})
	if err != nil {
		t.Fatalf("CreateCollection: %v", err)
	}
	return c
}

// vecFor returns the deterministic vector of id: every test that checks
// contents after a reopen or a crash recomputes it from the id alone.
func vecFor(id vector.ID, dim int) vector.Vector {
	r := rand.New(rand.NewPCG(uint64(id), 0x5eed))
	v := make(vector.Vector, dim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

func metaFor(id vector.ID) []byte {
	b, _ := json.Marshal(map[string]any{"id": uint64(id), "tag": fmt.Sprintf("t%d", id%7)})
	return b
}

func itemFor(id vector.ID, dim int) Item {
	return Item{ID: id, Key: fmt.Sprintf("k%d", id), Vector: vecFor(id, dim), Text: fmt.Sprintf("text of %d", id), Metadata: metaFor(id)}
}

func equalVec(a, b vector.Vector) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// checkItem reports whether it is exactly itemFor(it.ID).
func checkItem(it Item, dim int) error {
	want := itemFor(it.ID, dim)
	switch {
	case it.Key != want.Key:
		return fmt.Errorf("id %d: key %q, want %q", it.ID, it.Key, want.Key)
	case it.Text != want.Text:
		return fmt.Errorf("id %d: text %q, want %q", it.ID, it.Text, want.Text)
	case string(it.Metadata) != string(want.Metadata):
		return fmt.Errorf("id %d: metadata %s, want %s", it.ID, it.Metadata, want.Metadata)
	case !equalVec(it.Vector, want.Vector):
		return fmt.Errorf("id %d: vector differs", it.ID)
	}
	return nil
}
