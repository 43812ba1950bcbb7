package weaviate

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// A write that waits for another write of the same ids gives up at its
// own bound, with ErrUnavailable, while the other still runs: the wait is
// part of the call. (Before, it waited for the other to end, however
// long.)
func TestWriteWaitsWithinBound(t *testing.T) {
	release, started := make(chan struct{}), make(chan struct{})
	var reads atomic.Int32
	db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/v1/objects/") {
			return false
		}
		if reads.Add(1) == 1 {
			close(started)
			<-release // the first write's duplicate check hangs, then fails
			http.Error(w, `{"error":[{"message":"bad request"}]}`, http.StatusBadRequest)
			return true
		}
		http.NotFound(w, r)
		return true
	})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the server's Close, which waits for its handlers
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	item := cairn.Item{ID: "a", Embedding: []float32{1, 2}}
	first := make(chan error, 1)
	go func() { first <- c.Add(context.Background(), item) }()
	<-started // the first write holds the id's stripe, and is stuck
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.Add(ctx, item)
	if !errors.Is(err, ErrUnavailable) {
		t.Fatalf("a second write of the same id: %v, want ErrUnavailable", err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first write ended (%v) before the second gave up", err)
	default:
	}
	free()
	if err := <-first; err == nil {
		t.Fatal("the first write, its duplicate check refused, succeeded")
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := db.lockIDs(canceled, "Cairn_c", []string{"a"}); !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) {
		t.Fatalf("lockIDs with a canceled ctx: %v, want context.Canceled and not ErrUnavailable", err)
	}
}
