package openai_test

import (
	"context"
	"encoding/json"
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
	"github.com/cairndb/cairn/openai"
	"github.com/cairndb/cairn/vector"
)

// fakeEmbeddings answers like an OpenAI-compatible /embeddings endpoint:
// the embedding of a text is [len(text), index-in-batch, 1], returned in
// reverse order to check that clients sort by index.
func fakeEmbeddings(t *testing.T, w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		t.Errorf("bad request body: %v", err)
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	type datum struct {
		Object    string    `json:"object"`
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	var resp struct {
		Object string  `json:"object"`
		Data   []datum `json:"data"`
		Model  string  `json:"model"`
	}
	resp.Object, resp.Model = "list", req.Model
	for i := len(req.Input) - 1; i >= 0; i-- {
		resp.Data = append(resp.Data, datum{"embedding", i, []float32{float32(len(req.Input[i])), float32(i), 1}})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(resp)
}

func fastClient(url string) *openai.Embedder {
	return &openai.Embedder{BaseURL: url + "/v1", Model: "m", Backoff: time.Millisecond, MaxWait: 5 * time.Millisecond}
}

func TestEmbed(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			t.Errorf("request %s %s", r.Method, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer sk-test" {
			t.Errorf("Authorization = %q", got)
		}
		fakeEmbeddings(t, w, r)
	}))
	defer srv.Close()
	e := fastClient(srv.URL)
	e.APIKey, e.BatchSize = "sk-test", 2
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee"}
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if n := requests.Load(); n != 3 {
		t.Errorf("%d requests for 5 texts in batches of 2, want 3", n)
	}
	for i, v := range vs {
		if want := []float32{float32(i + 1), float32(i % 2), 1}; fmt.Sprint(v) != fmt.Sprint(want) {
			t.Errorf("embedding %d = %v, want %v", i, v, want)
		}
	}
	if vs, err := e.Embed(context.Background(), nil); vs != nil || err != nil || requests.Load() != 3 {
		t.Errorf("no texts: %v, %v (and %d requests)", vs, err, requests.Load())
	}
}

// An Embedder is a cairn.Embedder.
var _ cairn.Embedder = (*openai.Embedder)(nil)

// TestWithStore adds and queries by text through a cairn store.
func TestWithStore(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fakeEmbeddings(t, w, r) }))
	defer srv.Close()
	ctx := context.Background()
	db := cairn.OpenMemory(&cairn.Options{Embedder: fastClient(srv.URL)})
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: 3, Metric: vector.L2})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, cairn.Item{ID: "short", Text: "hi"}, cairn.Item{ID: "long", Text: "a much longer text"}); err != nil {
		t.Fatal(err)
	}
	res, err := c.QueryText(ctx, "hey", 1, nil)
	if err != nil || res[0].ID != "short" {
		t.Fatalf("QueryText = %v, %v", res, err)
	}
}

func TestRetries(t *testing.T) {
	ctx := context.Background()
	t.Run("429 then OK, honouring Retry-After", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After-Ms", "150")
				http.Error(w, `{"error":{"message":"slow down"}}`, http.StatusTooManyRequests)
				return
			}
			fakeEmbeddings(t, w, r)
		}))
		defer srv.Close()
		start := time.Now()
		vs, err := fastClient(srv.URL).Embed(ctx, []string{"x"})
		if err != nil || len(vs) != 1 {
			t.Fatalf("Embed = %v, %v", vs, err)
		}
		if d := time.Since(start); d < 150*time.Millisecond {
			t.Errorf("retried after %v, before the server's Retry-After of 150ms", d)
		}
		if n.Load() != 2 {
			t.Errorf("%d requests, want 2", n.Load())
		}
	})
	t.Run("Retry-After in seconds", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			fakeEmbeddings(t, w, r)
		}))
		defer srv.Close()
		start := time.Now()
		if _, err := fastClient(srv.URL).Embed(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < time.Second {
			t.Errorf("retried after %v, before Retry-After: 1", d)
		}
	})
	t.Run("Retry-After beyond a Duration, or NaN", func(t *testing.T) {
		for _, ra := range []string{"1e300", "NaN", "Inf"} {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if n.Add(1) == 1 {
					w.Header().Set("Retry-After", ra)
					w.WriteHeader(http.StatusServiceUnavailable)
					return
				}
				fakeEmbeddings(t, w, r)
			}))
			// A wait too long for a Duration is waited for until the
			// context ends; a NaN is no wait asked: retried at once.
			cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			_, err := fastClient(srv.URL).Embed(cctx, []string{"x"})
			cancel()
			srv.Close()
			switch {
			case ra == "NaN" && (err != nil || n.Load() != 2):
				t.Errorf("Retry-After %s: %v after %d requests, want success after 2", ra, err, n.Load())
			case ra != "NaN" && !errors.Is(err, context.DeadlineExceeded):
				t.Errorf("Retry-After %s: %v after %d requests, want the context's end", ra, err, n.Load())
			}
		}
	})
	t.Run("500s exhaust the retries", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Error(w, `{"error":{"message":"boom"}}`, http.StatusInternalServerError)
		}))
		defer srv.Close()
		e := fastClient(srv.URL)
		e.MaxRetries = 2
		_, err := e.Embed(ctx, []string{"x"})
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || apiErr.Message != "boom" {
			t.Fatalf("error %v, want an APIError 500 boom", err)
		}
		if n.Load() != 3 {
			t.Errorf("%d requests, want 1 + 2 retries", n.Load())
		}
		e.MaxRetries = -1
		n.Store(0)
		e.Embed(ctx, []string{"x"})
		if n.Load() != 1 {
			t.Errorf("MaxRetries -1: %d requests, want 1", n.Load())
		}
	})
	t.Run("400 is not retried", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n.Add(1)
			http.Error(w, `{"error":{"message":"unknown model m"}}`, http.StatusBadRequest)
		}))
		defer srv.Close()
		_, err := fastClient(srv.URL).Embed(ctx, []string{"x"})
		var apiErr *openai.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 400 || !strings.Contains(err.Error(), "unknown model m") {
			t.Fatalf("error %v", err)
		}
		if n.Load() != 1 {
			t.Errorf("%d requests, want 1", n.Load())
		}
	})
	t.Run("a slow attempt times out and is retried", func(t *testing.T) {
		var n atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if n.Add(1) == 1 {
				io.Copy(io.Discard, r.Body) // so the server notices the client leave
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
				return
			}
			fakeEmbeddings(t, w, r)
		}))
		defer srv.Close()
		e := fastClient(srv.URL)
		e.Timeout = 100 * time.Millisecond
		if _, err := e.Embed(ctx, []string{"x"}); err != nil {
			t.Fatal(err)
		}
		if n.Load() != 2 {
			t.Errorf("%d requests, want 2", n.Load())
		}
	})
}

