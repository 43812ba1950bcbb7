package main

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// 2^53 and 2^53+1, which one float64 stands for.
const (
	twoTo53     = "9007199254740992"
	twoTo53And1 = "9007199254740993"
)

// Integers beyond 2^53 survive import and export exactly, in both import
// modes, and -filter tells them apart.
func TestExportImportExactIntegers(t *testing.T) {
	in := `{"id":"a","metadata":{"n":` + twoTo53 + `},"embedding":[1,0,0]}
{"id":"b","metadata":{"n":` + twoTo53And1 + `},"embedding":[1,0,0]}
`
	for _, mode := range [][]string{nil, {"-batch", "1"}} {
		path := newFile(t)
		args := append(append([]string{"import", "-q", "-collection", "n"}, mode...), path)
		if r := runCmd(t, in, args...); r.code != 0 {
			t.Fatalf("import %v: %+v", mode, r)
		}
		out := runCmd(t, "", "export", path)
		if !strings.Contains(out.stdout, `"n":`+twoTo53And1) || !strings.Contains(out.stdout, `"n":`+twoTo53+`}`) {
			t.Errorf("import %v then export lost an integer:\n%s", mode, out.stdout)
		}
		q := runCmd(t, "", "query", path, "-collection", "n", "-vector", "[1,0,0]", "-filter", `{"n":`+twoTo53And1+`}`, "-json")
		if q.code != 0 || strings.Count(q.stdout, `"id":`) != 1 || !strings.Contains(q.stdout, `"id":"b"`) {
			t.Errorf("query -filter n = 2^53+1 after import %v: %+v", mode, q)
		}
	}
}

// The MCP tools keep integers beyond 2^53 in metadata and filters.
func TestMCPExactIntegers(t *testing.T) {
	m := newTestMemory(t, bowEmbedder(nil))
	cs := connect(t, m)
	for id, n := range map[string]int64{"a": 1 << 53, "b": 1<<53 + 1} {
		if e := call(t, cs, "memory_store", map[string]any{"id": id, "text": "a number", "metadata": map[string]any{"n": n}}, nil); e != "" {
			t.Fatalf("store %s: %s", id, e)
		}
	}
	for _, tool := range []string{"memory_search", "memory_list"} {
		var out struct {
			Hits     []hit       `json:"hits"`
			Memories []memoryOut `json:"memories"`
		}
		args := map[string]any{"filter": map[string]any{"n": map[string]any{"$eq": int64(1<<53 + 1)}}}
		if tool == "memory_search" {
			args["query"] = "a number"
		}
		if e := call(t, cs, tool, args, &out); e != "" {
			t.Fatalf("%s: %s", tool, e)
		}
		var ids []string
		for _, h := range out.Hits {
			ids = append(ids, h.ID)
		}
		for _, h := range out.Memories {
			ids = append(ids, h.ID)
		}
		if len(ids) != 1 || ids[0] != "b" {
			t.Errorf("%s with n = 2^53+1 found %v, want [b]", tool, ids)
		}
	}
	c, err := m.db.Collection(context.Background(), "memories")
	if err != nil {
		t.Fatal(err)
	}
	its, err := c.Get(context.Background(), "b")
	if err != nil {
		t.Fatal(err)
	}
	if n := its[0].Metadata["n"]; n != int64(1<<53+1) {
		t.Errorf("stored n = %v (%T), want 2^53+1", n, n)
	}
}

