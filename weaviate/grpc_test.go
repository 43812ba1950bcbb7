package weaviate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// rpcHandler answers one gRPC call of a fake node: the request's bytes in,
// the reply's bytes (or a status error) out.
type rpcHandler func(ctx context.Context, method string, req []byte) ([]byte, error)

// fakeGRPC is a stand-in for a node that speaks both APIs: web answers
// HTTP (all but /v1/meta, and /v1/schema and /v1/nodes as a whole class
// of 1 shard on 1 live node unless web handles them), rpc answers gRPC
// (all but the health check).
func fakeGRPC(t *testing.T, web webHandler, rpc rpcHandler, o Options) *DB {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/v1/meta":
			io.WriteString(w, `{"version":"1.39.0"}`)
		case web != nil && web(w, r), ownShards(w, r):
		case strings.HasPrefix(r.URL.Path, "/v1/schema/"):
			io.WriteString(w, `{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}","shardingConfig":{"actualCount":1}}`)
		case strings.HasPrefix(r.URL.Path, "/v1/nodes/"):
			io.WriteString(w, `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}","name":"s0"}]}]}`)
		default:
			t.Errorf("unexpected %s %s", r.Method, r.URL)
			http.Error(w, "unexpected", 400)
		}
	}))
	t.Cleanup(srv.Close)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}), grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		method, _ := grpc.MethodFromServerStream(stream)
		var req []byte
		if err := stream.RecvMsg(&req); err != nil {
			return err
		}
		if method == methodHealth {
			return stream.SendMsg(appendVarint(nil, 1, 1))
		}
		ans, err := rpc(stream.Context(), method, req)
		if err != nil {
			return err
		}
		return stream.SendMsg(ans)
	}))
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	if o.Timeout == 0 {
		o.Timeout = 5 * time.Second
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 4
	}
	o.GRPCAddrs = []string{ln.Addr().String()}
	db, err := Open(context.Background(), []string{srv.URL}, &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// webHandler answers an HTTP request of a fake node, or reports that it
// did not.
type webHandler func(w http.ResponseWriter, r *http.Request) bool

// msg is a decoded message: its fields by number, in order.
type msg map[protowire.Number][]field

type field struct {
	data []byte
	v    uint64
}

func decodeMsg(t *testing.T, b []byte) msg {
	t.Helper()
	m := msg{}
	err := fields(b, func(num protowire.Number, _ protowire.Type, data []byte, v uint64) error {
		m[num] = append(m[num], field{data, v})
		return nil
	})
	if err != nil {
		t.Fatalf("decoding %x: %v", b, err)
	}
	return m
}

func (m msg) str(n protowire.Number) string {
	if len(m[n]) == 0 {
		return ""
	}
	return string(m[n][0].data)
}

// searchReply encodes a SearchReply of rows, as Weaviate does with
// uses_127_api: properties as weaviate.v1.Value, vectors as bytes.
func searchReply(rows []fetched) []byte {
	var b []byte
	b = protowire.AppendTag(b, 1, protowire.Fixed32Type) // took
	b = protowire.AppendFixed32(b, math.Float32bits(0.001))
	for _, r := range rows {
		b = appendMessage(b, 2, func(b []byte) []byte {
			b = appendMessage(b, 1, func(b []byte) []byte { // properties
				b = appendString(b, 3, "Cairn_c") // target_collection
				return appendMessage(b, 11, func(b []byte) []byte {
					for k, v := range r.Props {
						b = appendMessage(b, 1, func(b []byte) []byte {
							b = appendString(b, 1, k)
							return appendMessage(b, 2, func(b []byte) []byte {
								switch x := v.(type) {
								case string:
									return appendString(b, 13, x)
								case float64:
									return appendDouble(b, 1, x)
								case bool:
									return appendBool(b, 3, x)
								}
								return appendVarint(b, 12, 0)
							})
						})
					}
					return b
				})
			})
			return appendMessage(b, 2, func(b []byte) []byte { // metadata
				b = appendString(b, 1, r.UUID)
				b = appendVarint(b, 3, uint64(r.Created))
				b = appendBool(b, 4, true)
				b = protowire.AppendTag(b, 7, protowire.Fixed32Type)
				b = protowire.AppendFixed32(b, math.Float32bits(r.Distance))
				b = appendBool(b, 8, true)
				if r.HasVector {
					b = appendFloats(b, 19, r.Vector)
				}
				return appendString(b, 20, "\x01\x02") // id_as_bytes, skipped
			})
		})
	}
	return b
}

// A query goes out as a SearchRequest with the vector, limit, level,
// filter and selection, and its reply comes back as items.
func TestGRPCQuery(t *testing.T) {
	var got []byte
	vec := make([]float32, 300) // a length whose encoding needs a 2-byte varint
	vec[0], vec[299] = 1, 2
	dims := func(x ...float32) []float32 { return append(x, make([]float32, 300-len(x))...) }
	db := fakeGRPC(t, nil, func(_ context.Context, method string, req []byte) ([]byte, error) {
		if method != methodSearch {
			return nil, status.Error(codes.Unimplemented, method)
		}
		got = req
		return searchReply([]fetched{
			{UUID: itemUUID("Cairn_c", "b"), Created: 2, Distance: 0.5, HasVector: true, Vector: dims(0.6, 0.8),
				Props: map[string]any{propID: "b", propText: "bee", propMeta: `{"n":2}`}},
			{UUID: itemUUID("Cairn_c", "a"), Created: 1, Distance: 0.25, HasVector: true, Vector: dims(1, 0),
				Props: map[string]any{propID: "a", propText: "", propMeta: nil}},
		}), nil
	}, Options{ReadConsistency: One})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 300, Metric: vector.L2}, "", map[string]string{"n": typeNumber})
	res, err := c.Query(context.Background(), vec, 2, &cairn.QueryOptions{Filter: cairn.Eq("n", 2), WithEmbeddings: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].ID != "a" || res[1].ID != "b" || res[1].Text != "bee" || res[1].Metadata["n"] != 2.0 ||
		res[0].Distance != 0.25 || len(res[1].Embedding) != 300 || res[1].Embedding[1] != 0.8 {
		t.Fatalf("Query = %+v", res)
	}
	m := decodeMsg(t, got)
	if m.str(1) != "Cairn_c" || m[11][0].v != 1 || m[30][0].v != 2 || m[102][0].v != 1 {
		t.Errorf("request: collection %q, level %v, limit %v, uses_127_api %v", m.str(1), m[11], m[30], m[102])
	}
	props := decodeMsg(t, m[20][0].data)
	if len(props[1]) != 3 || props.str(1) != propID {
		t.Errorf("properties requested: %v", props)
	}
	meta := decodeMsg(t, m[21][0].data)
	for _, n := range []protowire.Number{1, 2, 3, 5} {
		if len(meta[n]) != 1 || meta[n][0].v != 1 {
			t.Errorf("metadata field %d not asked for: %v", n, meta)
		}
	}
	nv := decodeMsg(t, decodeMsg(t, m[43][0].data)[9][0].data)
	sent, err := floatsOf(nv[3][0].data)
	if err != nil || len(sent) != 300 || sent[0] != 1 || sent[299] != 2 || nv[4][0].v != 1 {
		t.Errorf("vector sent: %v (%v), type %v", sent, err, nv[4])
	}
	f := decodeMsg(t, m[40][0].data)
	target := decodeMsg(t, f[20][0].data)
	if f[1][0].v != 1 || target.str(1) != "m_n" || math.Float64frombits(f[7][0].v) != 2 {
		t.Errorf("filter sent: %v, target %v", f, target)
	}
}

