package weaviate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// A 404 about an object counts only from a node that has the class's
// index. A node behind (no index, the leader's schema has the class) is
// asked again, here until it has caught up, and the object is found; a
// class the leader's schema lacks too, at every attempt (4 a Get here),
// was deleted; a node that has the
// index is believed, and asked about it once a second, not for every
// 404, as long as every node of the cluster is up with the class's
// shards loaded (/v1/nodes): with a node down, a read asks only the
// replicas up, and a 404 is no proof (the call fails, not "not found").
// Where the shards' statuses fail (a node holding one is gone), the
// nodes' view of the cluster is all there is to go by.
func TestObjectNotFoundBehind(t *testing.T) {
	const obj = `{"id":"x","properties":{"cairn_id":"a"},"vector":[1,2]}`
	for _, tc := range []struct {
		name     string
		behind   int  // how many checks of the node's schema find no class
		deleted  bool // the leader's schema has no class either
		found    bool // Get finds the item
		nodeGone bool // the shards' statuses fail; /v1/nodes has the index loaded
		down     bool // /v1/nodes has a node down
		ownReads int32
	}{
		{name: "caught up", behind: 0, ownReads: 1},
		{name: "behind", behind: 2, found: true, ownReads: 3},
		{name: "deleted", behind: 99, deleted: true, ownReads: 8},
		{name: "a node gone", behind: 99, nodeGone: true, ownReads: 1},
		{name: "a node gone and one down", behind: 99, nodeGone: true, down: true, ownReads: 8},
		{name: "a replica down", behind: 0, down: true, ownReads: 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var own atomic.Int32
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case r.URL.Path == "/v1/nodes":
					loaded := tc.nodeGone || int(own.Load()) > tc.behind
					other := "HEALTHY"
					if tc.down {
						other = "UNAVAILABLE"
					}
					fmt.Fprintf(w, `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_c","name":"s0","loaded":%v}]},{"status":%q}]}`, loaded, other)
				case strings.HasSuffix(r.URL.Path, "/shards"):
					if int(own.Add(1)) <= tc.behind {
						msg := "cannot get shards status for a non-existing index"
						if tc.nodeGone {
							msg = `shard s0: resolve node name "node2" to host`
						}
						http.Error(w, `{"error":[{"message":"`+strings.ReplaceAll(msg, `"`, `\"`)+`"}]}`, http.StatusInternalServerError)
						return true
					}
					return false // ownShards: the index is there
				case strings.HasPrefix(r.URL.Path, "/v1/schema/"):
					if tc.deleted {
						http.NotFound(w, r)
					} else {
						io.WriteString(w, `{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}"}`)
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
			c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
			for range 2 {
				_, err := c.Get(context.Background(), "a")
				switch {
				case tc.found && err != nil:
					t.Fatalf("Get = %v, want the item", err)
				case tc.down && (!errors.Is(err, ErrUnavailable) || errors.Is(err, vector.ErrNotFound)):
					t.Fatalf("Get with a node down = %v, want ErrUnavailable, not ErrNotFound", err)
				case !tc.found && !tc.down && !errors.Is(err, vector.ErrNotFound):
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

// A GraphQL answer that the node's schema has no such class (an unknown
// field of Get or Aggregate, or no GraphQL schema at all, when the node
// has no class) sends the query to the next node; it ends as not found
// only after every attempt, the leader's schema lacking the class too.
func TestGraphQLClassBehind(t *testing.T) {
	unknown := func(w http.ResponseWriter) {
		io.WriteString(w, `{"errors":[{"message":"Cannot query field \"Cairn_c\" on type \"AggregateObjectsObj\"."}]}`)
	}
	noProvider := func(w http.ResponseWriter) {
		http.Error(w, `{"error":[{"message":"no graphql provider present, this is most likely because no schema is present. Import a schema first!"}]}`, http.StatusUnprocessableEntity)
	}
	for _, tc := range []struct {
		name    string
		say     func(http.ResponseWriter)
		behind  int32 // answers of the node's that lack the class
		deleted bool  // the leader's schema lacks it too
		queries int32 // GraphQL requests, the one answered included
	}{
		{name: "unknown field", say: unknown, behind: 2, queries: 3},
		{name: "no provider", say: noProvider, behind: 1, queries: 2},
		{name: "deleted", say: unknown, behind: 99, deleted: true, queries: 4},
		{name: "deleted, no provider", say: noProvider, behind: 99, deleted: true, queries: 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var queries atomic.Int32
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case r.URL.Path == "/v1/graphql":
					if queries.Add(1) <= tc.behind {
						tc.say(w)
					} else {
						io.WriteString(w, `{"data":{"Aggregate":{"Cairn_c":[{"meta":{"count":7}}]}}}`)
					}
				case r.URL.Path == "/v1/schema/Cairn_c":
					if tc.deleted {
						http.NotFound(w, r)
					} else {
						io.WriteString(w, `{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}"}`)
					}
				default:
					return false
				}
				return true
			})
			var out struct {
				Aggregate map[string][]struct {
					Meta struct{ Count int } `json:"meta"`
				} `json:"Aggregate"`
			}
			err := db.cl.graphQL(context.Background(), "Cairn_c", "{ Aggregate { Cairn_c { meta { count } } } }", &out)
			switch {
			case tc.deleted && !(errors.Is(err, ErrUnavailable) && errors.Is(err, vector.ErrNotFound)):
				t.Fatalf("graphQL = %v, want ErrUnavailable wrapping ErrNotFound", err)
			case !tc.deleted && (err != nil || out.Aggregate["Cairn_c"][0].Meta.Count != 7):
				t.Fatalf("graphQL = %v, %+v, want the count", err, out)
			}
			if queries.Load() != tc.queries {
				t.Errorf("%d GraphQL requests, want %d", queries.Load(), tc.queries)
			}
		})
	}
}

// A call that found the class absent from the leader's schema, then ran
// out of time on a node that did not answer, still says the class was
// not found: a deleted collection, whose first call after the delete
// can wait on a node dropping the index, is told apart from a cluster
// that is only down.
func TestClassAbsentThenTimeout(t *testing.T) {
	var queries atomic.Int32
	hang := make(chan struct{})
	db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.URL.Path == "/v1/graphql":
			if queries.Add(1) == 1 {
				io.WriteString(w, `{"errors":[{"message":"Cannot query field \"Cairn_c\" on type \"GetObjectsObj\"."}]}`)
			} else {
				<-hang // a node that answers nothing within the call's bound
			}
		case r.URL.Path == "/v1/schema/Cairn_c":
			http.NotFound(w, r)
		default:
			return false
		}
		return true
	})
	t.Cleanup(func() { close(hang) }) // before the server's Close, which waits for its handlers
	db.cl.opt.Timeout = time.Second
	err := db.cl.graphQL(context.Background(), "Cairn_c", "{ Get { Cairn_c { cairn_id } } }", new(any))
	if !errors.Is(err, ErrUnavailable) || !errors.Is(err, vector.ErrNotFound) {
		t.Fatalf("graphQL = %v, want ErrUnavailable wrapping ErrNotFound", err)
	}
}

