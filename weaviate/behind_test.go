package weaviate

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// A 404 about an object counts only from a node that has the class's
// index. A node behind (no index, the leader's schema has the class) is
// asked again, here until it has caught up, and the object is found; a
// class the leader's schema lacks too, at every attempt (4 a Get here),
// was deleted; a node that has the
// index is believed, and asked about it once a second, not for every
// 404.
func TestObjectNotFoundBehind(t *testing.T) {
	const obj = `{"id":"x","properties":{"cairn_id":"a"},"vector":[1,2]}`
	for _, tc := range []struct {
		name     string
		behind   int  // how many checks of the node's schema find no class
		deleted  bool // the leader's schema has no class either
		found    bool // Get finds the item
		ownReads int32
	}{
		{name: "caught up", behind: 0, ownReads: 1},
		{name: "behind", behind: 2, found: true, ownReads: 3},
		{name: "deleted", behind: 99, deleted: true, ownReads: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own atomic.Int32
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case strings.HasSuffix(r.URL.Path, "/shards"):
					if int(own.Add(1)) <= tc.behind {
						http.Error(w, `{"error":[{"message":"cannot get shards status for a non-existing index"}]}`, http.StatusInternalServerError)
						return true
					}
					return false // ownShards: the index is there
				case strings.HasPrefix(r.URL.Path, "/v1/schema/"):
					if tc.deleted {
						http.NotFound(w, r)
					} else {
						io.WriteString(w, `{"class":"Cairn_c"}`)
					}
				case strings.HasPrefix(r.URL.Path, "/v1/objects/"):
					// A node behind on the schema answers 404, whatever
					// it stores.
					if int(own.Load()) <= tc.behind || !tc.found {
						http.NotFound(w, r)
					} else {
						io.WriteString(w, obj)
					}
				default:
					return false
				}
				return true
			})
			c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, nil)
			for range 2 {
				_, err := c.Get(context.Background(), "a")
				switch {
				case tc.found && err != nil:
					t.Fatalf("Get = %v, want the item", err)
				case !tc.found && !errors.Is(err, vector.ErrNotFound):
					t.Fatalf("Get = %v, want ErrNotFound", err)
				case tc.deleted && (!errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "class Cairn_c")):
					t.Fatalf("Get = %v, want ErrUnavailable naming the class as not found", err)
				}
			}
			if own.Load() != tc.ownReads {
				t.Errorf("the node's shards were asked for %d times, want %d", own.Load(), tc.ownReads)
			}
		})
	}
}
