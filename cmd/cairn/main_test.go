// main_test.go holds the helpers of the command's tests: the test binary
// runs as the cairn command itself when asked to (for the tests that need
// a real child process), a deterministic embedder, and an OpenAI-compatible
// embeddings server on loopback.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/cairndb/cairn"
)

// TestMain runs main instead of the tests when CAIRN_TEST_MAIN is set, so
// that a test can start this binary as the cairn command.
func TestMain(m *testing.M) {
	if os.Getenv("CAIRN_TEST_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// testDim is the dimension of bagOfWords.
const testDim = 16

// bagOfWords embeds a text as the counts of its lower-cased words hashed
// into testDim buckets: texts sharing words are similar. A text without
// words gets the first basis vector.
func bagOfWords(text string) []float32 {
	v := make([]float32, testDim)
	for _, w := range strings.Fields(strings.ToLower(text)) {
		w = strings.Trim(w, ".,;:!?\"'")
		if w == "" {
			continue
		}
		h := fnv.New32a()
		h.Write([]byte(w))
		v[h.Sum32()%testDim]++
	}
	zero := true
	for _, x := range v {
		zero = zero && x == 0
	}
	if zero {
		v[0] = 1
	}
	return v
}

// embedServer is an OpenAI-compatible /v1/embeddings endpoint on loopback
// that embeds with bagOfWords (or the function given to newEmbedServer),
// or fails with 503 while down is set.
type embedServer struct {
	*httptest.Server
	embed func(string) []float32
	down  atomic.Bool
	calls atomic.Int64
}

func newEmbedServer(t testing.TB, embed ...func(string) []float32) *embedServer {
	s := &embedServer{embed: bagOfWords}
	if len(embed) > 0 {
		s.embed = embed[0]
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *embedServer) serve(w http.ResponseWriter, r *http.Request) {
	s.calls.Add(1)
	if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
		http.NotFound(w, r)
		return
	}
	if s.down.Load() {
		http.Error(w, `{"error":{"message":"model is loading"}}`, http.StatusServiceUnavailable)
		return
	}
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	type datum struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var resp struct {
		Data []datum `json:"data"`
	}
	for i, in := range req.Input {
		resp.Data = append(resp.Data, datum{Index: i, Embedding: s.embed(in)})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

// url is the API root to give -embed-url.
func (s *embedServer) url() string { return s.URL + "/v1" }

// result is what one run of the command produced.
type result struct {
	code           int
	stdout, stderr string
}

// runCmd runs the command line args with stdin.
func runCmd(t testing.TB, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), args, strings.NewReader(stdin), &out, &errb)
	return result{code, out.String(), errb.String()}
}

// mustCount returns c.Count, failing the test on an error.
func mustCount(t testing.TB, c *cairn.Collection) int {
	t.Helper()
	n, err := c.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}
