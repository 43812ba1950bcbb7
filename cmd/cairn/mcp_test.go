package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/sqlitetest"
	"github.com/cairndb/cairn/openai"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// connect serves m over an in-memory transport and returns a client
// session of the SDK's own client.
func connect(t testing.TB, m *memory) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv, err := m.server()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

// bowEmbedder is bagOfWords as a cairn.Embedder; it fails while *down.
func bowEmbedder(down *bool) cairn.Embedder {
	return cairn.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
		if down != nil && *down {
			return nil, errors.New("connection refused")
		}
		out := make([][]float32, len(texts))
		for i, s := range texts {
			out[i] = bagOfWords(s)
		}
		return out, nil
	})
}

func newTestMemory(t testing.TB, emb cairn.Embedder) *memory {
	t.Helper()
	emb = markEmbedder(emb)
	db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
	t.Cleanup(func() { db.Close() })
	m, err := newMemory(context.Background(), db, "memories", emb)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fileMemory opens the memory file at path with the bag-of-words
// embedder and serves its "memories" collection; the caller closes db.
func fileMemory(t testing.TB, path string) (*cairn.DB, *memory) {
	t.Helper()
	emb := markEmbedder(bowEmbedder(nil))
	db, err := cairn.Open(context.Background(), path, &cairn.Options{Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	m, err := newMemory(context.Background(), db, "memories", emb)
	if err != nil {
		db.Close()
		t.Fatal(err)
	}
	return db, m
}

// call calls a tool and returns its structured result decoded into out,
// or the tool error's text.
func call(t testing.TB, cs *mcp.ClientSession, name string, args map[string]any, out any) (toolErr string) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	if res.IsError {
		var texts []string
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				texts = append(texts, tc.Text)
			}
		}
		return strings.Join(texts, " ")
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s: %v in %s", name, err, b)
		}
	}
	return ""
}

func TestMCPTools(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	ctx := context.Background()

	// Every tool is listed with a description and an object schema.
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, tool.Name)
		if tool.Description == "" {
			t.Errorf("%s has no description", tool.Name)
		}
		if s, ok := tool.InputSchema.(map[string]any); !ok || s["type"] != "object" {
			t.Errorf("%s: input schema %v", tool.Name, tool.InputSchema)
		}
	}
	slices.Sort(names)
	want := []string{"memory_delete", "memory_get", "memory_history", "memory_list", "memory_restore", "memory_search", "memory_store", "memory_update"}
	if !slices.Equal(names, want) {
		t.Fatalf("tools %v, want %v", names, want)
	}

	// Search before anything is stored finds nothing.
	var found searchOut
	if e := call(t, cs, "memory_search", map[string]any{"query": "anything"}, &found); e != "" || len(found.Hits) != 0 {
		t.Fatalf("search of an empty memory: %q %+v", e, found)
	}

	var stored storeOut
	if e := call(t, cs, "memory_store", map[string]any{"text": "the user's cat is called Miso", "metadata": map[string]any{"kind": "fact", "year": 2024}}, &stored); e != "" || len(stored.ID) != 16 {
		t.Fatalf("store: %q %+v", e, stored)
	}
	catID := stored.ID
	if e := call(t, cs, "memory_store", map[string]any{"id": "pref-1", "text": "the user prefers dark mode", "metadata": map[string]any{"kind": "preference"}}, &stored); e != "" || stored.ID != "pref-1" {
		t.Fatalf("store with id: %q %+v", e, stored)
	}
	call(t, cs, "memory_store", map[string]any{"id": "go", "text": "the user writes Go at work", "metadata": map[string]any{"kind": "fact", "year": 2019}}, nil)

	if e := call(t, cs, "memory_search", map[string]any{"query": "what is the cat called", "k": 2}, &found); e != "" || len(found.Hits) != 2 || found.Hits[0].ID != catID {
		t.Fatalf("search: %q %+v", e, found)
	}
	if h := found.Hits[0]; h.Text != "the user's cat is called Miso" || h.Metadata["kind"] != "fact" || h.Similarity <= found.Hits[1].Similarity {
		t.Errorf("first hit %+v", h)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "the user", "k": 10, "filter": map[string]any{"kind": "fact", "year": map[string]any{"$lt": 2020}}}, &found); e != "" || len(found.Hits) != 1 || found.Hits[0].ID != "go" {
		t.Fatalf("filtered search: %q %+v", e, found)
	}

	// Keyword search finds the words; hybrid search fuses both lists; and
	// while the embedder is up, both give a score.
	if e := call(t, cs, "memory_search", map[string]any{"query": "Miso", "mode": "keyword"}, &found); e != "" || len(found.Hits) != 1 || found.Hits[0].ID != catID || found.Hits[0].Score <= 0 || found.Hits[0].Similarity != 0 {
		t.Fatalf("keyword search: %q %+v", e, found)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "dark mode Miso", "mode": "hybrid", "k": 3}, &found); e != "" || len(found.Hits) != 3 || found.Hits[0].Score <= 0 {
		t.Fatalf("hybrid search: %q %+v", e, found)
	}

	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"go", "pref-1"}}, &got); e != "" || len(got.Memories) != 2 || got.Memories[0].ID != "go" || got.Memories[1].Text != "the user prefers dark mode" {
		t.Fatalf("get: %q %+v", e, got)
	}

	var upd memoryOut
	if e := call(t, cs, "memory_update", map[string]any{"id": "pref-1", "text": "the user prefers light mode now"}, &upd); e != "" || upd.Metadata["kind"] != "preference" {
		t.Fatalf("update text: %q %+v", e, upd)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "light mode", "k": 1}, &found); e != "" || found.Hits[0].ID != "pref-1" || found.Hits[0].Text != "the user prefers light mode now" {
		t.Fatalf("search after update (re-embedded?): %q %+v", e, found)
	}
	upd = memoryOut{}
	if e := call(t, cs, "memory_update", map[string]any{"id": "pref-1", "metadata": map[string]any{}}, &upd); e != "" || upd.Metadata != nil {
		t.Fatalf("clear metadata: %q %+v", e, upd)
	}

	var got1 memoriesOut
	if call(t, cs, "memory_get", map[string]any{"ids": []string{"pref-1"}}, &got1); got1.Memories[0].Metadata != nil {
		t.Errorf("metadata after clearing: %v", got1.Memories[0].Metadata)
	}

	var list listOut
	// The order is that of the last write: pref-1 was updated last.
	if e := call(t, cs, "memory_list", map[string]any{"page_size": 2}, &list); e != "" || len(list.Memories) != 2 || !list.More || list.Memories[0].ID != catID || list.Memories[1].ID != "go" {
		t.Fatalf("list page 1: %q %+v", e, list)
	}
	if e := call(t, cs, "memory_list", map[string]any{"page_size": 2, "page": 2}, &list); e != "" || len(list.Memories) != 1 || list.More || list.Memories[0].ID != "pref-1" {
		t.Fatalf("list page 2: %q %+v", e, list)
	}
	if e := call(t, cs, "memory_list", map[string]any{"filter": map[string]any{"kind": "fact"}}, &list); e != "" || len(list.Memories) != 2 {
		t.Fatalf("filtered list: %q %+v", e, list)
	}

	var del deleteOut
	if e := call(t, cs, "memory_delete", map[string]any{"ids": []string{"go", "nope"}}, &del); !strings.Contains(e, `no memory has the id "nope"`) {
		t.Fatalf("delete with an unknown id: %q", e)
	}
	if e := call(t, cs, "memory_delete", map[string]any{"ids": []string{"go", catID}}, &del); e != "" || del.Deleted != 2 {
		t.Fatalf("delete: %q %+v", e, del)
	}
	if e := call(t, cs, "memory_list", nil, &list); e != "" || len(list.Memories) != 1 || list.Memories[0].ID != "pref-1" {
		t.Fatalf("list after delete: %q %+v", e, list)
	}
}