// An Index's search with an id filter sends the filter on _id and asks
// for no properties.
func TestGRPCIndexSearch(t *testing.T) {
	var got []byte
	db := fakeGRPC(t, nil, func(_ context.Context, _ string, req []byte) ([]byte, error) {
		got = req
		return searchReply([]fetched{{UUID: vectorUUID(7), Distance: 0.1}}), nil
	}, Options{})
	ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
	res, err := ix.Search(context.Background(), []float32{1, 2}, 1, &vector.SearchOptions{Filter: vector.NewIDSet(7, 9)})
	if err != nil || len(res) != 1 || res[0].ID != 7 || res[0].Distance != 0.1 {
		t.Fatalf("Search = %v, %v", res, err)
	}
	m := decodeMsg(t, got)
	if len(m[20]) != 1 || len(m[20][0].data) != 0 {
		t.Errorf("properties: %v, want an empty selection", m[20])
	}
	if m[11][0].v != 2 {
		t.Errorf("level %d, want QUORUM (2)", m[11][0].v)
	}
	f := decodeMsg(t, m[40][0].data)
	if f[1][0].v != 12 || decodeMsg(t, f[20][0].data).str(1) != "_id" || len(decodeMsg(t, f[9][0].data)[1]) != 2 {
		t.Errorf("filter: %v", f)
	}
}

