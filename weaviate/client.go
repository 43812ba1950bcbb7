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
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn/vector"
	"google.golang.org/grpc/codes"
)

// ErrUnavailable is returned when the cluster did not answer a call within
// its time bound and retries: every node unreachable, or every attempt
// failed with an error worth retrying (a node down, no quorum of replicas,
// a timeout), or a write of this DB held the ids of another write past
// that one's bound. The error wraps the last attempt's error too.
var ErrUnavailable = errors.New("weaviate: cluster unavailable")

// ErrNotWeaviate is wrapped by the error of a call whose answer is not in
// the form Weaviate gives (JSON it cannot decode): the address is not a
// Weaviate node's. Open's error then wraps vector.ErrInvalidOptions too.
var ErrNotWeaviate = errors.New("weaviate: the answer is not Weaviate's")

// ErrBeyondReach is returned by an [Index]'s Search with a Go filter when
// fewer than k of the Options.MaxResults nearest vectors (as far as the
// cluster lets a search reach) pass the filter and more lie beyond: the
// answer would be short of what the filter allows.
var ErrBeyondReach = errors.New("weaviate: the filter's results lie beyond the cluster's reach")

// APIError is an error answer from a node that retrying does not change:
// a 4xx status, a gRPC status such as InvalidArgument, or a per-object
// error of a batch that persisted through the retries.
//
// It is a plain value, owned by the caller.
type APIError struct {
	Status  int        // HTTP status; 200 for a per-object error of a batch; 0 for a gRPC status
	Code    codes.Code // the gRPC status code of a gRPC answer; codes.OK otherwise
	Message string     // what the server said
}