// TestMCPToolErrors checks that bad calls come back as tool errors with a
// message an agent can act on, and that the server keeps serving.
func TestMCPToolErrors(t *testing.T) {
	down := false
	cs := connect(t, newTestMemory(t, bowEmbedder(&down)))
	call(t, cs, "memory_store", map[string]any{"id": "m1", "text": "a first memory", "metadata": map[string]any{"n": 1}}, nil)
	tests := []struct {
		name string
		args map[string]any
		want string
		down bool
	}{
		{"memory_store", map[string]any{"text": "  "}, "text is empty", false},
		{"memory_store", map[string]any{"id": "m1", "text": "again"}, `a memory with id "m1" exists: use memory_update`, false},
		{"memory_store", map[string]any{"text": "x", "metadata": map[string]any{"nested": map[string]any{"a": 1}}}, `/properties/metadata/additionalProperties: type: map[a:1] has type "object", want one of "string, number, boolean"`, false},
		{"memory_store", map[string]any{"text": "x", "metadata": "not an object"}, "metadata", false},
		{"memory_store", map[string]any{}, "text", false},
		{"memory_store", map[string]any{"text": "while down"}, "the embedding service failed", true},
		{"memory_search", map[string]any{"query": "q", "filter": map[string]any{"n": map[string]any{"$near": 1}}}, "bad filter", false},
		{"memory_search", map[string]any{"query": "q", "k": 1000}, "/properties/k: maximum: 1000/1 is greater than 100", false},
		{"memory_search", map[string]any{"query": "q", "mode": "fuzzy"}, `/properties/mode: enum: fuzzy does not equal any of: [vector keyword hybrid]`, false},
		{"memory_search", map[string]any{"query": ""}, "/properties/query: minLength", false},
		{"memory_search", map[string]any{"query": "  "}, "query is empty", false},
		{"memory_search", map[string]any{"query": "anything"}, "the embedding service failed", true},
		{"memory_get", map[string]any{"ids": []string{"m1", "m2"}}, `no memory has the id "m2"`, false},
		{"memory_get", map[string]any{"ids": []string{}}, "/properties/ids: minItems: array length 0 is less than 1", false},
		{"memory_get", map[string]any{"ids": nil}, `/properties/ids: type: <invalid reflect.Value> has type "null", want "array"`, false},
		{"memory_delete", map[string]any{"ids": nil}, `/properties/ids: type: <invalid reflect.Value> has type "null", want "array"`, false},
		{"memory_update", map[string]any{"id": "m9", "text": "x"}, `no memory has the id "m9"`, false},
		{"memory_update", map[string]any{"id": "m1"}, "nothing to change", false},
		{"memory_update", map[string]any{"id": "m1", "text": " \t\n"}, "text is blank", false},
		{"memory_update", map[string]any{"id": "m1", "text": "new text"}, "the embedding service failed", true},
		{"memory_delete", map[string]any{"ids": []string{"zz"}}, `no memory has the id "zz"`, false},
		{"memory_list", map[string]any{"page": -1}, "/properties/page: minimum: -1/1 is less than 1", false},
		{"memory_list", map[string]any{"page_size": 101}, "/properties/page_size: maximum: 101/1 is greater than 100", false},
		{"memory_list", map[string]any{"page": int64(math.MaxInt64)}, "/properties/page: maximum", false},
		{"memory_list", map[string]any{"filter": map[string]any{"$or": "x"}}, "bad filter", false},
	}
	for _, tt := range tests {
		down = tt.down
		if e := call(t, cs, tt.name, tt.args, nil); !strings.Contains(e, tt.want) {
			t.Errorf("%s %v: tool error %q, want one containing %q", tt.name, tt.args, e, tt.want)
		}
	}
	down = false
	// Nothing above changed the memory.
	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"m1"}}, &got); e != "" || got.Memories[0].Text != "a first memory" {
		t.Fatalf("m1 after the errors: %q %+v", e, got)
	}
	var list listOut
	if call(t, cs, "memory_list", nil, &list); len(list.Memories) != 1 {
		t.Fatalf("memory holds %d items after the errors, want 1", len(list.Memories))
	}
}

// TestMCPWrongModel serves a memory made with one embedding model with
// another of a different dimension: storing and searching say so.
func TestMCPWrongModel(t *testing.T) {
	ctx := context.Background()
	emb := markEmbedder(bowEmbedder(nil)) // 16 dimensions
	db2 := cairn.OpenMemory(&cairn.Options{Embedder: emb})
	defer db2.Close()
	c, _ := db2.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: 3})
	c.Add(ctx, cairn.Item{ID: "old", Embedding: []float32{1, 0, 0}, Text: "made with another model"})
	m, err := newMemory(ctx, db2, "memories", emb)
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, m)
	for _, tool := range []string{"memory_store", "memory_search"} {
		args := map[string]any{"text": "hello", "query": "hello"}
		delete(args, map[string]string{"memory_store": "query", "memory_search": "text"}[tool])
		if e := call(t, cs, tool, args, nil); !strings.Contains(e, "the embedding model's vectors do not fit this memory") {
			t.Errorf("%s: %q", tool, e)
		}
	}
}