// Status codes: Unavailable and a passing state in Unknown are retried
// (on the next node); InvalidArgument and other Unknown errors are an
// *APIError at once; running out of attempts wraps ErrUnavailable.
func TestGRPCStatus(t *testing.T) {
	for _, tc := range []struct {
		name    string
		errs    []error // the answers of the first attempts, then success
		retries int64
		check   func(error) bool
	}{
		{"unavailable", []error{status.Error(codes.Unavailable, "connection refused"), status.Error(codes.Unavailable, "x")}, 2,
			func(err error) bool { return err == nil }},
		{"passing", []error{status.Error(codes.Unknown, "cannot reach enough replicas")}, 1,
			func(err error) bool { return err == nil }},
		{"invalid", []error{status.Error(codes.InvalidArgument, "bad vector")}, 0, func(err error) bool {
			var ae *APIError
			return errors.As(err, &ae) && ae.Code == codes.InvalidArgument && ae.Message == "bad vector" && !errors.Is(err, ErrUnavailable)
		}},
		{"unknown", []error{status.Error(codes.Unknown, "no such class")}, 0, func(err error) bool {
			var ae *APIError
			return errors.As(err, &ae) && ae.Code == codes.Unknown && !errors.Is(err, ErrUnavailable)
		}},
		{"exhausted", []error{status.Error(codes.Unavailable, "a"), status.Error(codes.Unavailable, "b"),
			status.Error(codes.Unavailable, "c"), status.Error(codes.Unavailable, "d")}, 3,
			func(err error) bool { return errors.Is(err, ErrUnavailable) && strings.Contains(err.Error(), "d") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			db := fakeGRPC(t, nil, func(context.Context, string, []byte) ([]byte, error) {
				if i := int(calls.Add(1)) - 1; i < len(tc.errs) {
					return nil, tc.errs[i]
				}
				return searchReply(nil), nil
			}, Options{})
			ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
			_, err := ix.Search(context.Background(), []float32{1, 2}, 3, nil)
			if !tc.check(err) || db.Retries() != tc.retries {
				t.Fatalf("Search = %v after %d retries, want %d", err, db.Retries(), tc.retries)
			}
		})
	}
}

