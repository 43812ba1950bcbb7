// Package openai is a client for OpenAI-compatible /embeddings endpoints:
// OpenAI itself, Ollama (http://localhost:11434/v1), the llama.cpp server,
// vLLM and others. Its [Embedder] turns texts into vectors for a cairn
// store (it satisfies cairn.Embedder), or for any other use.
package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// DefaultBaseURL is OpenAI's API root, the default of [Embedder.BaseURL].
const DefaultBaseURL = "https://api.openai.com/v1"

// The defaults of [Embedder]'s other fields, documented there.
const (
	defaultBatchSize = 128
	defaultTimeout   = 60 * time.Second
	defaultRetries   = 4
	defaultBackoff   = 500 * time.Millisecond
	defaultMaxWait   = 30 * time.Second
)

// maxResponse bounds the body read from the server: 128 embeddings of
// 3,072 dimensions as JSON are about 8 MB.
const maxResponse = 256 << 20

// ErrBadResponse is returned by [Embedder.Embed] when the server answers
// 200 with a body that is not a valid embeddings response: unparsable
// JSON, a count of embeddings different from the count of inputs, missing
// or repeated indexes, empty or ragged vectors, or the wrong dimension.
var ErrBadResponse = errors.New("openai: bad embeddings response")

// APIError is returned by [Embedder.Embed] when the server answers with an
// HTTP error status and no retries are left (or the status is not worth
// retrying, such as 400 or 401).
//
// It is a plain value.
type APIError struct {
	StatusCode int    // the HTTP status
	Message    string // the server's error message, or the start of the body
}

// Error returns the status and the server's message.
func (e *APIError) Error() string {
	return fmt.Sprintf("openai: embeddings: HTTP %d: %s", e.StatusCode, e.Message)
}

// Embedder turns texts into embeddings through an OpenAI-compatible
// /embeddings endpoint. Texts are sent in batches of BatchSize; a request
// that fails with 429, a 5xx status, a network error or a per-attempt
// timeout is retried up to MaxRetries times with exponential back-off and
// jitter, waiting at least as long as the server's Retry-After header
// asks. The context bounds the whole call, waits included.
//
// Zero fields take the documented defaults. An Embedder is safe for
// concurrent use once its fields are no longer being changed.
type Embedder struct {
	// BaseURL is the API root; requests go to BaseURL + "/embeddings".
	// Default DefaultBaseURL.
	BaseURL string
	// Model is the embedding model name, such as "text-embedding-3-small"
	// or "nomic-embed-text". Required.
	Model string
	// APIKey, if set, is sent as a bearer token.
	APIKey string
	// Dimensions, if positive, is sent as the "dimensions" parameter
	// (for models that can shorten their output) and every returned vector
	// must have this length.
	Dimensions int
	// BatchSize is the most texts sent in one request. Default 128.
	BatchSize int
	// Timeout bounds each HTTP attempt. Default 60 s.
	Timeout time.Duration
	// MaxRetries is the number of retries after a failed attempt.
	// Default 4; negative means no retries.
	MaxRetries int
	// Backoff is the wait before the first retry; it doubles on each
	// further retry, up to MaxWait, and is jittered to between half and
	// all of that. Default 500 ms.
	Backoff time.Duration
	// MaxWait caps the back-off (not a server's Retry-After). Default 30 s.
	MaxWait time.Duration
	// Client sends the requests. Default http.DefaultClient.
	Client *http.Client
}

type embeddingsRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type embeddingsResponse struct {
	Data []struct {
		Index *int `json:"index"`
		// Embedding is read as it came: a null in it would decode as 0.
		Embedding json.RawMessage `json:"embedding"`
	} `json:"data"`
}