// TestMCPStdio runs cairn mcp as a real child process over stdio, with
// an OpenAI-compatible embeddings server on loopback, and checks that the
// memories can be read from the file while the server runs (and are
// there afterwards), and that the file is locked to other writers.
func TestMCPStdio(t *testing.T) {
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	cmd := exec.Command(os.Args[0], "mcp", "-db", path, "-collection", "mem", "-embed-url", srv.url(), "-embed-model", "bow", "-embed-key-env", "CAIRN_TEST_KEY")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1", "CAIRN_TEST_KEY=secret")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			cmd.Process.Kill() // by PID, if the test failed before Close
			cmd.Wait()
		}
	})
	var stored storeOut
	if e := call(t, cs, "memory_store", map[string]any{"text": "the deploy key rotates every Monday", "metadata": map[string]any{"kind": "ops"}}, &stored); e != "" {
		t.Fatalf("store: %s", e)
	}
	call(t, cs, "memory_store", map[string]any{"id": "lunch", "text": "lunch is at noon"}, nil)
	var found searchOut
	if e := call(t, cs, "memory_search", map[string]any{"query": "when does the deploy key rotate", "k": 1}, &found); e != "" || len(found.Hits) != 1 || found.Hits[0].ID != stored.ID {
		t.Fatalf("search: %q %+v", e, found)
	}
	if r := runCmd(t, "", "info", path); r.code != 0 || !strings.Contains(r.stdout, "mem") {
		t.Errorf("info while the server runs: %+v", r)
	}
	if r := runCmd(t, "", "export", path); r.code != 0 || !strings.Contains(r.stdout, "the deploy key rotates every Monday") || !strings.Contains(r.stdout, `{"id":"lunch"`) {
		t.Errorf("export while the server runs: %+v", r)
	}
	if r := runCmd(t, "", "compact", path); r.code != exitFail || !strings.Contains(r.stderr, "locked by another process") {
		t.Errorf("compact while the server runs: %+v", r)
	}
	if err := cs.Close(); err != nil { // closes the child's stdin; it exits
		t.Fatalf("close: %v (stderr: %s)", err, stderr.String())
	}
	if !cmd.ProcessState.Success() {
		t.Fatalf("server exited with %v; stderr: %s", cmd.ProcessState, stderr.String())
	}
	r := runCmd(t, "", "export", path)
	if r.code != 0 || !strings.Contains(r.stdout, `"text":"the deploy key rotates every Monday","metadata":{"kind":"ops"}`) || !strings.Contains(r.stdout, `{"id":"lunch"`) {
		t.Fatalf("export after the server: %+v", r)
	}
	if !strings.Contains(stderr.String(), `cairn mcp: serving `+path+`, collection "mem" (0 memories)`) {
		t.Errorf("server's log: %q", stderr.String())
	}
	if srv.calls.Load() < 3 {
		t.Errorf("the embeddings server saw %d requests, want at least 3", srv.calls.Load())
	}
}