// A node whose schema lacks the class ("could not find class ... in
// schema") is behind: the search is tried on the next node. If the class
// stays unknown and the leader's schema lacks it too, as does every
// node's own, the class was deleted: the search fails, after its attempts, with an error wrapping
// ErrUnavailable and ErrNotFound. (The schema reads counted are those
// between the first call and the next.)
func TestGRPCClassBehind(t *testing.T) {
	for _, tc := range []struct {
		name    string
		gone    bool
		retries int64
		check   func(error) bool
	}{
		{"behind", false, 1, func(err error) bool { return err == nil }},
		{"deleted", true, 3, func(err error) bool {
			return errors.Is(err, vector.ErrNotFound) && errors.Is(err, ErrUnavailable)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls, asked atomic.Int32
			web := func(w http.ResponseWriter, r *http.Request) bool {
				if r.URL.Path != "/v1/schema/Cairn_c" {
					return false
				}
				if r.URL.Query().Get("consistency") != "true" { // a node's own schema
					if tc.gone && calls.Load() > 0 {
						http.NotFound(w, r)
						return true
					}
					return false
				}
				if calls.Load() == 1 {
					asked.Add(1)
				}
				if tc.gone && calls.Load() > 0 {
					http.NotFound(w, r)
					return true
				}
				return false
			}
			db := fakeGRPC(t, web, func(context.Context, string, []byte) ([]byte, error) {
				if calls.Add(1) == 1 || tc.gone {
					return nil, status.Error(codes.Unknown, "could not find class Cairn_c in schema")
				}
				return searchReply(nil), nil
			}, Options{})
			ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
			_, err := ix.Search(context.Background(), []float32{1, 2}, 3, nil)
			if !tc.check(err) || db.Retries() != tc.retries || asked.Load() != 1 {
				t.Fatalf("Search = %v after %d retries and %d schema reads, want %d and 1", err, db.Retries(), asked.Load(), tc.retries)
			}
		})
	}
}

// holdsNothing answers the REST calls a write makes as a cluster that
// holds no object: a read by id finds none, a delete by filter matches
// none. It reports whether it answered r.
func holdsNothing(w http.ResponseWriter, r *http.Request) bool {
	switch {
	case strings.HasPrefix(r.URL.Path, "/v1/objects/"):
		http.NotFound(w, r)
	case r.Method == http.MethodDelete && r.URL.Path == "/v1/batch/objects":
		io.WriteString(w, `{"results":{"matches":0,"limit":10000,"successful":0,"failed":0}}`)
	default:
		return false
	}
	return true
}

// A node that never answers costs AttemptTimeout per attempt, and the
// call returns ErrUnavailable by its Timeout, or by ctx's deadline if
// sooner.
func TestGRPCDeadline(t *testing.T) {
	db := fakeGRPC(t, holdsNothing, func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}, Options{Timeout: time.Second, AttemptTimeout: 200 * time.Millisecond, MaxAttempts: 100})
	ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
	t0 := time.Now()
	_, err := ix.Search(context.Background(), []float32{1, 2}, 3, nil)
	if took := time.Since(t0); !errors.Is(err, ErrUnavailable) || took > 1500*time.Millisecond || took < 900*time.Millisecond {
		t.Fatalf("Search = %v after %v, want ErrUnavailable after about 1 s", err, took)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 = time.Now()
	if err := ix.Add(ctx, 1, []float32{1, 2}); err == nil || time.Since(t0) > 800*time.Millisecond {
		t.Fatalf("Add with a 300 ms context = %v after %v", err, time.Since(t0))
	}
}

// A search over gRPC that could not reach every shard is a *PartialError,
// as over REST.
func TestGRPCPartial(t *testing.T) {
	db := fakeGRPC(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/schema/"):
			io.WriteString(w, `{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}","shardingConfig":{"actualCount":2}}`)
		case strings.HasPrefix(r.URL.Path, "/v1/nodes/"):
			io.WriteString(w, `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_c","description":"{\"cairn\":1,\"kind\":\"collection\",\"name\":\"c\",\"dim\":2,\"metric\":\"l2-squared\",\"index\":\"flat\"}","name":"s0"}]},{"status":"UNAVAILABLE"}]}`)
		default:
			return false
		}
		return true
	}, func(context.Context, string, []byte) ([]byte, error) {
		return searchReply([]fetched{{UUID: vectorUUID(1)}}), nil
	}, Options{})
	ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
	_, err := ix.Search(context.Background(), []float32{1, 2}, 1, nil)
	var pe *PartialError
	if !errors.As(err, &pe) || !errors.Is(err, ErrUnavailable) || pe.Shards != 2 {
		t.Fatalf("Search missing a shard = %v, want a *PartialError", err)
	}
}

