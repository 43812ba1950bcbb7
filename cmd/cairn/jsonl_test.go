package main

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzDecodeLine checks that decodeLine never panics, that every error
// wraps errLine, and that a decoded line encodes to a line that decodes
// to the same thing.
func FuzzDecodeLine(f *testing.F) {
	for _, s := range []string{
		`{"id":"a","text":"x","metadata":{"k":1,"b":true,"s":"v"},"embedding":[1,0.5,-2]}`,
		`{"collection":{"name":"n","dim":3,"metric":"cosine","index":"hnsw","hnsw":{"m":8}}}`,
		`{"collection":{"name":"n","dim":0}}`,
		`{"id":"a","created_at":"2026-01-01T00:00:00Z","future":{"x":[1,2]}}`,
		`{"id":"a","created_at":"2026-01-01T00:00:00.5+02:00","updated_at":"2026-01-02T00:00:00Z","expires_at":"2099-01-01T00:00:00Z"}`,
		`{"collection":{"name":"n","dim":3},"tenant":"t"}`, `{"collection":{"name":"n","dim":3},"tenant":""}`, `{"id":"a","tenant":"t"}`,
		`{"id":""}`, `[]`, `null`, `{"id":"a"} {"id":"b"}`, `{"embedding":[1e999]}`,
		`{"id":"a"}}`, `{"id":"a"} ]`, `{"collection":{"name":"n","dim":3}}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, err := decodeLine(b)
		if err != nil {
			if !errors.Is(err, errLine) {
				t.Fatalf("error %v does not wrap errLine", err)
			}
			return
		}
		if !json.Valid(b) {
			t.Fatalf("decodeLine(%q) took a line that is not one JSON value", b)
		}
		enc, err := l.MarshalJSON()
		if err != nil {
			return // metadata that JSON cannot hold back (none so far)
		}
		l2, err := decodeLine(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		enc2, _ := l2.MarshalJSON()
		if string(enc) != string(enc2) {
			t.Fatalf("round trip changed the line:\n%s\n%s", enc, enc2)
		}
	})
}