// The leader's word that its schema lacks a class counts only if no
// node's own schema holds it (a leader elected a moment ago can lack a
// class that exists): Collection then finds the class on another attempt;
// it says not found at once only when no node holds the class.
func TestLeaderBehindOnClass(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lacks   int32 // the leader's first answers that lack the class
		held    bool  // the nodes' own schemas hold it
		wantErr error
		retries int64
	}{
		{name: "leader behind", lacks: 2, held: true, retries: 2},
		{name: "deleted", lacks: 99, held: false, wantErr: vector.ErrNotFound},
		{name: "leader behind to the end", lacks: 99, held: true, wantErr: ErrUnavailable, retries: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked atomic.Int32
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/v1/schema/Cairn_c" {
					return false
				}
				if leader := r.URL.Query().Get("consistency") == "true"; leader && asked.Add(1) <= tc.lacks || !leader && !tc.held {
					http.NotFound(w, r)
					return true
				}
				return false // classC answers
			})
			_, err := db.Collection(context.Background(), "c")
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("Collection = %v, want %v", err, tc.wantErr)
			}
			if errors.Is(tc.wantErr, vector.ErrNotFound) && errors.Is(err, ErrUnavailable) {
				t.Errorf("Collection = %v: a class no node holds is not found, not unavailable", err)
			}
			if errors.Is(tc.wantErr, ErrUnavailable) && errors.Is(err, vector.ErrNotFound) {
				t.Errorf("Collection = %v: a class a node holds is not gone", err)
			}
			if db.Retries() != tc.retries {
				t.Errorf("%d retries, want %d", db.Retries(), tc.retries)
			}
		})
	}
}