// batchReply encodes a BatchObjectsReply with an error for each index of
// bad.
func batchReply(bad map[int]string) []byte {
	var b []byte
	for i, m := range bad {
		b = appendMessage(b, 2, func(b []byte) []byte {
			b = appendVarint(b, 1, uint64(i))
			return appendString(b, 2, m)
		})
	}
	return b
}

// Batch writes go out as BatchObjects; the objects a reply names are sent
// again, and those still failing after MaxAttempts rounds are the write's
// error, which is then undone.
func TestGRPCBatch(t *testing.T) {
	var mu sync.Mutex
	var reqs [][]byte
	var undos atomic.Int32
	failing := map[string]int{"a": 1, "b": 100} // rounds each fails
	db := fakeGRPC(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/v1/objects/"):
			http.NotFound(w, r)
		case r.Method == http.MethodDelete && r.URL.Path == "/v1/batch/objects":
			undos.Add(1)
			io.WriteString(w, `{"results":{"matches":0,"limit":10000,"successful":0,"failed":0}}`)
		default:
			return false
		}
		return true
	}, func(_ context.Context, method string, req []byte) ([]byte, error) {
		if method != methodBatch {
			return nil, status.Error(codes.Unimplemented, method)
		}
		mu.Lock()
		defer mu.Unlock()
		reqs = append(reqs, req)
		bad := map[int]string{}
		m := decodeMsg(t, req)
		for i, o := range m[1] {
			props := decodeMsg(t, decodeMsg(t, decodeMsg(t, o.data)[3][0].data)[1][0].data)
			for _, e := range props[1] {
				kv := decodeMsg(t, e.data)
				if kv.str(1) != propID {
					continue
				}
				id := decodeMsg(t, kv[2][0].data).str(3)
				if failing[id] > 0 {
					failing[id]--
					bad[i] = "cannot reach enough replicas for " + id
				}
			}
		}
		return batchReply(bad), nil
	}, Options{})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	err := c.Add(context.Background(), cairn.Item{ID: "a", Embedding: []float32{1, 2}}, cairn.Item{ID: "b", Embedding: []float32{3, 4}}, cairn.Item{ID: "c", Embedding: []float32{5, 6}})
	var we *WriteError
	if !errors.As(err, &we) || we.Acked != 2 || !strings.Contains(err.Error(), "cannot reach enough replicas for b") {
		t.Fatalf("Add = %v, want b's error with a and c acknowledged", err)
	}
	if len(reqs) != 4 || undos.Load() != 1 {
		t.Fatalf("%d batch rounds and %d undos, want 4 and 1", len(reqs), undos.Load())
	}
	first := decodeMsg(t, reqs[0])
	o := decodeMsg(t, first[1][0].data)
	vec, _ := floatsOf(o[6][0].data)
	if len(first[1]) != 3 || first[2][0].v != 2 || o.str(4) != "Cairn_c" || o.str(1) != itemUUID("Cairn_c", "a") || len(vec) != 2 || vec[1] != 2 {
		t.Errorf("first request: %v, first object %v", first, o)
	}
	if n := len(decodeMsg(t, reqs[1])[1]); n != 2 {
		t.Errorf("second round sent %d objects, want a and b", n)
	}
}

// A reply naming an object outside the batch is an error, not a panic.
func TestGRPCBatchBadReply(t *testing.T) {
	if _, err := decodeBatch(batchReply(map[int]string{5: "x"}), 2); !errors.Is(err, vector.ErrCorrupt) {
		t.Fatalf("decodeBatch(index 5 of 2) = %v, want ErrCorrupt", err)
	}
}