// rpcReply is one JSON-RPC reply line as the server writes it.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// serveScript runs cairn mcp on the lines of script, fed to it one byte at
// a time (so that every line arrives in pieces), and returns the exit
// status, the replies and the log. The server answers every request
// before it exits at the end of the script.
func serveScript(t *testing.T, script string, args ...string) (int, []rpcReply, string) {
	t.Helper()
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	var out, errb strings.Builder
	argv := append([]string{"mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "bow"}, args...)
	code := run(context.Background(), argv, iotest.OneByteReader(strings.NewReader(script)), &out, &errb)
	var replies []rpcReply
	for line := range strings.Lines(out.String()) {
		var r rpcReply
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("reply %q: %v", line, err)
		}
		replies = append(replies, r)
	}
	return code, replies, errb.String()
}

// repliesByID indexes replies by their ids as sent.
func repliesByID(replies []rpcReply) map[string]rpcReply {
	byID := make(map[string]rpcReply, len(replies))
	for _, r := range replies {
		byID[string(r.ID)] = r
	}
	return byID
}

const initLines = `{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
`

// TestMCPBadLines feeds cairn mcp lines that are not JSON-RPC messages (a
// line of JSON that is not UTF-8 among them):
// each gets one error reply (a parse error, or an invalid request), and
// the session goes on to answer the good lines after them.
func TestMCPBadLines(t *testing.T) {
	script := initLines + `garbage
[]
{"jsonrpc":"2.0","id":90,"method":"ping"} trailing
{"jsonrpc":"2.0"
{"jsonrpc":"1.0","id":91,"method":"ping"}
"a string"

{"jsonrpc":"2.0","id":1,"method":"ping"}
[{"jsonrpc":"2.0","id":92,"method":"ping"}]
` + "{\"jsonrpc\":\"2.0\",\"id\":93,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_store\",\"arguments\":{\"text\":\"Andr\xe9\",\"namespace\":\"Andr\xe9\"}}}\n" + `
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_store","arguments":{"id":"m1","text":"a line ending in CR LF"}}}` + "\r\n" +
		`{"jsonrpc":"2.0","id":3,"method":"ping"}` // the last line has no newline
	code, replies, log := serveScript(t, script)
	if code != exitOK {
		t.Fatalf("exit status %d; log:\n%s", code, log)
	}
	byID := map[string]rpcReply{}
	var errs []int
	for _, r := range replies {
		if string(r.ID) == "null" {
			if r.Error == nil {
				t.Errorf("a reply with a null id and no error: %+v", r)
				continue
			}
			errs = append(errs, r.Error.Code)
			continue
		}
		byID[string(r.ID)] = r
	}
	if want := []int{-32700, -32600, -32700, -32700, -32600, -32600, -32700}; !slices.Equal(errs, want) {
		t.Errorf("error codes of the lines without an id: %v, want %v", errs, want)
	}
	if r, ok := byID["91"]; !ok || r.Error == nil || r.Error.Code != -32600 {
		t.Errorf(`the reply to a "jsonrpc":"1.0" line with id 91: %+v`, r)
	}
	for _, id := range []string{"90", "92", "93"} {
		if _, ok := byID[id]; ok {
			t.Errorf("id %s, inside a bad line, was answered", id)
		}
	}
	for _, id := range []string{`"init"`, "1", "2", "3"} {
		if r, ok := byID[id]; !ok || r.Error != nil {
			t.Errorf("request %s: reply %+v (present %v)", id, r, ok)
		}
	}
	if r := byID["2"]; !strings.Contains(string(r.Result), `"structuredContent":{"id":"m1"}`) {
		t.Errorf("memory_store after the bad lines: %s", r.Result)
	}
	if !strings.Contains(log, "input line 3: Parse error") {
		t.Errorf("log: %s", log)
	}
}

// TestMCPBadIDs feeds cairn mcp requests whose ids the SDK would drop or
// answer as another id: a null id, a fraction, an integer past 2^53. Each
// gets an Invalid Request reply carrying the id as sent (null for null),
// none of them runs, and the session goes on.
func TestMCPBadIDs(t *testing.T) {
	script := initLines + `{"jsonrpc":"2.0","id":null,"method":"ping"}
{"jsonrpc":"2.0","id":1.9,"method":"ping"}
{"jsonrpc":"2.0","id":99999999999999999999,"method":"tools/call","params":{"name":"memory_store","arguments":{"id":"m1","text":"never stored"}}}
{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}
{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"memory_get","arguments":{"ids":["m1"]}}}
{"jsonrpc":"2.0","id":-9007199254740992,"method":"ping"}
`
	code, replies, log := serveScript(t, script)
	if code != exitOK {
		t.Fatalf("exit status %d; log:\n%s", code, log)
	}
	byID := repliesByID(replies)
	for _, id := range []string{"null", "1.9", "99999999999999999999", "9007199254740993"} {
		if r, ok := byID[id]; !ok || r.Error == nil || r.Error.Code != -32600 {
			t.Errorf("id %s: reply %+v (present %v), want -32600", id, r, ok)
		}
	}
	if r := byID["4"]; r.Error != nil || strings.Contains(string(r.Result), "never stored") {
		t.Errorf("memory_get after a refused memory_store: %+v", r)
	}
	if r, ok := byID["-9007199254740992"]; !ok || r.Error != nil {
		t.Errorf("id -2^53: reply %+v (present %v)", r, ok)
	}
	if len(replies) != 7 {
		t.Errorf("%d replies, want 7", len(replies))
	}
}

// TestMCPUnknownTool: a tools/call of a tool that does not exist, or of
// none, is an error reply, and the session goes on. The error bound's
// middleware read the SDK's nil result and the server died.
func TestMCPUnknownTool(t *testing.T) {
	script := initLines + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"no_such_tool","arguments":{}}}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{}}
{"jsonrpc":"2.0","id":3,"method":"ping"}
`
	code, replies, log := serveScript(t, script)
	if code != exitOK {
		t.Fatalf("exit status %d; log:\n%s", code, log)
	}
	byID := repliesByID(replies)
	for _, id := range []string{"1", "2"} {
		if r, ok := byID[id]; !ok || r.Error == nil && !strings.Contains(string(r.Result), `"isError":true`) {
			t.Errorf("call %s of no tool: reply %+v (present %v), want an error", id, r, ok)
		}
	}
	if r, ok := byID["3"]; !ok || r.Error != nil {
		t.Errorf("ping after them: %+v (present %v)", r, ok)
	}
}

// TestLineConnBusyID checks that a call whose id is that of a call not
// yet answered is refused, and that the id is free again once answered.
func TestLineConnBusyID(t *testing.T) {
	var out strings.Builder
	c := &lineConn{w: &out, pending: make(map[jsonrpc.ID]struct{}), done: make(chan struct{})}
	call := []byte(`{"jsonrpc":"2.0","id":7,"method":"ping"}`)
	first := c.decode(1, call, false, maxMessage)
	if first == nil {
		t.Fatal("the first call was refused")
	}
	if c.decode(2, call, false, maxMessage) != nil {
		t.Fatal("a second call with the id of one in flight was passed on")
	}
	if !strings.Contains(out.String(), `"id":7,"error":{"code":-32600`) {
		t.Fatalf("reply: %s", out.String())
	}
	resp := &jsonrpc.Response{ID: first.(*jsonrpc.Request).ID, Result: json.RawMessage("{}")}
	if err := c.Write(context.Background(), resp); err != nil {
		t.Fatal(err)
	}
	if c.decode(3, call, false, maxMessage) == nil {
		t.Fatal("the id was still busy once answered")
	}
}

// TestMCPLongLine checks that a line longer than the limit is refused, in
// one reply, and that the line after it is read.
func TestMCPLongLine(t *testing.T) {
	in := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 300) + `"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"ping"}` + "\n"
	var out strings.Builder
	c, err := (&lineTransport{r: iotest.HalfReader(strings.NewReader(in)), w: &out, maxLine: 100}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := c.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.ID.Raw() != int64(2) {
		t.Fatalf("first message read: %+v", msg)
	}
	// The end of the input waits for the reply to the call read.
	if err := c.Write(context.Background(), &jsonrpc.Response{ID: msg.(*jsonrpc.Request).ID, Result: json.RawMessage("{}")}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(context.Background()); err != io.EOF {
		t.Fatalf("read at the end: %v", err)
	}
	if want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: a message is at most 100 bytes"}}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"result":{}}` + "\n"; out.String() != want {
		t.Fatalf("replies %q, want %q", out.String(), want)
	}
}

// TestMCPEmptyFilter checks that {} and null, which agents send for an
// optional object, are no filter.
func TestMCPEmptyFilter(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	call(t, cs, "memory_store", map[string]any{"id": "a", "text": "alpha", "metadata": map[string]any{"kind": "fact"}}, nil)
	call(t, cs, "memory_store", map[string]any{"id": "b", "text": "beta"}, nil)
	for _, f := range []any{map[string]any{}, nil} {
		var found searchOut
		if e := call(t, cs, "memory_search", map[string]any{"query": "alpha", "filter": f}, &found); e != "" || len(found.Hits) != 2 {
			t.Errorf("search with filter %v: %q %+v", f, e, found)
		}
		var list listOut
		if e := call(t, cs, "memory_list", map[string]any{"filter": f}, &list); e != "" || len(list.Memories) != 2 {
			t.Errorf("list with filter %v: %q %+v", f, e, list)
		}
	}
}

// TestMCPMergeAndRank checks memory_store's merge_similar and scope, and
// memory_search's half_life_days and importance.
func TestMCPMergeAndRank(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	var stored storeOut
	if e := call(t, cs, "memory_store", map[string]any{"id": "cat", "text": "the cat is called Miso", "metadata": map[string]any{"user": "ann"}}, &stored); e != "" {
		t.Fatal(e)
	}
	// The same words, for the same user: the stored memory takes the new
	// text; for another user, or without merge_similar, a new memory.
	merge := map[string]any{"text": "Miso is the cat called", "merge_similar": 0.95, "scope": []any{"user"}, "metadata": map[string]any{"user": "ann", "new": true}}
	if e := call(t, cs, "memory_store", merge, &stored); e != "" || stored.ID != "cat" || stored.MergedInto != "cat" {
		t.Fatalf("merging store: %q %+v", e, stored)
	}
	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": []any{"cat"}}, &got); e != "" || got.Memories[0].Text != "Miso is the cat called" || got.Memories[0].Metadata["new"] != true {
		t.Fatalf("the merged memory: %q %+v", e, got)
	}
	merge["metadata"] = map[string]any{"user": "bob"}
	stored = storeOut{}
	if e := call(t, cs, "memory_store", merge, &stored); e != "" || stored.MergedInto != "" || stored.ID == "cat" {
		t.Fatalf("another user's store: %q %+v", e, stored)
	}
	merge["id"] = "cat"
	if e := call(t, cs, "memory_store", merge, nil); !strings.Contains(e, "exists") {
		t.Fatalf("merging store of an id that exists: %q", e)
	}
	for _, bad := range []any{1.5, -0.1} {
		if e := call(t, cs, "memory_store", map[string]any{"text": "x", "merge_similar": bad}, nil); e == "" {
			t.Errorf("merge_similar %v accepted", bad)
		}
	}

	// Two memories alike but for importance: it decides.
	call(t, cs, "memory_store", map[string]any{"id": "low", "text": "tea in the morning", "metadata": map[string]any{"weight": 0.1}}, nil)
	call(t, cs, "memory_store", map[string]any{"id": "high", "text": "morning tea, always", "metadata": map[string]any{"weight": 0.9}}, nil)
	var found searchOut
	if e := call(t, cs, "memory_search", map[string]any{"query": "tea in the morning", "k": 2, "half_life_days": 30, "importance": "weight"}, &found); e != "" || len(found.Hits) != 2 || found.Hits[0].ID != "high" {
		t.Fatalf("search by importance: %q %+v", e, found)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "tea", "mode": "keyword", "half_life_days": 30}, nil); !strings.Contains(e, "vector") {
		t.Fatalf("keyword search with half_life_days: %q", e)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "tea", "half_life_days": -1}, nil); e == "" {
		t.Fatal("negative half_life_days accepted")
	}
	// A half-life under a nanosecond is the shortest there is, not none:
	// every memory has aged to nothing.
	found = searchOut{}
	if e := call(t, cs, "memory_search", map[string]any{"query": "tea in the morning", "k": 2, "half_life_days": 1e-20}, &found); e != "" || len(found.Hits) != 2 || found.Hits[0].Score != 0 {
		t.Fatalf("search with half_life_days 1e-20: %q %+v", e, found)
	}
}

