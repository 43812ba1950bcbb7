package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// An unreachable cluster is an error wrapping ErrUnavailable within the
// call's time bound, whether nothing listens or a listener never answers.
func TestUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accept and never answer
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(io.Discard, c) }()
		}
	}()
	refused, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := refused.Addr().String()
	refused.Close()
	for _, addrs := range [][]string{{closed}, {ln.Addr().String()}, {closed, ln.Addr().String()}} {
		t0 := time.Now()
		_, err := Open(context.Background(), addrs, &Options{Timeout: time.Second, AttemptTimeout: 200 * time.Millisecond})
		took := time.Since(t0)
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Open(%v) = %v, want ErrUnavailable", addrs, err)
		}
		if took > 3*time.Second {
			t.Fatalf("Open(%v) took %v with a 1 s timeout", addrs, took)
		}
	}
	// A context deadline sooner than Timeout wins.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if _, err := Open(ctx, []string{ln.Addr().String()}, nil); err == nil || time.Since(t0) > 2*time.Second {
		t.Fatalf("Open with a 300 ms context = %v after %v", err, time.Since(t0))
	}
}

func TestOptionsInvalid(t *testing.T) {
	for _, o := range []*Options{{WriteConsistency: "TWO"}, {ReadConsistency: "one"}, {Shards: -1}, {MaxAttempts: -2}, {Timeout: -time.Second}} {
		if _, err := Open(context.Background(), []string{"127.0.0.1:1"}, o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Open(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
	if _, err := Open(context.Background(), nil, nil); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("Open(no addresses) = %v, want ErrInvalidOptions", err)
	}
}

// fake is a stand-in for a node: handler answers everything but /v1/meta
// and the node's own shards of a class.
func fake(t *testing.T, handler http.HandlerFunc) *DB {
	t.Helper()
	return fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !ownShards(w, r) {
			handler(w, r)
		}
		return true
	})
}

// fakeWeb is a stand-in for a node whose web answers first, then
// ownShards: /v1/meta aside, what neither answers is an error.
func fakeWeb(t *testing.T, web webHandler) *DB {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/meta":
			io.WriteString(w, `{"version":"1.39.0"}`)
		case web(w, r), ownShards(w, r):
		case classC(w, r):
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", 400)
		}
	}))
	t.Cleanup(srv.Close)
	db, err := Open(context.Background(), []string{srv.URL}, &Options{Timeout: 5 * time.Second, MaxAttempts: 4, Transport: REST})
	if err != nil {
		t.Fatal(err)
	}
	return db
}

// classC answers a request for the class of collection "c" (which a write
// checks is the one its handle was made for, as made before Made was
// kept); it reports whether r was one.
func classC(w http.ResponseWriter, r *http.Request) bool {
	if r.Method != http.MethodGet || r.URL.Path != "/v1/schema/Cairn_c" {
		return false
	}
	io.WriteString(w, `{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}"}`)
	return true
}

// ownShards answers the requests a client makes before it believes a
// 404 about an object: for the node's own shards of a class, as a node
// that has the class's index, and for the cluster's nodes, as one live
// node with Cairn_c's shard loaded. It reports whether r was one.
func ownShards(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/schema/") && strings.HasSuffix(r.URL.Path, "/shards"):
		io.WriteString(w, `[{"name":"s0","status":"READY"}]`)
	case r.URL.Path == "/v1/nodes" && r.URL.Query().Get("output") == "verbose":
		io.WriteString(w, `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_c","name":"s0","loaded":true}]}]}`)
	default:
		return false
	}
	return true
}

// 5xx answers are retried, 4xx ones are not.
func TestRetries(t *testing.T) {
	var calls atomic.Int32
	db := fake(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) <= 2 {
			http.Error(w, `{"error":[{"message":"leader election"}]}`, http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, `{"classes":[]}`)
	})
	if _, err := db.Collections(context.Background()); err != nil {
		t.Fatalf("Collections after two 503s: %v", err)
	}
	if db.Retries() != 2 {
		t.Fatalf("Retries = %d, want 2", db.Retries())
	}
	db = fake(t, func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":[{"message":"bad class"}]}`, http.StatusUnprocessableEntity)
	})
	_, err := db.Collections(context.Background())
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 422 || ae.Message != "bad class" || db.Retries() != 0 {
		t.Fatalf("Collections on a 422 = %v (retries %d), want an *APIError at once", err, db.Retries())
	}
}