// Open fails, within its bound, when nothing answers gRPC where the
// options say.
func TestGRPCOpenUnreachable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"version":"1.39.0"}`)
	}))
	defer srv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()
	t0 := time.Now()
	_, err = Open(context.Background(), []string{srv.URL}, &Options{GRPCAddrs: []string{closed}, Timeout: time.Second, AttemptTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrUnavailable) || time.Since(t0) > 2*time.Second {
		t.Fatalf("Open with no gRPC server = %v after %v", err, time.Since(t0))
	}
}

func TestGRPCAddrs(t *testing.T) {
	for _, tc := range []struct {
		http []string
		o    Options
		want string
	}{
		{[]string{"10.0.0.1:8080", "https://db.example.com/", "[::1]:8080"}, Options{GRPCPort: 50051}, "10.0.0.1:50051 db.example.com:50051 [::1]:50051"},
		{[]string{"a:8080"}, Options{GRPCAddrs: []string{"b:1", " c:2 "}}, "b:1 c:2"},
	} {
		got, err := grpcAddrs(tc.http, tc.o)
		if err != nil || strings.Join(got, " ") != tc.want {
			t.Errorf("grpcAddrs(%v, %v) = %v, %v; want %s", tc.http, tc.o.GRPCAddrs, got, err, tc.want)
		}
	}
	if _, err := grpcAddrs(nil, Options{GRPCAddrs: []string{"nohost"}}); !errors.Is(err, vector.ErrInvalidOptions) {
		t.Errorf("grpcAddrs(nohost) = %v, want ErrInvalidOptions", err)
	}
	for _, o := range []*Options{{Transport: "http"}, {GRPCPort: 70000}} {
		if _, err := Open(context.Background(), []string{"127.0.0.1:1"}, o); !errors.Is(err, vector.ErrInvalidOptions) {
			t.Errorf("Open(%+v) = %v, want ErrInvalidOptions", o, err)
		}
	}
}

// A gRPC batch is sent only after the cluster answered a lookup of the
// class through its leader: without a leader, Weaviate's gRPC batch
// outlives its caller and lands later (see sendBatch).
func TestGRPCBatchNeedsLeader(t *testing.T) {
	var batches atomic.Int32
	db := fakeGRPC(t, func(w http.ResponseWriter, r *http.Request) bool {
		switch {
		case strings.HasPrefix(r.URL.Path, "/v1/schema/"):
			http.Error(w, `{"error":[{"message":"leader not found"}]}`, http.StatusInternalServerError)
		default:
			return holdsNothing(w, r)
		}
		return true
	}, func(context.Context, string, []byte) ([]byte, error) {
		batches.Add(1)
		return batchReply(nil), nil
	}, Options{Timeout: time.Second})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	err := c.Add(context.Background(), cairn.Item{ID: "a", Embedding: []float32{1, 2}})
	if !errors.Is(err, ErrUnavailable) || batches.Load() != 0 {
		t.Fatalf("Add without a leader = %v after %d gRPC batches, want ErrUnavailable and none", err, batches.Load())
	}
}

// TestGRPCCallEnds: a gRPC search cut by the caller's deadline wraps
// context.DeadlineExceeded, as over REST; one in flight when the DB
// closes fails with vector.ErrClosed, not ErrUnavailable.
func TestGRPCCallEnds(t *testing.T) {
	hang := func(ctx context.Context, _ string, _ []byte) ([]byte, error) {
		<-ctx.Done() // a node that answers nothing in time
		return nil, ctx.Err()
	}
	db := fakeGRPC(t, nil, hang, Options{})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := c.Query(ctx, []float32{1, 2}, 1, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Query past its deadline: %v, want context.DeadlineExceeded", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Query(context.Background(), []float32{1, 2}, 1, nil)
		done <- err
	}()
	time.Sleep(100 * time.Millisecond) // the search is in flight
	db.Close()
	if err := <-done; !errors.Is(err, vector.ErrClosed) {
		t.Errorf("Query in flight at Close: %v, want vector.ErrClosed", err)
	}
}

// lateTimer is a context whose deadline has passed but whose timer has
// not yet fired, as under load.
type lateTimer struct{ context.Context }

func (lateTimer) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

func TestDeadlineErrBeforeTimer(t *testing.T) {
	if err := deadlineErr(lateTimer{context.Background()}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("deadline passed, timer not fired: %v, want context.DeadlineExceeded", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := deadlineErr(ctx); err != nil {
		t.Errorf("deadline ahead: %v, want nil", err)
	}
}

// A cluster electing a leader answers /v1/nodes for a class as if the
// class did not exist (the filter is looked up in the leader's schema):
// a search's check that it reached every shard then reads every class's
// shards, and says not found only if no node holds one of the class.
func TestReachDuringElection(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes string // the answer of /v1/nodes
		want  error
	}{
		{"class there", `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_other","name":"o"},{"class":"Cairn_c","name":"s0","loaded":true}]},{"status":"UNAVAILABLE"}]}`, nil},
		{"class gone", `{"nodes":[{"status":"HEALTHY","shards":[{"class":"Cairn_other","name":"o"}]}]}`, vector.ErrNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := fakeGRPC(t, func(w http.ResponseWriter, r *http.Request) bool {
				switch {
				case strings.HasPrefix(r.URL.Path, "/v1/nodes/"):
					http.Error(w, `{"error":[{"message":"class \"Cairn_c\" not found"}]}`, http.StatusNotFound)
				case r.URL.Path == "/v1/nodes":
					io.WriteString(w, tc.nodes)
				default:
					return false
				}
				return true
			}, func(context.Context, string, []byte) ([]byte, error) {
				return searchReply([]fetched{{UUID: vectorUUID(1)}}), nil
			}, Options{})
			ix := &Index{db: db, class: "Cairn_c", dim: 2, m: vector.L2}
			_, err := ix.Search(context.Background(), []float32{1, 2}, 1, nil)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Search = %v, want %v", err, tc.want)
			}
		})
	}
}