// TestMCPConcurrentStores has 16 callers store 100 memories each at once
// through one session into a file, as an agent's parallel tool calls do:
// every store acknowledged is there, in the session and after a reopen.
func TestMCPConcurrentStores(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, m := fileMemory(t, path)
	cs := connect(t, m)
	const callers, each = 16, 100
	var wg sync.WaitGroup
	for c := range callers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("c%d-%d", c, i)
				if e := call(t, cs, "memory_store", map[string]any{"id": id, "text": fmt.Sprintf("note %d of caller %d", i, c)}, nil); e != "" {
					t.Errorf("store %s: %s", id, e)
					return
				}
			}
		})
	}
	wg.Wait()
	count := func(db *cairn.DB) int {
		c, err := db.Collection(ctx, "memories")
		if err != nil {
			t.Fatal(err)
		}
		n, err := c.Count(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count(db); n != callers*each {
		t.Fatalf("%d memories after %d acknowledged stores", n, callers*each)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if n := count(db); n != callers*each {
		t.Fatalf("%d memories after a reopen, want %d", n, callers*each)
	}
}

// TestMCPDeleteTwice checks that an id given twice counts once.
func TestMCPDeleteTwice(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	call(t, cs, "memory_store", map[string]any{"id": "m14", "text": "fourteen"}, nil)
	call(t, cs, "memory_store", map[string]any{"id": "m15", "text": "fifteen"}, nil)
	var del deleteOut
	if e := call(t, cs, "memory_delete", map[string]any{"ids": []string{"m14", "m14"}}, &del); e != "" || del.Deleted != 1 {
		t.Fatalf("delete m14 twice: %q %+v", e, del)
	}
	var list listOut
	if call(t, cs, "memory_list", nil, &list); len(list.Memories) != 1 || list.Memories[0].ID != "m15" {
		t.Fatalf("left: %+v", list)
	}
}

// silentServer is a TCP listener on loopback that accepts connections and
// never answers, like an embeddings server that hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return "http://" + l.Addr().String() + "/v1"
}

// TestMCPCallTimeout checks that a tool call whose embeddings server
// accepts and never answers fails within the call's deadline, with a
// message saying so, although one request may take 30 s and is tried
// three times.
func TestMCPCallTimeout(t *testing.T) {
	emb := &openai.Embedder{BaseURL: silentServer(t), Model: "m", Timeout: 30 * time.Second, MaxRetries: 2}
	m := newTestMemory(t, emb)
	m.callTimeout = 2 * time.Second
	if _, err := m.create(context.Background(), testDim); err != nil { // for the search
		t.Fatal(err)
	}
	cs := connect(t, m)
	for _, tt := range []struct {
		tool string
		args map[string]any
	}{
		{"memory_store", map[string]any{"text": "hello"}},
		{"memory_search", map[string]any{"query": "hello"}},
	} {
		start := time.Now()
		e := call(t, cs, tt.tool, tt.args, nil)
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("%s took %v with a 2s deadline", tt.tool, took)
		}
		if !strings.Contains(e, "the embedding service did not answer within 2s (-call-timeout)") {
			t.Errorf("%s: tool error %q", tt.tool, e)
		}
	}
}

