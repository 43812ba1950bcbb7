// This file holds the HTTP layer: requests spread over the cluster's
// nodes, each attempt with a timeout, retried with backoff on the errors
// a node going down or a cluster re-electing produces, within a bound.

package weaviate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// ErrUnavailable is returned when the cluster did not answer a call within
// its time bound and retries: every node unreachable, or every attempt
// failed with an error worth retrying (a node down, no quorum of replicas,
// a timeout). The error wraps the last attempt's error too.
var ErrUnavailable = errors.New("weaviate: cluster unavailable")

// APIError is an error answer from a node that retrying does not change:
// a 4xx status, or a per-object error of a batch that persisted through
// the retries.
type APIError struct {
	Status  int    // HTTP status; 200 for a per-object error of a batch
	Message string // what the server said
}

func (e *APIError) Error() string {
	return fmt.Sprintf("weaviate: HTTP %d: %s", e.Status, e.Message)
}

// debug, set by CAIRN_WEAVIATE_DEBUG=1, logs every failed attempt.
var debug = os.Getenv("CAIRN_WEAVIATE_DEBUG") == "1"

// client sends requests to the nodes in turn, skipping for a while a node
// that failed to answer.
type client struct {
	nodes   []string       // base URLs, "http://host:port"
	avoid   []atomic.Int64 // per node: unix nanoseconds until which it is skipped
	next    atomic.Uint64
	hc      *http.Client
	opt     Options
	retries atomic.Int64 // attempts after the first, for tests and reports
}

func newClient(addrs []string, o Options) (*client, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no node addresses", errInvalid)
	}
	c := &client{avoid: make([]atomic.Int64, len(addrs)), opt: o, hc: o.HTTPClient}
	for _, a := range addrs {
		a = strings.TrimRight(strings.TrimSpace(a), "/")
		if a == "" {
			return nil, fmt.Errorf("%w: empty node address", errInvalid)
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a
		}
		c.nodes = append(c.nodes, a)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: &http.Transport{
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
			DisableCompression:  true,
		}}
	}
	return c, nil
}

// pick returns the index of the next node to try: the next in turn that
// is not being avoided, or the next in turn if all are.
func (c *client) pick() int {
	n := len(c.nodes)
	start := int(c.next.Add(1) % uint64(n))
	now := time.Now().UnixNano()
	for i := range n {
		j := (start + i) % n
		if c.avoid[j].Load() <= now {
			return j
		}
	}
	return start
}

// retryable reports whether an HTTP status is worth another attempt
// (possibly on another node).
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// call sends method path with body (JSON, may be nil) and decodes a 2xx
// answer into out (if not nil). Attempts go to the nodes in turn, each
// bounded by Options.AttemptTimeout, and are retried with exponential
// backoff on network errors and 429/5xx answers, until
// Options.MaxAttempts or the call's time bound (Options.Timeout, or ctx's
// deadline if sooner). A 4xx answer is returned at once as an *APIError.
func (c *client) call(ctx context.Context, method, path string, body, out any) (int, error) {
	return c.callN(ctx, c.opt.MaxAttempts, method, path, body, out)
}