func (e *APIError) Error() string {
	if e.Status == 0 && e.Code != codes.OK {
		return fmt.Sprintf("weaviate: gRPC %s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("weaviate: HTTP %d: %s", e.Status, e.Message)
}

// debug, set by CAIRN_WEAVIATE_DEBUG=1, logs every failed attempt.
var debug = os.Getenv("CAIRN_WEAVIATE_DEBUG") == "1"

// client sends requests to the nodes in turn, skipping for a while a node
// that failed to answer.
type client struct {
	nodes   []string // base URLs, "http://host:port"
	ring    *ring
	hc      *http.Client
	opt     Options
	retries atomic.Int64 // attempts after the first, for tests and reports
	seen    classSeen    // which nodes have which classes' indexes open (behind.go)
	closed  atomic.Bool  // the DB is closed: a call in flight fails with ErrClosed
}

func newClient(addrs []string, o Options) (*client, error) {
	if len(addrs) == 0 {
		return nil, fmt.Errorf("%w: no node addresses", errInvalid)
	}
	c := &client{ring: newRing(len(addrs), o.AvoidFor), opt: o, hc: o.HTTPClient}
	for _, a := range addrs {
		a = strings.TrimRight(strings.TrimSpace(a), "/")
		if a == "" {
			return nil, fmt.Errorf("%w: empty node address", errInvalid)
		}
		if !strings.Contains(a, "://") {
			a = "http://" + a
		}
		if u, err := url.Parse(a); err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Hostname() == "" || !validPort(u.Port()) {
			return nil, fmt.Errorf("%w: node address %q: want host:port or an http(s) URL", errInvalid, a)
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

// validPort reports whether p is a URL's port: none, or a number from 1
// to 65535.
func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

// ring hands out the nodes of one transport in turn, skipping for a while
// a node that failed to answer.
type ring struct {
	avoid    []atomic.Int64 // per node: unix nanoseconds until which it is skipped
	next     atomic.Uint64
	avoidFor time.Duration
}

func newRing(n int, avoidFor time.Duration) *ring {
	return &ring{avoid: make([]atomic.Int64, n), avoidFor: avoidFor}
}

// pick returns the index of the next node to try: the next in turn that
// is not being avoided, or the next in turn if all are.
func (r *ring) pick() int {
	n := len(r.avoid)
	start := int(r.next.Add(1) % uint64(n))
	now := time.Now().UnixNano()
	for i := range n {
		j := (start + i) % n
		if r.avoid[j].Load() <= now {
			return j
		}
	}
	return start
}

// shun skips node i for a while: it did not answer, or too slowly.
func (r *ring) shun(i int) {
	r.avoid[i].Store(time.Now().Add(r.avoidFor).UnixNano())
}

// retryable reports whether an HTTP status is worth another attempt
// (possibly on another node).
func retryable(status int) bool {
	return status == http.StatusTooManyRequests || status >= 500
}

// do is the retry rule of every request, over HTTP or gRPC: attempt runs
// on the nodes of r in turn, each run bounded by Options.AttemptTimeout,
// and is repeated with exponential backoff while it reports an error worth
// retrying, up to attempts times within the call's time bound
// (Options.Timeout, or ctx's deadline if sooner). An error not worth
// retrying is returned as it is; running out of attempts or time gives an
// error wrapping ErrUnavailable and the last attempt's error.
func (c *client) do(ctx context.Context, r *ring, attempts int, what string, attempt func(ctx context.Context, node int) (retry bool, err error)) error {
	ctx, cancel := context.WithTimeout(ctx, c.opt.Timeout)
	defer cancel()
	// absent is the last error of an attempt that found the class absent
	// from the leader's schema (classBehind): the call's error says so
	// even if a later attempt ended otherwise, as at the call's bound.
	var last, absent error
	for i := range attempts {
		if i > 0 {
			c.retries.Add(1)
			if err := sleep(ctx, backoff(i)); err != nil {
				break
			}
		}
		node := r.pick()
		actx, acancel := context.WithTimeout(ctx, c.opt.AttemptTimeout)
		retry, err := attempt(actx, node)
		acancel()
		if err == nil {
			return nil
		}
		if c.closed.Load() { // its connections closed under it
			return fmt.Errorf("weaviate: %s: %w", what, vector.ErrClosed)
		}
		if debug {
			log.Printf("weaviate: attempt %d %s on node %d: %v", i, what, node, err)
		}
		if !retry {
			return err
		}
		last = err
		if errors.Is(err, vector.ErrNotFound) {
			absent = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	if err := ctx.Err(); err != nil && (errors.Is(err, context.Canceled) || last == nil) {
		return fmt.Errorf("weaviate: %s: %w", what, err)
	}
	if absent != nil && !errors.Is(last, vector.ErrNotFound) {
		return fmt.Errorf("%w: %s: %w (before that: %w)", ErrUnavailable, what, last, absent)
	}
	return fmt.Errorf("%w: %s: %w", ErrUnavailable, what, last)
}

// call sends method path with body (JSON, may be nil) and decodes a 2xx
// answer into out (if not nil), by the rule of do, on network errors and
// 429/5xx answers. A 4xx answer is returned at once as an *APIError.
func (c *client) call(ctx context.Context, method, path string, body, out any) (int, error) {
	return c.callN(ctx, c.opt.MaxAttempts, method, path, body, out)
}

// callN is call with at most attempts attempts.
func (c *client) callN(ctx context.Context, attempts int, method, path string, body, out any) (int, error) {
	return c.request(ctx, attempts, target{}, method, path, body, out)
}

// objectCall is callN for a request about one object of class cls, whose
// 404 answer counts only by the rule of client.notFound (behind.go).
func (c *client) objectCall(ctx context.Context, attempts int, cls, method, path string, out any) (int, error) {
	return c.request(ctx, attempts, target{cls: cls}, method, path, nil, out)
}

// classCall is call for a read of class cls's definition from the leader's
// schema, whose 404 answer counts only by the rule of client.leaderLacks
// (behind.go): it then returns an error wrapping vector.ErrNotFound.
func (c *client) classCall(ctx context.Context, cls, path string, out any) error {
	_, err := c.request(ctx, c.opt.MaxAttempts, target{cls: cls, class: true}, http.MethodGet, path, nil, out)
	return err
}

// target is what a request is about, which decides what its 404 answer
// means.
type target struct {
	cls   string // the class the request is about; empty: a 404 is an *APIError
	class bool   // about the class itself (leaderLacks), not an object of it (notFound)
}

// request is callN, objectCall or classCall, as about says.
func (c *client) request(ctx context.Context, attempts int, about target, method, path string, body, out any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, fmt.Errorf("weaviate: encoding request: %w", err)
		}
	}
	status := 0
	err := c.do(ctx, c.ring, attempts, method+" "+path, func(ctx context.Context, node int) (bool, error) {
		sent := time.Now()
		st, data, err := c.attempt(ctx, node, method, path, payload)
		if err != nil {
			return true, err
		}
		if st == http.StatusNotFound && about.class {
			return c.leaderLacks(ctx, about.cls)
		}
		if st == http.StatusNotFound && about.cls != "" {
			again, retry, err := c.notFound(ctx, node, about.cls, sent)
			if err != nil {
				return retry, err
			}
			if again {
				if st, data, err = c.attempt(ctx, node, method, path, payload); err != nil {
					return true, err
				}
			}
		}
		if st/100 != 2 {
			status = st
			msg := errorMessage(data)
			return retryable(st) && !mixedLevels(msg), &APIError{Status: st, Message: msg}
		}
		status = st
		if out != nil && len(data) > 0 {
			if err := json.Unmarshal(data, out); err != nil {
				return false, fmt.Errorf("weaviate: %s %s: %w: %w", method, path, ErrNotWeaviate, err)
			}
		}
		return false, nil
	})
	var ae *APIError
	if err != nil && !(errors.As(err, &ae) && !errors.Is(err, ErrUnavailable)) {
		status = 0
	}
	return status, err
}

// attempt sends one request to node, skipping the node for a while if it
// does not answer (in time): not if ctx was canceled, which says nothing
// of the node.
func (c *client) attempt(ctx context.Context, node int, method, path string, payload []byte) (int, []byte, error) {
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.nodes[node]+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if !errors.Is(ctx.Err(), context.Canceled) {
			c.ring.shun(node)
		}
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

// graphQL runs a GraphQL query about class cls and decodes its data into
// out, by the rule of do. Errors in the answer are returned as an
// *APIError, or retried when they describe a passing state of the cluster
// (transient); a node's word that its schema has no cls is classBehind's.
func (c *client) graphQL(ctx context.Context, cls, query string, out any) error {
	payload, err := json.Marshal(map[string]string{"query": query})
	if err != nil {
		return fmt.Errorf("weaviate: encoding request: %w", err)
	}
	return c.do(ctx, c.ring, c.opt.MaxAttempts, "graphql", func(ctx context.Context, node int) (bool, error) {
		st, data, err := c.attempt(ctx, node, http.MethodPost, "/v1/graphql", payload)
		if err != nil {
			return true, err
		}
		if st/100 != 2 {
			// A 4xx is retried when it says a passing state, such as 422
			// "no graphql provider present" while a node rebuilds its
			// GraphQL schema after a class change.
			msg := errorMessage(data)
			if strings.Contains(msg, noGraphQLProvider) { // the node's schema has no class at all
				return c.classBehind(ctx, cls, &APIError{Status: st, Message: msg})
			}
			return retryable(st) || transient(msg), &APIError{Status: st, Message: msg}
		}
		var resp struct {
			Data   json.RawMessage `json:"data"`
			Errors []struct {
				Message string `json:"message"`
			} `json:"errors"`
		}
		if err := json.Unmarshal(data, &resp); err != nil {
			return false, fmt.Errorf("weaviate: graphql: %w: %w", ErrNotWeaviate, err)
		}
		if len(resp.Errors) == 0 {
			if err := json.Unmarshal(resp.Data, out); err != nil {
				return false, fmt.Errorf("weaviate: graphql: %w: %w", ErrNotWeaviate, err)
			}
			return false, nil
		}
		var msgs []string
		for _, e := range resp.Errors {
			msgs = append(msgs, e.Message)
		}
		msg := strings.Join(msgs, "; ")
		if unknownClass(msg, cls) {
			return c.classBehind(ctx, cls, &APIError{Status: http.StatusOK, Message: msg})
		}
		return transient(msg), &APIError{Status: http.StatusOK, Message: msg}
	})
}

// mixedLevels reports whether a server message is Weaviate's refusal of a
// request over shards whose consistency level resolved to different
// numbers of replicas (a node down): not passing while the node is down,
// so the caller goes on another way (see DB.read and DB.deleteEach).
func mixedLevels(msg string) bool {
	return strings.Contains(msg, "inconsistent consistency levels")
}

// transient reports whether a server message describes a passing state of
// the cluster (a node down or just back, a shard not ready, a replica out
// of reach, schema not yet propagated) rather than a bad request.
func transient(msg string) bool {
	if mixedLevels(msg) {
		return false
	}
	m := strings.ToLower(quotedName.ReplaceAllString(msg, `""`))
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

// quotedName matches a name quoted in a server message: a class,
// property or tenant name, an id. Names are the caller's, so a word in
// one ("Replicas", "ShardNotes") says nothing of the cluster's state;
// transient drops them before it looks for its words. A quoted phrase
// (an address, a wrapped error) has other characters and stays.
var quotedName = regexp.MustCompile("[\"'`][A-Za-z0-9_-]+[\"'`]")