// TestMCPSchemas checks that the tools' schemas say what the tools
// enforce: types, enums and bounds, and what the scores of a hit mean.
func TestMCPSchemas(t *testing.T) {
	cs := connect(t, newTestMemory(t, bowEmbedder(nil)))
	in, out := map[string]any{}, map[string]any{}
	for tool, err := range cs.Tools(context.Background(), nil) {
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(tool.InputSchema)
		var s, o any
		json.Unmarshal(b, &s)
		in[tool.Name] = s
		b, _ = json.Marshal(tool.OutputSchema)
		json.Unmarshal(b, &o)
		out[tool.Name] = o
	}
	// at follows a path of keys into a decoded schema.
	at := func(v any, path ...string) any {
		for _, k := range path {
			m, _ := v.(map[string]any)
			v = m[k]
		}
		return v
	}
	tests := []struct {
		schema any
		path   []string
		want   string // as JSON
	}{
		{in["memory_get"], []string{"properties", "ids", "type"}, `"array"`},
		{in["memory_get"], []string{"properties", "ids", "minItems"}, `1`},
		{in["memory_delete"], []string{"properties", "ids", "type"}, `"array"`},
		{in["memory_search"], []string{"properties", "mode", "enum"}, `["vector","keyword","hybrid"]`},
		{in["memory_search"], []string{"properties", "k", "minimum"}, `1`},
		{in["memory_search"], []string{"properties", "k", "maximum"}, `100`},
		{in["memory_search"], []string{"properties", "filter", "type"}, `["object","null"]`},
		{in["memory_list"], []string{"properties", "page", "minimum"}, `1`},
		{in["memory_list"], []string{"properties", "page_size", "minimum"}, `1`},
		{in["memory_list"], []string{"properties", "page_size", "maximum"}, `100`},
		{in["memory_store"], []string{"properties", "metadata", "additionalProperties", "type"}, `["string","number","boolean"]`},
	}
	for _, tt := range tests {
		got, _ := json.Marshal(at(tt.schema, tt.path...))
		if string(got) != tt.want {
			t.Errorf("%v: %s, want %s", tt.path, got, tt.want)
		}
	}
	hit := at(out["memory_search"], "properties", "hits", "items", "properties")
	for _, f := range []string{"similarity", "score"} {
		if d, _ := at(hit, f, "description").(string); !strings.Contains(d, "keyword mode") {
			t.Errorf("search hit's %s: description %q", f, d)
		}
	}
}

// TestMCPSizes checks the bound on a memory's size (-max-text) and that
// pages and searches are bounded in bytes, with the pages still covering
// every memory once.
func TestMCPSizes(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	m.maxText = 100
	cs := connect(t, m)
	if e := call(t, cs, "memory_store", map[string]any{"text": strings.Repeat("é", 100)}, nil); e != "" {
		t.Errorf("100 characters (200 bytes): %q", e)
	}
	for _, args := range []map[string]any{
		{"text": strings.Repeat("x", 101)},
		{"text": "x", "metadata": map[string]any{"note": strings.Repeat("y", 100)}},
		{"id": "nope", "text": strings.Repeat("x", 101)},
	} {
		tool := "memory_store"
		if args["id"] != nil {
			tool = "memory_update"
		}
		if e := call(t, cs, tool, args, nil); !strings.Contains(e, "maxLength") && !strings.Contains(e, "(-max-text)") {
			t.Errorf("%s of %d bytes: %q", tool, len(fmt.Sprint(args)), e)
		}
	}
	// The SDK's schema error quotes the text it refuses: the reply keeps
	// its start and end only.
	for _, tool := range []string{"memory_store", "memory_update"} {
		e := call(t, cs, tool, map[string]any{"id": "nope", "text": strings.Repeat("é", 500_000)}, nil)
		if len(e) > 2*maxErrorText || !strings.Contains(e, "maxLength") || !strings.Contains(e, "bytes left out") {
			t.Errorf("%s of a million bytes: a reply of %d bytes: %.200q", tool, len(e), e)
		}
	}

	m = newTestMemory(t, bowEmbedder(nil))
	m.maxText = 200_000
	cs = connect(t, m)
	for i := range 5 {
		call(t, cs, "memory_store", map[string]any{"id": fmt.Sprint("big", i), "text": fmt.Sprint("word", i, " ", strings.Repeat("z", 100_000))}, nil)
	}
	var seen []string
	for page := 1; page < 10; page++ {
		var list listOut
		raw := map[string]any{"page": page}
		if e := call(t, cs, "memory_list", raw, &list); e != "" {
			t.Fatalf("page %d: %s", page, e)
		}
		if b, _ := json.Marshal(list); len(b) > 256<<10+1024 {
			t.Errorf("page %d is %d bytes", page, len(b))
		}
		for _, mo := range list.Memories {
			seen = append(seen, mo.ID)
		}
		if list.More != list.SizeLimited || list.More != (page < 3) {
			t.Errorf("page %d: %d memories, more %v, size_limited %v", page, len(list.Memories), list.More, list.SizeLimited)
		}
		if !list.More {
			break
		}
	}
	if want := []string{"big0", "big1", "big2", "big3", "big4"}; !slices.Equal(seen, want) {
		t.Errorf("the pages held %v, want %v", seen, want)
	}
	var found searchOut
	if e := call(t, cs, "memory_search", map[string]any{"query": "word3", "k": 5}, &found); e != "" || len(found.Hits) != 2 || !found.SizeLimited {
		t.Errorf("search of 5 big memories: %q, %d hits, size_limited %v", e, len(found.Hits), found.SizeLimited)
	}

	// A page past the end is empty, however large its number.
	var list listOut
	if e := call(t, cs, "memory_list", map[string]any{"page": int64(1<<62 + 1<<61 + 1), "page_size": 2}, &list); e != "" || len(list.Memories) != 0 || list.More {
		t.Errorf("page 2^62+2^61+1: %q, %d memories, more %v", e, len(list.Memories), list.More)
	}
}

