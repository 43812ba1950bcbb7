// This file holds the gRPC layer: one connection per node, messages
// passed as the bytes wire.go encodes, and the status codes of failed
// calls sorted into those worth another attempt and those not, under the
// retry rule of client.do.

package weaviate

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	gbackoff "google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
)

// rawCodec passes messages through as bytes: requests are encoded, and
// replies decoded, by wire.go. Its name is the proto codec's, so servers
// see the content type of any protobuf client.
type rawCodec struct{}

func (rawCodec) Name() string { return "proto" }

func (rawCodec) Marshal(v any) ([]byte, error) {
	b, ok := v.([]byte)
	if !ok {
		return nil, fmt.Errorf("weaviate: raw codec: marshal %T", v)
	}
	return b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	p, ok := v.(*[]byte)
	if !ok {
		return fmt.Errorf("weaviate: raw codec: unmarshal into %T", v)
	}
	*p = append([]byte(nil), data...) // grpc reuses data's buffer
	return nil
}

// maxReply bounds a reply's size, as the HTTP layer bounds a body.
const maxReply = 1 << 30

// rpc sends gRPC calls to the nodes in turn, skipping for a while a node
// that failed to answer.
type rpc struct {
	cl    *client
	addrs []string
	conns []*grpc.ClientConn
	ring  *ring
}

// grpcAddrs returns the gRPC addresses of o: o.GRPCAddrs, or the host of
// each HTTP address at o.GRPCPort.
func grpcAddrs(httpAddrs []string, o Options) ([]string, error) {
	if len(o.GRPCAddrs) > 0 {
		out := make([]string, len(o.GRPCAddrs))
		for i, a := range o.GRPCAddrs {
			a = strings.TrimSpace(a)
			if _, _, err := net.SplitHostPort(a); err != nil {
				return nil, fmt.Errorf("%w: gRPC address %q: want host:port", errInvalid, a)
			}
			out[i] = a
		}
		return out, nil
	}
	out := make([]string, len(httpAddrs))
	for i, a := range httpAddrs {
		a = strings.TrimSpace(a)
		if j := strings.Index(a, "://"); j >= 0 {
			a = a[j+3:]
		}
		a, _, _ = strings.Cut(a, "/")
		host := a
		if h, _, err := net.SplitHostPort(a); err == nil {
			host = h
		}
		if host == "" {
			return nil, fmt.Errorf("%w: no host in address %q", errInvalid, httpAddrs[i])
		}
		out[i] = net.JoinHostPort(host, strconv.Itoa(o.GRPCPort))
	}
	return out, nil
}

// newRPC makes the connections to addrs; they connect on first use.
// They are secured with o.GRPCTLS if set, or with a default TLS
// configuration if secure (the HTTP addresses are https).
func newRPC(cl *client, addrs []string, o Options, secure bool) (*rpc, error) {
	creds := insecure.NewCredentials()
	if o.GRPCTLS != nil {
		creds = credentials.NewTLS(o.GRPCTLS)
	} else if secure {
		creds = credentials.NewTLS(&tls.Config{})
	}
	r := &rpc{cl: cl, addrs: addrs, ring: newRing(len(addrs), o.AvoidFor)}
	for _, a := range addrs {
		conn, err := grpc.NewClient("passthrough:///"+a,
			grpc.WithTransportCredentials(creds),
			grpc.WithDefaultCallOptions(grpc.ForceCodec(rawCodec{}), grpc.MaxCallRecvMsgSize(maxReply)),
			// Try a node that went down again within about AvoidFor,
			// rather than gRPC's default of up to two minutes.
			grpc.WithConnectParams(grpc.ConnectParams{
				Backoff:           gbackoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: max(o.AvoidFor, 100*time.Millisecond)},
				MinConnectTimeout: o.AttemptTimeout,
			}),
		)
		if err != nil {
			r.close()
			return nil, fmt.Errorf("%w: gRPC address %q: %v", errInvalid, a, err)
		}
		r.conns = append(r.conns, conn)
	}
	return r, nil
}

func (r *rpc) close() {
	for _, c := range r.conns {
		c.Close()
	}
}

