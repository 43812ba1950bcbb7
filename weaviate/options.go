// This file holds the options of a connection to a cluster: consistency
// levels, sharding and replication of new collections, and the time bounds
// and retries of every call.

package weaviate

import (
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// Consistency is how many replicas of a shard must answer a read or
// acknowledge a write: Weaviate's ONE, QUORUM or ALL.
//
// It is a plain value.
type Consistency string

// The consistency levels. With replication factor 2, QUORUM and ALL both
// mean both replicas while both are up; once the cluster has marked a node
// dead they count only the live replicas.
const (
	One    Consistency = "ONE"
	Quorum Consistency = "QUORUM"
	All    Consistency = "ALL"
)

// Transport is how a [DB] sends searches and batch writes: over gRPC or
// over REST and GraphQL. Everything else (schema, deletes, reads by id,
// Find, counts, the nodes' state) goes over REST either way.
//
// It is a plain value.
type Transport string

// The transports.
const (
	GRPC Transport = "grpc"
	REST Transport = "rest"
)

// Options configure a connection ([Open], [DB.NewIndex]). A nil *Options
// means the zero Options; zero fields take the defaults given.
//
// Open keeps a copy; HTTPClient, GRPCAddrs and GRPCTLS are shared with
// it, so do not change them while the DB is in use.
type Options struct {
	// Embedder turns text into embeddings, as cairn.Options.Embedder does.
	Embedder cairn.Embedder
	// WriteConsistency is the level of every write. Default Quorum.
	WriteConsistency Consistency
	// ReadConsistency is the level of Get, Find and the objects a query
	// returns. Default Quorum, so that a read after an acknowledged write
	// sees it even when one replica missed it (a read at Quorum repairs
	// that replica). One is faster and may return stale or missing items
	// for a while after a node rejoins.
	ReadConsistency Consistency
	// Shards is the number of shards of a new collection. Default the
	// number of addresses given to Open.
	Shards int
	// Replication is the replication factor of a new collection. Default 2,
	// or 1 for a single address.
	Replication int
	// Timeout bounds each call, retries included (a ctx deadline that
	// comes sooner wins). Default 30 s.
	Timeout time.Duration
	// AttemptTimeout bounds one request to one node. Default 10 s. While
	// the cluster elects a new Raft leader, live nodes hold requests that
	// need one for this long: it bounds how long writes stall after the
	// leader fails, beside the election itself (RELIABILITY.md).
	AttemptTimeout time.Duration
	// MaxAttempts is how many times a request is sent before the call
	// fails with ErrUnavailable; also how many rounds a batch retries the
	// objects that failed. Default 20, with backoff from 100 ms doubling to
	// 2 s: enough to outlast the seconds a cluster takes to mark a killed
	// node dead (writes at QUORUM fail until it has), within Timeout.
	MaxAttempts int
	// AvoidFor is how long a node that did not answer is skipped while
	// others are available. Default 2 s.
	AvoidFor time.Duration
	// MaxResults is the cluster's QUERY_MAXIMUM_RESULTS: how far a search
	// or Find can reach. Default 10000, Weaviate's default.
	MaxResults int
	// HTTPClient sends the requests. Default a client of its own.
	HTTPClient *http.Client
	// Transport carries searches (Query, an Index's Search, the lookups
	// of large batches) and batch writes (Add, Upsert, AddBatch).
	// Default GRPC, the faster (BENCHMARKS.md); REST needs no port
	// beyond the HTTP one.
	Transport Transport
	// GRPCAddrs are the nodes' gRPC addresses, "host:port", in any
	// number. Default the host of each address given to Open, at
	// GRPCPort.
	GRPCAddrs []string
	// GRPCPort is the nodes' gRPC port where GRPCAddrs is not given.
	// Default 50051, Weaviate's (its GRPC_PORT).
	GRPCPort int
	// GRPCTLS, if set, secures the gRPC connections. Default none, or a
	// default tls.Config if the addresses given to Open are https URLs.
	GRPCTLS *tls.Config
}

func (o *Options) withDefaults(nodes int) (Options, error) {
	var out Options
	if o != nil {
		out = *o
	}
	if out.WriteConsistency == "" {
		out.WriteConsistency = Quorum
	}
	if out.ReadConsistency == "" {
		out.ReadConsistency = Quorum
	}
	if out.Shards == 0 {
		out.Shards = nodes
	}
	if out.Replication == 0 {
		out.Replication = min(2, nodes)
	}
	if out.Timeout == 0 {
		out.Timeout = 30 * time.Second
	}
	if out.AttemptTimeout == 0 {
		out.AttemptTimeout = 10 * time.Second
	}
	if out.MaxAttempts == 0 {
		out.MaxAttempts = 20
	}
	if out.MaxResults == 0 {
		out.MaxResults = 10000
	}
	if out.AvoidFor == 0 {
		out.AvoidFor = 2 * time.Second
	}
	if out.Transport == "" {
		out.Transport = GRPC
	}
	if out.GRPCPort == 0 {
		out.GRPCPort = 50051
	}
	if out.Transport != GRPC && out.Transport != REST {
		return out, fmt.Errorf("%w: transport %q, want grpc or rest", vector.ErrInvalidOptions, out.Transport)
	}
	if out.GRPCPort < 1 || out.GRPCPort > 65535 {
		return out, fmt.Errorf("%w: GRPCPort %d", vector.ErrInvalidOptions, out.GRPCPort)
	}
	for _, c := range []Consistency{out.WriteConsistency, out.ReadConsistency} {
		if c != One && c != Quorum && c != All {
			return out, fmt.Errorf("%w: consistency %q, want ONE, QUORUM or ALL", vector.ErrInvalidOptions, c)
		}
	}
	if out.Shards < 1 || out.Replication < 1 || out.Timeout < 0 || out.AttemptTimeout < 0 || out.MaxAttempts < 1 || out.MaxResults < 1 || out.AvoidFor < 0 {
		return out, fmt.Errorf("%w: Shards, Replication and MaxAttempts must be positive, durations not negative", vector.ErrInvalidOptions)
	}
	return out, nil
}

var errInvalid = vector.ErrInvalidOptions