// Per-object errors of a batch (HTTP 200) are retried and then surface as
// the write's error, and the write is undone.
func TestBatchObjectErrors(t *testing.T) {
	var rounds, undos atomic.Int32
	db := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case classC(w, r):
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/objects/"):
			http.NotFound(w, r)
		case r.Method == http.MethodPost && r.URL.Path == "/v1/batch/objects":
			rounds.Add(1)
			body, _ := io.ReadAll(r.Body)
			n := strings.Count(string(body), `"class"`)
			var b strings.Builder
			b.WriteString("[")
			ids := strings.Split(string(body), `"id":"`)
			for i := 1; i <= n && i < len(ids); i++ {
				if i > 1 {
					b.WriteString(",")
				}
				b.WriteString(`{"id":"` + ids[i][:36] + `","result":{"errors":{"error":[{"message":"cannot reach enough replicas"}]}}}`)
			}
			b.WriteString("]")
			io.WriteString(w, b.String())
		case r.Method == http.MethodDelete && r.URL.Path == "/v1/batch/objects":
			undos.Add(1)
			io.WriteString(w, `{"results":{"matches":0,"limit":10000,"successful":0,"failed":0}}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", 400)
		}
	})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	err := c.Add(context.Background(), cairn.Item{ID: "a", Embedding: []float32{1, 2}}, cairn.Item{ID: "b", Embedding: []float32{3, 4}})
	var ae *APIError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), "cannot reach enough replicas") {
		t.Fatalf("Add = %v, want the per-object error", err)
	}
	if rounds.Load() != 4 {
		t.Fatalf("%d batch rounds, want MaxAttempts = 4", rounds.Load())
	}
	if undos.Load() != 1 {
		t.Fatalf("%d deletes undid the failed write, want 1", undos.Load())
	}
}

// A change of the schema refused with a message of a passing state (a node
// replacing its connection to a peer after a restart) is sent again; one
// that an earlier attempt made before being refused is found to be ours.
func TestSchemaChangeRetried(t *testing.T) {
	const closing = `{"error":[{"message":"rpc error: code = Canceled desc = grpc: the client connection is closing"}]}`
	var posts atomic.Int32
	var stored atomic.Value // the description of the class created
	db := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/schema":
			var c class
			json.NewDecoder(r.Body).Decode(&c)
			switch posts.Add(1) {
			case 1: // refused before it was made
				http.Error(w, closing, http.StatusUnprocessableEntity)
			case 2: // made, then refused on the way back
				stored.Store(c.Description)
				http.Error(w, closing, http.StatusUnprocessableEntity)
			default:
				http.Error(w, `{"error":[{"message":"class name `+c.Class+` already exists"}]}`, http.StatusUnprocessableEntity)
			}
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/schema/"):
			d, _ := stored.Load().(string)
			json.NewEncoder(w).Encode(class{Class: strings.TrimPrefix(r.URL.Path, "/v1/schema/"), Description: d})
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", 400)
		}
	})
	c := db.newClass("collection", "c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2})
	if err := db.createClass(context.Background(), c); err != nil {
		t.Fatalf("createClass after two refusals, the second after it landed: %v", err)
	}
	if posts.Load() != 3 || db.Retries() != 2 {
		t.Fatalf("%d attempts, %d retries; want 3 and 2", posts.Load(), db.Retries())
	}
	// A clash with a class of another description is another's class.
	other := db.newClass("collection", "c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2})
	if err := db.createClass(context.Background(), other); !errors.Is(err, vector.ErrDuplicateID) {
		t.Fatalf("createClass of an existing class = %v, want ErrDuplicateID", err)
	}
}

// A create that lands but whose answer is lost (a 5xx, a timeout), which
// the client sends again below createClass's own attempts, is found to
// be ours by its description, as the cluster showed during elections.
func TestCreateRetriedByClient(t *testing.T) {
	var posts atomic.Int32
	var stored atomic.Value // the description of the class created
	db := fake(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/schema":
			var c class
			json.NewDecoder(r.Body).Decode(&c)
			if posts.Add(1) == 1 {
				stored.Store(c.Description)
				http.Error(w, `{"error":[{"message":"context deadline exceeded"}]}`, http.StatusInternalServerError)
				return
			}
			http.Error(w, `{"error":[{"message":"class name `+c.Class+` already exists"}]}`, http.StatusUnprocessableEntity)
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/schema/"):
			d, _ := stored.Load().(string)
			json.NewEncoder(w).Encode(class{Class: strings.TrimPrefix(r.URL.Path, "/v1/schema/"), Description: d})
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", 400)
		}
	})
	c := db.newClass("collection", "c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2})
	if err := db.createClass(context.Background(), c); err != nil || posts.Load() != 2 {
		t.Fatalf("createClass whose first answer was lost = %v after %d posts, want nil after 2", err, posts.Load())
	}
}

// A refusal of the class itself is returned at once, even where its words
// are ones that describe a passing state elsewhere.
func TestSchemaChangeRefused(t *testing.T) {
	var posts atomic.Int32
	db := fake(t, func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		http.Error(w, `{"error":[{"message":"could not find enough weaviate nodes for replication: 3 replicas requested, but only 1 nodes"}]}`, http.StatusUnprocessableEntity)
	})
	c := db.newClass("collection", "c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2})
	var ae *APIError
	if err := db.createClass(context.Background(), c); !errors.As(err, &ae) || posts.Load() != 1 {
		t.Fatalf("createClass refused for its replicas = %v after %d attempts, want the *APIError after 1", err, posts.Load())
	}
}

// TestTransient checks which server messages are retried: a passing state
// of the cluster is, a bad request is not, also when a name it quotes
// holds one of the words of a passing state.
func TestTransient(t *testing.T) {
	for _, c := range []struct {
		msg  string
		want bool
	}{
		{`cannot achieve consistency level "QUORUM": read repair: replica 127.0.0.2:7101 unreachable`, true},
		{`Post "http://127.0.0.3:7101/replicas/indices/Notes/shards/x/objects": dial tcp 127.0.0.3:7101: connect: connection refused`, true},
		{`shard "Notes_abc": not ready`, true},
		{`no graphql provider present, this is most likely because no schema is present`, true},
		{`no such prop with name 'importance' found in class 'Notes' in the schema`, true},
		{`Unknown argument "consistencyLevel" on field "Unreplicated" of type "GetObjectsObj".`, false},
		{`class "ShardNotes" not found`, false},
		{`invalid object: no such class with name 'Replicas' found in the schema`, false},
		{`id '6f1c2e9a-0000-4000-8000-00000000leader' is not a valid uuid`, false},
		{`inconsistent consistency levels: replica 2 of 3`, false},
	} {
		if got := transient(c.msg); got != c.want {
			t.Errorf("transient(%q) = %v, want %v", c.msg, got, c.want)
		}
	}
}

// TestOpenRefusesWhatIsNoCluster: a server that answers but is no
// Weaviate, and an address that cannot be one, are refused at once as
// bad options, not taken for a cluster (whose Collections would say none)
// nor retried until the time bound.
func TestOpenRefusesWhatIsNoCluster(t *testing.T) {
	for _, body := range []string{`{}`, `hello`} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) }))
		_, err := Open(context.Background(), []string{srv.URL}, &Options{Transport: REST, Timeout: 5 * time.Second})
		srv.Close()
		if !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Open of a server answering %s: %v, want ErrInvalidOptions", body, err)
		}
	}
	for _, addrs := range [][]string{nil, {}, {"::::"}, {"ftp://127.0.0.1:8080"}, {"127.0.0.1:99999"}} {
		start := time.Now()
		_, err := Open(context.Background(), addrs, &Options{Transport: REST, Timeout: 5 * time.Second})
		if !errors.Is(err, vector.ErrInvalidOptions) || time.Since(start) > 2*time.Second {
			t.Errorf("Open(%q): %v after %v, want ErrInvalidOptions at once", addrs, err, time.Since(start))
		}
	}
}

// TestCreateWithinBound: a CreateCollection that the cluster never answers
// returns within Options.Timeout and the short look that follows (it
// looked for the class again with a fresh Timeout: twice the bound).
func TestCreateWithinBound(t *testing.T) {
	stop := make(chan struct{})
	db := fakeWeb(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/v1/schema") {
			return false
		}
		select { // a cluster without a leader answers nothing
		case <-r.Context().Done():
		case <-stop:
		}
		return true
	})
	t.Cleanup(func() { close(stop) }) // before the server's Close, which waits for its handlers
	db.opt.Timeout, db.cl.opt.Timeout = 4*time.Second, 4*time.Second
	start := time.Now()
	_, err := db.CreateCollection(context.Background(), "c", cairn.CollectionConfig{Dim: 2})
	if d := time.Since(start); !errors.Is(err, ErrUnavailable) || d > db.opt.Timeout+lateLook+time.Second/2 {
		t.Fatalf("CreateCollection: %v after %v, want ErrUnavailable within %v", err, d, db.opt.Timeout+lateLook)
	}
}