func TestBadResponses(t *testing.T) {
	cases := map[string]string{
		"bad JSON":       `{"data": [`,
		"wrong count":    `{"data": [{"index": 0, "embedding": [1, 2]}]}`,
		"repeated index": `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 0, "embedding": [1, 2]}]}`,
		"index range":    `{"data": [{"index": 0, "embedding": [1, 2]}, {"index": 5, "embedding": [1, 2]}]}`,
		"empty vector":   `{"data": [{"index": 0, "embedding": []}, {"index": 1, "embedding": [1, 2]}]}`,
		"ragged":         `{"data": [{"index": 0, "embedding": [1]}, {"index": 1, "embedding": [1, 2]}]}`,
		"not a number":   `{"data": [{"index": 0, "embedding": ["a"]}, {"index": 1, "embedding": [1]}]}`,
		"null component": `{"data": [{"index": 0, "embedding": [0.5, null]}, {"index": 1, "embedding": [1, 2]}]}`,
		"null embedding": `{"data": [{"index": 0, "embedding": null}, {"index": 1, "embedding": [1, 2]}]}`,
	}
	for name, body := range cases {
		t.Run(name, func(t *testing.T) {
			var n atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n.Add(1)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			_, err := fastClient(srv.URL).Embed(context.Background(), []string{"x", "y"})
			if !errors.Is(err, openai.ErrBadResponse) {
				t.Fatalf("error %v, want ErrBadResponse", err)
			}
			if n.Load() != 1 {
				t.Errorf("%d requests, want 1 (not retried)", n.Load())
			}
		})
	}
	t.Run("wrong dimensions", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fakeEmbeddings(t, w, r) }))
		defer srv.Close()
		e := fastClient(srv.URL)
		e.Dimensions = 8
		if _, err := e.Embed(context.Background(), []string{"x"}); !errors.Is(err, openai.ErrBadResponse) {
			t.Fatalf("error %v, want ErrBadResponse", err)
		}
	})
	t.Run("no model", func(t *testing.T) {
		if _, err := (&openai.Embedder{}).Embed(context.Background(), []string{"x"}); err == nil {
			t.Fatal("no error without a model")
		}
	})
}

func TestContext(t *testing.T) {
	t.Run("cancelled during a request", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body) // so the server notices the client leave
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}))
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := fastClient(srv.URL).Embed(ctx, []string{"x"})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("error %v, want DeadlineExceeded", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned after %v", d)
		}
	})
	t.Run("cancelled while waiting to retry", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusTooManyRequests)
		}))
		defer srv.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(100*time.Millisecond, cancel)
		start := time.Now()
		_, err := fastClient(srv.URL).Embed(ctx, []string{"x"})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want Canceled", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("returned after %v, ignoring the cancellation", d)
		}
	})
}

// A Dimensions that is not positive asks for no length, as documented:
// -1 was sent as "dimensions": -1 and every vector refused as not of
// length -1.
func TestNegativeDimensions(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if strings.Contains(string(body), "dimensions") {
			t.Errorf("request sends dimensions: %s", body)
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
		fakeEmbeddings(t, w, r)
	}))
	defer srv.Close()
	e := fastClient(srv.URL)
	e.Dimensions = -1
	vs, err := e.Embed(context.Background(), []string{"a", "bb"})
	if err != nil || len(vs) != 2 || len(vs[0]) != 3 {
		t.Errorf("Embed with Dimensions -1: %v, %v", vs, err)
	}
}