// Collections leaves out a collection whose count fails only once its
// class is gone from every schema. A node behind on the schema, with the
// leader behind too, makes the list fail with ErrUnavailable, not shrink;
// a class deleted while it is counted, which the node's GraphQL says in
// gRPC's words, is left out.
func TestCollectionsWhileCounting(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answer  string // GraphQL's answer to the count
		gone    bool   // every schema lacks the class
		wantErr error
	}{
		{name: "node and leader behind", answer: `{"errors":[{"message":"Cannot query field \"Cairn_c\" on type \"AggregateObjectsObj\"."}]}`, wantErr: ErrUnavailable},
		{name: "deleted meanwhile", answer: `{"data":{"Aggregate":{"Cairn_c":null}},"errors":[{"message":"could not find class Cairn_c in schema"}]}`, gone: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case r.URL.Path == "/v1/schema":
					io.WriteString(w, `{"classes":[{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}"}]}`)
				case r.URL.Path == "/v1/graphql":
					io.WriteString(w, tc.answer)
				case r.URL.Path == "/v1/schema/Cairn_c" && (tc.gone || r.URL.Query().Get("consistency") == "true"):
					http.NotFound(w, r) // the leader's schema lacks it; the nodes' own hold it unless gone
				default:
					return false
				}
				return true
			})
			db.cl.opt.MaxAttempts = 2
			infos, err := db.Collections(context.Background())
			switch {
			case tc.wantErr != nil && !errors.Is(err, tc.wantErr):
				t.Fatalf("Collections = %v, %v; want an error wrapping %v", infos, err, tc.wantErr)
			case tc.wantErr == nil && (err != nil || len(infos) != 0):
				t.Fatalf("Collections = %v, %v; want none, no error", infos, err)
			}
		})
	}
}

// A property the leader refuses to add for want of its class is added on
// another attempt while a node's own schema holds the class; once none
// does, the class is gone and the error says so.
func TestAddPropertyLeaderBehind(t *testing.T) {
	const lacks = `{"error":[{"message":"class \"Cairn_c\": not found"}]}`
	for _, tc := range []struct {
		name    string
		gone    bool
		wantErr error
	}{
		{name: "leader behind", wantErr: nil},
		{name: "deleted", gone: true, wantErr: vector.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var posts atomic.Int32
			db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case r.Method == http.MethodPost && r.URL.Path == "/v1/schema/Cairn_c/properties":
					if posts.Add(1) == 1 || tc.gone {
						http.Error(w, lacks, http.StatusUnprocessableEntity)
					}
				case r.URL.Path == "/v1/schema/Cairn_c" && tc.gone:
					http.NotFound(w, r)
				default:
					return false
				}
				return true
			})
			err := db.addProperty(context.Background(), "Cairn_c", "n", typeNumber)
			if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
				t.Fatalf("addProperty = %v, want %v", err, tc.wantErr)
			}
			if want := map[bool]int32{false: 2, true: 1}[tc.gone]; posts.Load() != want {
				t.Errorf("%d attempts, want %d", posts.Load(), want)
			}
		})
	}
}

// heldBy stops asking once a node holds the class; the nodes whose
// answers it no longer waits for are not skipped afterwards as if they
// had failed to answer.
func TestHeldByShunsNoOne(t *testing.T) {
	holds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"class":"Cairn_c"}`)
	}))
	defer holds.Close()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done() // answers only once the asker gives up
	}))
	defer slow.Close()
	o, err := (&Options{}).withDefaults(2)
	if err != nil {
		t.Fatal(err)
	}
	cl, err := newClient([]string{holds.URL, slow.URL}, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := cl.heldBy(context.Background(), "Cairn_c"); n != 0 {
		t.Fatalf("heldBy = %d, want 0", n)
	}
	time.Sleep(50 * time.Millisecond) // the slow ask's end
	if until := cl.ring.avoid[1].Load(); until > time.Now().UnixNano() {
		t.Errorf("the node heldBy stopped waiting for is skipped for %v", time.Until(time.Unix(0, until)))
	}
}
