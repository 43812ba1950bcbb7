package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Fuzz targets for the stdio transport of "cairn mcp": what a client
// writes on stdin is cut into lines and each line decoded into a message.

// FuzzMCPLine checks lineConn.decode on one line: a line it passes on is a
// JSON-RPC message whose id, if it is a call, comes back in a reply as
// sent; a line it refuses gets one reply, a JSON-RPC error with a code of
// the spec and the line's id or null.
func FuzzMCPLine(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":"a","method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"Id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1.5,"method":null}`,
		`{"jsonrpc":"2.0","id":1.5,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":2.5,"id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":[1],"method":"ping"}`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`"ping"`, `{`, `{} {}`, "{\"k\":\"\xff\"}", ``, `   `,
		`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"query","arguments":{"text":"x","k":3}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		var out strings.Builder
		c := &lineConn{w: &out, pending: make(map[jsonrpc.ID]struct{}), done: make(chan struct{})}
		msg := c.decode(1, line, false, maxMessage)
		if msg == nil {
			if len(bytes.TrimSpace(line)) == 0 {
				if out.Len() != 0 {
					t.Fatalf("a blank line got a reply: %q", out.String())
				}
				return
			}
			checkRefusal(t, line, out.String())
			return
		}
		if out.Len() != 0 {
			t.Fatalf("a message passed on also got a reply: %q", out.String())
		}
		if !json.Valid(line) {
			t.Fatalf("%q is not JSON, yet passed on", line)
		}
		req, ok := msg.(*jsonrpc.Request)
		if !ok || !req.IsCall() {
			return
		}
		if _, ok := c.pending[req.ID]; !ok {
			t.Fatalf("call %q is not pending", line)
		}
		// The reply must carry the id as the line has it.
		sent, ok := lineID(line)
		if !ok {
			t.Fatalf("call %q passed on, but its id is not a string or an integer", line)
		}
		reply, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: req.ID, Result: json.RawMessage("{}")})
		if err != nil {
			t.Fatal(err)
		}
		back, ok := lineID(reply)
		if !ok || back != sent {
			t.Fatalf("call %q is answered with id %s, want %s", line, back, sent)
		}
	})
}

// lineID returns the "id" member of the JSON object b (the last one, with
// the exact name, as the SDK reads it) in a canonical form: a string
// quoted, an integer in decimal; ok is false if it is neither.
func lineID(b []byte) (id string, ok bool) {
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil {
		return "", false
	}
	// encoding/json folds the case of no map key, and keeps the last
	// of two equal ones, as the SDK does.
	raw, found := m["id"]
	if !found || len(raw) == 0 {
		return "", false
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return strconv.Quote(s), true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < -1<<53 || n > 1<<53 {
		return "", false
	}
	return strconv.FormatInt(n, 10), true
}

// checkRefusal checks that reply, what a refused line got, is one JSON-RPC
// error line with the code of a parse error or an invalid request, and the
// line's id or null.
func checkRefusal(t *testing.T, line []byte, reply string) {
	t.Helper()
	if strings.Count(reply, "\n") != 1 || !strings.HasSuffix(reply, "\n") {
		t.Fatalf("line %q: reply %q is not one line", line, reply)
	}
	var r struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(reply), &r); err != nil {
		t.Fatalf("line %q: reply %q is not JSON: %v", line, reply, err)
	}
	if r.JSONRPC != "2.0" || r.Error == nil || r.Error.Message == "" ||
		r.Error.Code != jsonrpc.CodeParseError && r.Error.Code != jsonrpc.CodeInvalidRequest {
		t.Fatalf("line %q: reply %q is not a JSON-RPC error of a bad message", line, reply)
	}
	if string(r.ID) == "null" {
		return
	}
	if sent, ok := lineID(line); ok {
		if back, _ := lineID([]byte(reply)); back != sent {
			t.Fatalf("line %q: refused with id %s, want %s or null", line, r.ID, sent)
		}
	}
}

// FuzzMCPReadLine checks readLine: the lines it returns, with their line
// ends, are the input, and a line over the limit is dropped whole and
// flagged.
func FuzzMCPReadLine(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n{}\r\n\nlast"), 8)
	f.Add([]byte(strings.Repeat("x", 70000)+"\nshort\n"), 100)
	f.Add([]byte("a\r\r\nb\n"), 1)
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		if limit < 0 || limit > 1<<20 {
			return
		}
		br := bufio.NewReaderSize(bytes.NewReader(in), 16)
		rest := in
		for i := 0; ; i++ {
			if i > len(in)+1 {
				t.Fatalf("readLine does not end on %q", in)
			}
			line, long, err := readLine(br, limit)
			if err != nil && err != io.EOF {
				t.Fatalf("readLine: %v", err)
			}
			// The line, as the input has it: up to its newline, which
			// counts towards the limit with a "\r" before it.
			var raw []byte
			size := 0
			if j := bytes.IndexByte(rest, '\n'); j >= 0 && err == nil {
				raw, rest = rest[:j], rest[j+1:]
				size = j + 1
			} else if err == io.EOF {
				raw, rest = rest, nil
				size = len(raw)
			} else {
				t.Fatalf("readLine returned a line without error, but %q has no newline", rest)
			}
			if over := size > limit+2; long != over {
				t.Fatalf("a line of %d bytes, limit %d: long %v", size, limit, long)
			}
			if want := bytes.TrimSuffix(raw, []byte("\r")); long && line != nil || !long && !bytes.Equal(line, want) {
				t.Fatalf("line %q (long %v), want %q", line, long, want)
			}
			if err == io.EOF {
				return
			}
		}
	})
}