// A Get of more ids than it reads one by one looks them up by a search,
// which reads one replica of each shard; one that rejoined may not hold
// an object yet. An id the search missed is read again by itself before
// Get says it is not there, as the cluster showed after a node rejoined.
func TestGetConfirmsWhatSearchMissed(t *testing.T) {
	const n = restReads + 6
	ids := make([]string, n)
	rows := make([]fetched, 0, n)
	for i := range ids {
		ids[i] = fmt.Sprint("id", i)
		if i != 3 { // the search misses id3
			rows = append(rows, fetched{UUID: itemUUID("Cairn_c", ids[i]), Props: map[string]any{propID: ids[i]}, Vector: []float32{1, 2}, HasVector: true})
		}
	}
	var single atomic.Int32
	db := fakeGRPC(t, func(w http.ResponseWriter, r *http.Request) bool {
		if !strings.HasPrefix(r.URL.Path, "/v1/objects/Cairn_c/") {
			return false
		}
		single.Add(1)
		if strings.HasSuffix(r.URL.Path, itemUUID("Cairn_c", "id3")) {
			fmt.Fprintf(w, `{"id":%q,"properties":{%q:"id3"},"vector":[1,2]}`, itemUUID("Cairn_c", "id3"), propID)
		} else {
			http.NotFound(w, r)
		}
		return true
	}, func(context.Context, string, []byte) ([]byte, error) {
		return searchReply(rows), nil
	}, Options{})
	c := db.newCollection("c", "Cairn_c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2}, "", nil)
	got, err := c.Get(context.Background(), ids...)
	if err != nil || len(got) != n || got[3].ID != "id3" {
		t.Fatalf("Get of %d ids, one missed by the search: %v (%d items)", n, err, len(got))
	}
	if single.Load() != 1 {
		t.Errorf("%d reads of single objects, want 1", single.Load())
	}
	if _, err := c.Get(context.Background(), append(ids, "absent")...); !errors.Is(err, vector.ErrNotFound) || !strings.Contains(err.Error(), `"absent"`) {
		t.Errorf("Get with an id not there: %v, want ErrNotFound naming it", err)
	}
}