// TestMCPBadLinesPipe runs cairn mcp as a child process and writes to its
// stdin, an OS pipe, each kind of bad line between good ones, then stores
// and, once the store is answered, searches: every bad line costs one
// error reply, and the session stores, finds and exits 0.
func TestMCPBadLinesPipe(t *testing.T) {
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	cmd := exec.Command(os.Args[0], "mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "bow")
	cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb strings.Builder
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill() // by PID, if the test failed before the child exited
			cmd.Wait()
		}
	})
	replies := make(chan rpcReply, 16)
	go func() {
		defer close(replies)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var r rpcReply
			if json.Unmarshal(sc.Bytes(), &r) != nil {
				r.ID = json.RawMessage(`"unreadable"`)
			}
			replies <- r
		}
	}()
	parseErrs := 0
	// await reads replies until the one with id, counting the error
	// replies with a null id on the way.
	await := func(id string) rpcReply {
		t.Helper()
		for r := range replies {
			switch {
			case string(r.ID) == id:
				return r
			case string(r.ID) == "null" && r.Error != nil:
				parseErrs++
			case string(r.ID) == `"unreadable"`:
				t.Fatal("a reply that is not JSON")
			}
		}
		t.Fatalf("no reply with id %s; stderr:\n%s", id, errb.String())
		return rpcReply{}
	}
	send := func(lines ...string) {
		t.Helper()
		for _, l := range lines {
			if _, err := io.WriteString(stdin, l+"\n"); err != nil {
				t.Fatal(err)
			}
		}
	}
	send(strings.TrimSuffix(initLines, "\n"), "garbage", "[]",
		`{"jsonrpc":"2.0","id":90,"method":"ping"} trailing`, `{"jsonrpc":"2.0"`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store","arguments":{"id":"m1","text":"the deploy key rotates every Monday"}}}`)
	if r := await("1"); r.Error != nil || !strings.Contains(string(r.Result), `"m1"`) {
		t.Errorf("store after the bad lines: %s %+v", r.Result, r.Error)
	}
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_search","arguments":{"query":"when does the deploy key rotate","k":1,"filter":{}}}}`)
	if r := await("2"); r.Error != nil || !strings.Contains(string(r.Result), "the deploy key rotates every Monday") {
		t.Errorf("search after the bad lines: %s %+v", r.Result, r.Error)
	}
	if parseErrs != 4 {
		t.Errorf("%d error replies with a null id, want 4 (one a bad line)", parseErrs)
	}
	stdin.Close()
	for range replies {
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("cairn mcp: %v; stderr:\n%s", err, errb.String())
	}
}

// TestMCPNamespaces: each namespace's memories are apart from every
// other's and from those stored without one; a server's -namespace is
// the namespace of calls that name none.
func TestMCPNamespaces(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	cs := connect(t, m)
	var st storeOut
	for _, c := range []struct{ ns, text string }{{"alice", "alice likes green tea"}, {"bob", "bob likes black coffee"}, {"", "the office has tea and coffee"}} {
		if e := call(t, cs, "memory_store", map[string]any{"text": c.text, "namespace": c.ns, "id": "m1"}, &st); e != "" {
			t.Fatalf("store in %q: %s", c.ns, e)
		}
	}
	search := func(ns string) []string {
		t.Helper()
		var out searchOut
		if e := call(t, cs, "memory_search", map[string]any{"query": "likes tea coffee", "k": 10, "namespace": ns}, &out); e != "" {
			t.Fatalf("search %q: %s", ns, e)
		}
		var texts []string
		for _, h := range out.Hits {
			texts = append(texts, h.Text)
		}
		return texts
	}
	for ns, want := range map[string]string{"alice": "alice likes green tea", "bob": "bob likes black coffee", "": "the office has tea and coffee"} {
		if got := search(ns); len(got) != 1 || got[0] != want {
			t.Errorf("search in %q: %q, want only %q", ns, got, want)
		}
	}
	if got := search("carol"); len(got) != 0 {
		t.Errorf("search in a namespace never stored to: %q", got)
	}
	var mem memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"m1"}, "namespace": "bob"}, &mem); e != "" || mem.Memories[0].Text != "bob likes black coffee" {
		t.Errorf("get m1 in bob: %v, %q", mem, e)
	}
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"m1"}, "namespace": "carol"}, nil); !strings.Contains(e, `no memory has the id "m1"`) {
		t.Errorf("get in carol: %q", e)
	}
	if e := call(t, cs, "memory_update", map[string]any{"id": "m1", "text": "alice likes oolong tea", "namespace": "alice"}, nil); e != "" {
		t.Fatal(e)
	}
	var del deleteOut
	if e := call(t, cs, "memory_delete", map[string]any{"ids": []string{"m1"}, "namespace": "bob"}, &del); e != "" || del.Deleted != 1 {
		t.Fatalf("delete in bob: %v, %q", del, e)
	}
	var list listOut
	if e := call(t, cs, "memory_list", map[string]any{"namespace": "alice"}, &list); e != "" || len(list.Memories) != 1 || list.Memories[0].Text != "alice likes oolong tea" {
		t.Fatalf("list alice: %+v, %q", list, e)
	}
	if got := search(""); len(got) != 1 {
		t.Errorf("the collection's own memories after the namespaces changed: %q", got)
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "tea", "namespace": strings.Repeat("x", maxNamespace+1)}, nil); !strings.Contains(e, "namespace is") {
		t.Errorf("a namespace too long: %q", e)
	}
	// A server for alice: calls without a namespace are hers.
	m.namespace = "alice"
	if got := search(""); len(got) != 1 || got[0] != "alice likes oolong tea" {
		t.Errorf("search with -namespace alice: %q", got)
	}
	if got := search("bob"); len(got) != 0 {
		t.Errorf("bob's memories after his delete: %q", got)
	}
}