// TestMCPExactIntegersOut: the tools' results give integers beyond 2^53
// as stored, in their text and their structured content. The SDK sends
// a result through float64 numbers after checking it against its schema,
// and every tool answered 9007199254740993 as 9007199254740992.
func TestMCPExactIntegersOut(t *testing.T) {
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	serve := func(calls ...string) []rpcReply {
		t.Helper()
		script := initLines
		for i, c := range calls {
			script += fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", i+1, c)
		}
		var out, errb strings.Builder
		argv := []string{"mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "bow"}
		if code := run(context.Background(), argv, strings.NewReader(script), &out, &errb); code != exitOK {
			t.Fatalf("exit status %d; log:\n%s", code, errb.String())
		}
		var replies []rpcReply
		for line := range strings.Lines(out.String()) {
			var r rpcReply
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("reply %q: %v", line, err)
			}
			if string(r.ID) != `"init"` {
				replies = append(replies, r)
			}
		}
		return replies
	}
	// One call a session: calls of one session run at once.
	var replies []rpcReply
	for _, c := range []string{
		`{"name":"memory_store","arguments":{"id":"b","text":"a number","metadata":{"n":` + twoTo53And1 + `}}}`,
		`{"name":"memory_get","arguments":{"ids":["b"]}}`,
		`{"name":"memory_list","arguments":{}}`,
		`{"name":"memory_search","arguments":{"query":"a number"}}`,
		`{"name":"memory_update","arguments":{"id":"b","text":"a number again"}}`,
		`{"name":"memory_history","arguments":{"id":"b"}}`,
	} {
		replies = append(replies, serve(c)...)
	}
	for i, r := range replies[1:] {
		var res struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured json.RawMessage `json:"structuredContent"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil || r.Error != nil {
			t.Fatalf("reply %d: %v, %+v", i+2, err, r.Error)
		}
		if len(res.Content) == 0 || !strings.Contains(res.Content[0].Text, `"n":`+twoTo53And1) || !strings.Contains(string(res.Structured), `"n":`+twoTo53And1) {
			t.Errorf("reply %d lacks n = %s: %s", i+2, twoTo53And1, r.Result)
		}
	}
}

// Whole numbers beyond 2^53 that metadata holds as float64s (2^60, 2^63)
// come out of export, query -json and MCP in their exact digits, so that
// an import or a filter reads the same number back. encoding/json wrote
// 2^60 as 1152921504606847000, which import stored as that other integer,
// and 2^63 as 9223372036854776000, which import refused.
func TestExportImportWholeFloats(t *testing.T) {
	const (
		two60 = "1152921504606846976"
		two63 = "9223372036854775808"
	)
	in := `{"collection":{"name":"n","dim":2,"metric":"cosine","index":"flat"}}
{"id":"a","metadata":{"n":` + two60 + `,"m":` + two63 + `,"k":-` + two63 + `},"embedding":[1,0]}
`
	path := filepath.Join(t.TempDir(), "t.db")
	if r := runCmd(t, in, "import", "-q", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	exp := runCmd(t, "", "export", path)
	for _, n := range []string{two60, two63, "-" + two63} {
		if !strings.Contains(exp.stdout, ":"+n) {
			t.Errorf("export lacks %s:\n%s", n, exp.stdout)
		}
	}
	again := filepath.Join(t.TempDir(), "again.db")
	if r := runCmd(t, exp.stdout, "import", "-q", again); r.code != 0 {
		t.Fatalf("import of the export: %+v", r)
	}
	if exp2 := runCmd(t, "", "export", again); exp2.stdout != exp.stdout {
		t.Errorf("export | import | export differs:\n%s\n%s", exp.stdout, exp2.stdout)
	}
	q := runCmd(t, "", "query", again, "-collection", "n", "-vector", "[1,0]", "-json", "-filter", `{"n":`+two60+`}`)
	if q.code != 0 || !strings.Contains(q.stdout, `"id":"a"`) || !strings.Contains(q.stdout, `"n":`+two60) {
		t.Errorf("query -filter n = 2^60 after export | import: %+v", q)
	}
}

func TestMCPWholeFloatsOut(t *testing.T) {
	const two60 = "1152921504606846976"
	srv := newEmbedServer(t)
	path := filepath.Join(t.TempDir(), "agent.db")
	script := initLines +
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store","arguments":{"id":"b","text":"a number","metadata":{"n":` + two60 + `}}}}` + "\n"
	var out, errb strings.Builder
	argv := []string{"mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "bow"}
	if code := run(context.Background(), argv, strings.NewReader(script), &out, &errb); code != exitOK {
		t.Fatalf("exit status %d; log:\n%s", code, errb.String())
	}
	script = initLines + `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_get","arguments":{"ids":["b"]}}}` + "\n"
	out.Reset()
	if code := run(context.Background(), argv, strings.NewReader(script), &out, &errb); code != exitOK {
		t.Fatalf("exit status %d; log:\n%s", code, errb.String())
	}
	if !strings.Contains(out.String(), `\"n\":`+two60) || !strings.Contains(out.String(), `"n":`+two60) {
		t.Errorf("memory_get lacks n = 2^60 in its text or structured content:\n%s", out.String())
	}
}

// Integers of magnitude 2^63 and more that a float64 holds, which
// encoding/json writes rounded (9223372036854776000 for 2^63), export in
// exact digits, so that import takes back what export wrote.
func TestExportImportIntegersBeyondInt64(t *testing.T) {
	in := `{"id":"a","metadata":{"u":9223372036854775808,"w":9223372036854777856,"m":-9223372036854775808,"e":1e300},"embedding":[1,0,0]}` + "\n"
	path := newFile(t)
	if r := runCmd(t, in, "import", "-q", "-collection", "big", path); r.code != 0 {
		t.Fatalf("import: %+v", r)
	}
	first := runCmd(t, "", "export", "-collection", "big", path)
	if first.code != 0 {
		t.Fatalf("export: %+v", first)
	}
	again := filepath.Join(t.TempDir(), "again.db")
	if r := runCmd(t, first.stdout, "import", "-q", again); r.code != 0 {
		t.Fatalf("import of what export wrote: %+v\n%s", r, first.stdout)
	}
	if second := runCmd(t, "", "export", again); second.stdout != first.stdout {
		t.Errorf("export | import | export:\n%s\nwant:\n%s", second.stdout, first.stdout)
	}
}