// callN is call with at most attempts attempts.
func (c *client) callN(ctx context.Context, attempts int, method, path string, body, out any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, fmt.Errorf("weaviate: encoding request: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	var last error
	for attempt := range attempts {
		if attempt > 0 {
			c.retries.Add(1)
			if err := sleep(ctx, backoff(attempt)); err != nil {
				break
			}
		}
		status, data, err := c.attempt(ctx, method, path, payload)
		if err == nil && status/100 == 2 {
			if out != nil && len(data) > 0 {
				if err := json.Unmarshal(data, out); err != nil {
					return status, fmt.Errorf("weaviate: %s %s: decoding answer: %w", method, path, err)
				}
			}
			return status, nil
		}
		if debug {
			log.Printf("weaviate: attempt %d %s %s: status %d, err %v, body %.300s", attempt, method, path, status, err, data)
		}
		if err == nil {
			msg := errorMessage(data)
			if !retryable(status) {
				return status, &APIError{Status: status, Message: msg}
			}
			err = &APIError{Status: status, Message: msg}
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	if err := ctx.Err(); err != nil && errors.Is(err, context.Canceled) {
		return 0, fmt.Errorf("weaviate: %s %s: %w", method, path, err)
	}
	return 0, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, method, path, last)
}

// attempt sends one request to one node.
func (c *client) attempt(ctx context.Context, method, path string, payload []byte) (int, []byte, error) {
	node := c.pick()
	actx, cancel := context.WithTimeout(ctx, c.opt.AttemptTimeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(actx, method, c.nodes[node]+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		// Unreachable or too slow: skip this node for a while.
		c.avoid[node].Store(time.Now().Add(c.opt.AvoidFor).UnixNano())
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return 0, nil, err
	}
	return resp.StatusCode, data, nil
}

// backoff is the pause before attempt n (n ≥ 1): 100 ms doubling to a 2 s
// cap, with ±25 % jitter so that clients do not retry in step.
func backoff(n int) time.Duration {
	d := 100 * time.Millisecond << min(n-1, 5)
	d = min(d, 2*time.Second)
	return time.Duration(float64(d) * (0.75 + rand.Float64()/2))
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// errorMessage extracts the message of Weaviate's error answers,
// {"error":[{"message":...}]}, or returns the body as it is.
func errorMessage(data []byte) string {
	var e struct {
		Error []struct {
			Message string `json:"message"`
		} `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &e) == nil {
		var msgs []string
		for _, m := range e.Error {
			msgs = append(msgs, m.Message)
		}
		if e.Message != "" {
			msgs = append(msgs, e.Message)
		}
		if len(msgs) > 0 {
			return strings.Join(msgs, "; ")
		}
	}
	s := strings.TrimSpace(string(data))
	if len(s) > 500 {
		s = s[:500] + "…"
	}
	return s
}

// graphQL runs a GraphQL query and decodes its data into out. Errors in
// the answer are returned as an *APIError, or retried (within the call's
// bounds) when they say a replica or shard could not be reached.
func (c *client) graphQL(ctx context.Context, query string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	var last error
	for round := range c.opt.MaxAttempts {
		if round > 0 {
			if err := sleep(ctx, backoff(round)); err != nil {
				return fmt.Errorf("%w: graphql: %w", ErrUnavailable, last)
			}
		}
		var resp struct {
			Data   json.RawMessage `json:"data"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		if _, err := c.call(ctx, http.MethodPost, "/v1/graphql", map[string]string{"query": query}, &resp); err != nil {
			var ae *APIError
			if errors.As(err, &ae) && !errors.Is(err, ErrUnavailable) && transient(ae.Message) {
				// Such as 422 "no graphql provider present" while a node
				// rebuilds its GraphQL schema after a class change.
				last = err
				c.retries.Add(1)
				continue
			}
			return err
		}
		if len(resp.Errors) == 0 {
			if err := json.Unmarshal(resp.Data, out); err != nil {
				return fmt.Errorf("weaviate: graphql: decoding answer: %w", err)
			}
			return nil
		}
		var msgs []string
		for _, e := range resp.Errors {
			msgs = append(msgs, e.Message)
		}
		msg := strings.Join(msgs, "; ")
		last = &APIError{Status: http.StatusOK, Message: msg}
		if !transient(msg) {
			return last
		}
		c.retries.Add(1)
	}
	return fmt.Errorf("%w: graphql: %w", ErrUnavailable, last)
}

// transient reports whether a server message describes a passing state of
// the cluster (a node down or just back, a shard not ready, a replica out
// of reach, schema not yet propagated) rather than a bad request.
func transient(msg string) bool {
	m := strings.ToLower(msg)
	if strings.Contains(m, "inconsistent consistency levels") {
		return false // not passing while the node is down; see runGet
	}
	for _, s := range []string{
		"replica", "connection refused", "connection reset", "broken pipe", "eof",
		"timeout", "deadline", "unavailable", "not ready", "shard", "leader",
		"no such host", "i/o", "broadcast", "context canceled", "connection is closing",
		"no such prop", "read-only", "readonly", "non-existing index", "no graphql provider",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}