// TestMCPForeignWriteLock: while another program holds SQLite's write
// lock on the memory file, memory_store answers with a tool error that
// says the file is locked, the session goes on (a search still answers),
// and once the lock is let go the same store succeeds.
func TestMCPForeignWriteLock(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db, m := fileMemory(t, path)
	defer db.Close()
	cs := connect(t, m)
	if e := call(t, cs, "memory_store", map[string]any{"id": "a", "text": "the user's cat is called Miso"}, nil); e != "" {
		t.Fatal(e)
	}

	conn := sqlitetest.ForeignWriter(t, path)
	store := map[string]any{"id": "b", "text": "the user prefers dark mode"}
	if e := call(t, cs, "memory_store", store, nil); !strings.Contains(e, "locked") {
		t.Fatalf("memory_store beside a foreign write lock: %q, want a tool error saying locked", e)
	}
	var found struct {
		Hits []struct{ ID string } `json:"hits"`
	}
	if e := call(t, cs, "memory_search", map[string]any{"query": "cat"}, &found); e != "" || len(found.Hits) != 1 || found.Hits[0].ID != "a" {
		t.Fatalf("memory_search beside a foreign write lock: %q, %+v", e, found)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if e := call(t, cs, "memory_store", store, nil); e != "" {
		t.Fatalf("memory_store once the lock is let go: %s", e)
	}
}

// TestMCPInterruptAnswersCallsInFlight interrupts cairn mcp (its context,
// as SIGTERM cancels it) while a memory_store waits for its embedding,
// with stdin still open: the server stops reading, lets the call finish,
// sends its reply, and exits 0. It used to exit without the reply, the
// memory stored: a client would store it again.
func TestMCPInterruptAnswersCallsInFlight(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	srv := newEmbedServer(t, func(s string) []float32 {
		if strings.Contains(s, "slow") {
			close(entered)
			<-release
		}
		return bagOfWords(s)
	})
	path := filepath.Join(t.TempDir(), "agent.db")
	stdin, feed := io.Pipe()
	defer feed.Close()
	var out, errb syncBuffer
	ctx, interrupt := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() {
		code <- run(ctx, []string{"mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "bow"}, stdin, &out, &errb)
	}()
	go io.WriteString(feed, initLines+`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"memory_store","arguments":{"id":"m1","text":"a slow memory"}}}`+"\n")
	select {
	case <-entered:
	case <-time.After(time.Minute):
		t.Fatalf("the call never reached the embedder; log:\n%s", errb.String())
	}
	interrupt()
	time.Sleep(50 * time.Millisecond) // let the interrupt be seen first
	// A call after the interrupt is answered as not run; it was taken as
	// in flight, never run, and the server waited for its reply for ever.
	go io.WriteString(feed, `{"jsonrpc":"2.0","id":6,"method":"ping"}`+"\n")
	time.Sleep(50 * time.Millisecond)
	close(release)
	select {
	case c := <-code:
		if c != exitOK {
			t.Fatalf("exit status %d; log:\n%s", c, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("the server did not exit after the interrupt")
	}
	var reply *rpcReply
	for line := range strings.Lines(out.String()) {
		var r rpcReply
		if json.Unmarshal([]byte(line), &r) == nil && string(r.ID) == "5" {
			reply = &r
		}
	}
	if reply == nil || reply.Error != nil || !strings.Contains(string(reply.Result), `"id":"m1"`) {
		t.Fatalf("the reply to the call in flight: %+v; output:\n%s", reply, out.String())
	}
	if !strings.Contains(out.String(), `{"jsonrpc":"2.0","id":6,"error":{"code":-32001,`) {
		t.Errorf("no refusal of the call after the interrupt; output:\n%s", out.String())
	}
}

// syncBuffer is a strings.Builder safe for a writer and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestMCPGetRepeatedIDs: memory_get gives each memory once, however many
// times the call names it. It gave it once per mention, so that a request
// of a few kilobytes naming a long memory over and over made an answer of
// gigabytes (a 3.8 KB call, 256 MB).
func TestMCPGetRepeatedIDs(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	cs := connect(t, m)
	for _, id := range []string{"a", "b"} {
		if e := call(t, cs, "memory_store", map[string]any{"id": id, "text": "memory " + id}, nil); e != "" {
			t.Fatalf("store %s: %s", id, e)
		}
	}
	ids := []string{"b", "a"}
	for range 1000 {
		ids = append(ids, "a", "b")
	}
	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": ids}, &got); e != "" || len(got.Memories) != 2 || got.Memories[0].ID != "b" || got.Memories[1].ID != "a" {
		t.Errorf("get of b, a and 1000 repeats: %q, %d memories, want b and a", e, len(got.Memories))
	}
	if e := call(t, cs, "memory_get", map[string]any{"ids": []string{"a", "a", "nope"}}, nil); !strings.Contains(e, `"nope"`) {
		t.Errorf("get of an unknown id among repeats: %q", e)
	}
}

// TestMCPGetBounded: a memory_get answer stops short of 256 KiB, as a
// search or a list page does, and names the ids it leaves out, so that a
// call of a few KB cannot ask for an answer of hundreds of megabytes; an
// unknown id fails the call wherever it is.
func TestMCPGetBounded(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	cs := connect(t, m)
	var ids []string
	for i := range 8 {
		id := fmt.Sprint("m", i)
		text := fmt.Sprint("memory ", i, " ", strings.Repeat("x", 60000))
		if e := call(t, cs, "memory_store", map[string]any{"id": id, "text": text}, nil); e != "" {
			t.Fatalf("store %s: %s", id, e)
		}
		ids = append(ids, id)
	}
	var got memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": ids}, &got); e != "" {
		t.Fatal(e)
	}
	n := len(got.Memories)
	if !got.SizeLimited || n == 0 || n >= len(ids) || !slices.Equal(got.Rest, ids[n:]) {
		t.Fatalf("get of 8 memories of 60,000 characters: %d given, size_limited %v, rest %v", n, got.SizeLimited, got.Rest)
	}
	for i, mo := range got.Memories {
		if mo.ID != ids[i] {
			t.Fatalf("memory %d is %s, want %s", i, mo.ID, ids[i])
		}
	}
	var rest memoriesOut
	if e := call(t, cs, "memory_get", map[string]any{"ids": got.Rest}, &rest); e != "" || len(rest.Memories) == 0 || rest.Memories[0].ID != ids[n] {
		t.Fatalf("get of the rest: %q, %+v", e, rest.Rest)
	}
	if e := call(t, cs, "memory_get", map[string]any{"ids": append(slices.Clone(ids), "nope")}, nil); !strings.Contains(e, `"nope"`) {
		t.Errorf("get of an unknown id after the answer is full: %q", e)
	}
}