// Embed returns one embedding per text, in order. It makes one request per
// batch of BatchSize texts, one batch after another.
func (o *Embedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if o.Model == "" {
		return nil, errors.New("openai: embeddings: Embedder.Model is not set")
	}
	if len(texts) == 0 {
		return nil, nil
	}
	bs := o.BatchSize
	if bs <= 0 {
		bs = defaultBatchSize
	}
	out := make([][]float32, 0, len(texts))
	dim := max(o.Dimensions, 0) // only a positive Dimensions asks for a length
	for lo := 0; lo < len(texts); lo += bs {
		hi := min(lo+bs, len(texts))
		vs, err := o.embedBatch(ctx, texts[lo:hi])
		if err != nil {
			return nil, err
		}
		for _, v := range vs {
			if dim == 0 {
				dim = len(v)
			}
			if len(v) != dim {
				return nil, fmt.Errorf("%w: vector of length %d, want %d", ErrBadResponse, len(v), dim)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

// embedBatch sends one batch, retrying transient failures.
func (o *Embedder) embedBatch(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(embeddingsRequest{Model: o.Model, Input: texts, Dimensions: max(o.Dimensions, 0)})
	if err != nil {
		return nil, fmt.Errorf("openai: embeddings: %w", err)
	}
	retries := o.MaxRetries
	if retries == 0 {
		retries = defaultRetries
	}
	for attempt := 0; ; attempt++ {
		vs, retryAfter, err := o.attempt(ctx, body, len(texts))
		if err == nil {
			return vs, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("openai: embeddings: %w", context.Cause(ctx))
		}
		if retryAfter < 0 || attempt >= retries {
			return nil, err
		}
		wait := max(o.backoff(attempt), retryAfter)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("openai: embeddings: %w (after %v)", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// backoff returns the jittered wait before retry number attempt+1.
func (o *Embedder) backoff(attempt int) time.Duration {
	base, maxWait := o.Backoff, o.MaxWait
	if base <= 0 {
		base = defaultBackoff
	}
	if maxWait <= 0 {
		maxWait = defaultMaxWait
	}
	d := base
	for range attempt {
		d *= 2
		if d >= maxWait {
			d = maxWait
			break
		}
	}
	d = min(d, maxWait)
	half := d / 2
	return half + rand.N(d-half+1)
}

// attempt makes one request. retryAfter is negative when the error is not
// worth retrying, and otherwise the least wait the server asked for.
func (o *Embedder) attempt(ctx context.Context, body []byte, n int) (vs [][]float32, retryAfter time.Duration, err error) {
	timeout := o.Timeout
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	base := o.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	req, err := http.NewRequestWithContext(actx, http.MethodPost, strings.TrimRight(base, "/")+"/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, -1, fmt.Errorf("openai: embeddings: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	if o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+o.APIKey)
	}
	client := o.Client
	if client == nil {
		client = http.DefaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		// Network errors and per-attempt timeouts are transient.
		return nil, 0, fmt.Errorf("openai: embeddings: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return nil, 0, fmt.Errorf("openai: embeddings: reading response: %w", err)
	}
	if len(data) > maxResponse {
		return nil, -1, fmt.Errorf("%w: body larger than %d bytes", ErrBadResponse, maxResponse)
	}
	if resp.StatusCode != http.StatusOK {
		apiErr := &APIError{StatusCode: resp.StatusCode, Message: errorMessage(data)}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, parseRetryAfter(resp.Header), apiErr
		}
		return nil, -1, apiErr
	}
	vs, err = decodeEmbeddings(data, n)
	if err != nil {
		return nil, -1, err
	}
	return vs, 0, nil
}

// decodeEmbeddings parses a response body holding n embeddings, placing
// each at its "index".
func decodeEmbeddings(data []byte, n int) ([][]float32, error) {
	var r embeddingsResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadResponse, err)
	}
	if len(r.Data) != n {
		return nil, fmt.Errorf("%w: %d embeddings for %d inputs", ErrBadResponse, len(r.Data), n)
	}
	out := make([][]float32, n)
	for i, d := range r.Data {
		idx := i
		if d.Index != nil {
			idx = *d.Index
		}
		if idx < 0 || idx >= n || out[idx] != nil {
			return nil, fmt.Errorf("%w: bad or repeated index %d", ErrBadResponse, idx)
		}
		// No number holds the letters of null, so this finds every null.
		if bytes.Contains(d.Embedding, []byte("null")) {
			return nil, fmt.Errorf("%w: null in the embedding at index %d", ErrBadResponse, idx)
		}
		var v []float32
		if err := json.Unmarshal(d.Embedding, &v); err != nil {
			return nil, fmt.Errorf("%w: embedding at index %d: %v", ErrBadResponse, idx, err)
		}
		if len(v) == 0 {
			return nil, fmt.Errorf("%w: empty embedding at index %d", ErrBadResponse, idx)
		}
		out[idx] = v
	}
	return out, nil
}

// waitOf is x units as a wait: 0 for no positive number (NaN included),
// the longest Duration for more than it holds (the context bounds it).
func waitOf(x float64, unit time.Duration) time.Duration {
	switch {
	case !(x > 0):
		return 0
	case x >= float64(math.MaxInt64)/float64(unit):
		return math.MaxInt64
	}
	return time.Duration(x * float64(unit))
}

// errorMessage extracts {"error":{"message":...}} (or {"error":"..."}) from
// an error body, falling back to its first 200 bytes.
func errorMessage(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}

// parseRetryAfter reads retry-after-ms or Retry-After (seconds or an HTTP
// date); it returns 0 when there is neither.
func parseRetryAfter(h http.Header) time.Duration {
	if ms, err := strconv.ParseFloat(h.Get("Retry-After-Ms"), 64); err == nil && ms > 0 {
		return waitOf(ms, time.Millisecond)
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return waitOf(s, time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0)
	}
	return 0
}