// invoke calls method with the encoded request req and returns the
// encoded reply, by the rule of client.do: a node that cannot be reached
// or does not answer in time is skipped for a while and the call tried on
// the next (codes Unavailable, DeadlineExceeded); a status that says the
// server is busy or failed inside (ResourceExhausted, Aborted, Internal,
// Canceled by the server) is retried too, as are Weaviate's untyped
// errors (Unknown) that describe a passing state of the cluster, and a
// node's word that it does not know a class the cluster has
// (classBehind); any other status is an *APIError at once.
func (r *rpc) invoke(ctx context.Context, attempts int, method string, req []byte) ([]byte, error) {
	var reply []byte
	err := r.cl.do(ctx, r.ring, attempts, "gRPC "+method[strings.LastIndexByte(method, '/')+1:], func(ctx context.Context, node int) (bool, error) {
		var out []byte
		err := r.conns[node].Invoke(ctx, method, req, &out)
		if err == nil {
			reply = out
			return false, nil
		}
		st := status.Convert(err)
		switch st.Code() {
		case codes.Unavailable, codes.DeadlineExceeded:
			r.ring.shun(node)
			if cerr := deadlineErr(ctx); cerr != nil { // the call's time ran out, as REST's error says
				return true, fmt.Errorf("%s: %w: %w", r.addrs[node], err, cerr)
			}
			return true, fmt.Errorf("%s: %w", r.addrs[node], err)
		case codes.ResourceExhausted, codes.Aborted, codes.Internal, codes.Canceled:
			return true, &APIError{Code: st.Code(), Message: st.Message()}
		case codes.Unknown:
			ae := &APIError{Code: st.Code(), Message: st.Message()}
			if m := classUnknown.FindStringSubmatch(st.Message()); m != nil {
				return r.cl.classBehind(ctx, m[1], ae)
			}
			return transient(st.Message()), ae
		}
		return false, &APIError{Code: st.Code(), Message: st.Message()}
	})
	return reply, err
}

// deadlineErr is ctx.Err(), or context.DeadlineExceeded once ctx's
// deadline has passed: a server's DeadlineExceeded, sent at the deadline
// the call carried, can arrive before ctx's own timer has fired.
func deadlineErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if d, ok := ctx.Deadline(); ok && !time.Now().Before(d) {
		return context.DeadlineExceeded
	}
	return nil
}

// health checks that a node answers gRPC's health check as serving.
func (r *rpc) health(ctx context.Context) error {
	ans, err := r.invoke(ctx, r.cl.opt.MaxAttempts, methodHealth, []byte{})
	if err != nil {
		return err
	}
	st, err := decodeHealth(ans)
	if err != nil {
		return err
	}
	if st != 1 {
		return fmt.Errorf("%w: gRPC health status %d, want SERVING", ErrUnavailable, st)
	}
	return nil
}

// search runs q at level over gRPC.
func (r *rpc) search(ctx context.Context, q *query, level Consistency) ([]fetched, error) {
	ans, err := r.invoke(ctx, r.cl.opt.MaxAttempts, methodSearch, encodeSearch(q, level))
	if err != nil {
		return nil, err
	}
	rows, err := decodeSearch(ans)
	if err != nil {
		return nil, fmt.Errorf("weaviate: gRPC search: %w", err)
	}
	return rows, nil
}

// batch writes chunk at level over gRPC and returns the per-object errors
// by UUID.
func (r *rpc) batch(ctx context.Context, chunk []object, level Consistency) (map[string]string, error) {
	req, err := encodeBatch(chunk, level)
	if err != nil {
		return nil, fmt.Errorf("weaviate: gRPC batch: %w", err)
	}
	ans, err := r.invoke(ctx, r.cl.opt.MaxAttempts, methodBatch, req)
	if err != nil {
		return nil, err
	}
	byIndex, err := decodeBatch(ans, len(chunk))
	if err != nil {
		return nil, fmt.Errorf("weaviate: gRPC batch: %w", err)
	}
	bad := make(map[string]string, len(byIndex))
	for i, msg := range byIndex {
		bad[chunk[i].ID] = msg
	}
	return bad, nil
}
