// Package weaviate serves cairn's memory-store API, and a vector.Index,
// from a Weaviate cluster (tested with v1.39.0), so that an application
// whose memory outgrows one machine keeps its code: it opens a [DB] with
// [Open] instead of a local cairn.DB wrapped by cairn.Local, and goes on
// calling the [cairn.MemoryStore] and [cairn.MemoryCollection] interfaces.
//
//	store, err := weaviate.Open(ctx, []string{"10.0.0.1:8080", "10.0.0.2:8080", "10.0.0.3:8080"}, nil)
//	notes, err := store.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 768})
//	err = notes.Add(ctx, cairn.Item{ID: "n1", Embedding: v, Metadata: map[string]any{"topic": "go"}})
//	hits, err := notes.Query(ctx, q, 5, &cairn.QueryOptions{Filter: cairn.Eq("topic", "go")})
//
// Searches (Query, an Index's Search, the lookups behind large batches)
// and batch writes (Add, Upsert, AddBatch) go over Weaviate's gRPC API;
// the rest (schema, deletes, reads by id, Find, counts, the nodes' state)
// over REST and GraphQL, where gRPC buys nothing. [Options].Transport
// REST sends everything over REST. The gRPC addresses are
// Options.GRPCAddrs, or each node's host at Options.GRPCPort (default
// 50051, Weaviate's): give them when nodes share a host, as the test
// cluster's do (cluster.sh grpc-addrs).
//
// gRPC is the faster path: on the test cluster (3 nodes, 3 shards × 2,
// 10,000 × 768-d, the same 1,000 queries sent by each path in turn on a
// busy 2-core machine) a search took p50 8.7 ms over gRPC against 12.5 ms
// over GraphQL under HNSW (0.70×) and 9.9 ms against 13.2 ms under flat
// (0.75×), p95 0.66× and 0.65×; batches of 1,000 were written 1.6× (HNSW)
// and 4× (flat) as fast (BENCHMARKS.md). Part of each search's time is the
// REST check that it reached every shard, which both paths pay; a gRPC
// batch waits for a lookup of its class through the Raft leader, since
// without a leader Weaviate v1.39 goes on with a gRPC batch after its
// caller gave up, and writes it once a leader is back. It costs weight:
// the module graph (go list -m all) grows from 27 modules to 61, a program
// that opens a DB links five more modules (google.golang.org/grpc,
// protobuf, genproto's rpc status, x/net, x/text) and grows from 15.7 MB
// to 24.7 MB (10.6 to 16.8 MB stripped). The messages are encoded by hand
// with protowire (wire.go), only the fields used, under Weaviate's field
// numbers; no generated code. The official client,
// github.com/weaviate/weaviate-go-client/v5 v5.6.0, would bring 328
// modules (the Weaviate server module itself, testcontainers, Docker's
// client).
//
// # Mapping
//
// A collection is a class named Cairn_ and the collection's name (spelled
// with a–z, 0–9 and _xx escapes), holding its cairn configuration in the
// class description; Shards and Replication of [Options] set its sharding
// (default: one shard per node given to Open, replication factor 2).
// Cosine, Dot and L2 are Weaviate's cosine, dot and l2-squared, whose
// distances are cairn's; Flat is Weaviate's flat index, HNSW and Auto its
// HNSW (with Weaviate's defaults, its dynamic ef among them, unless
// CollectionConfig.HNSW sets M, EfConstruction or EfSearch). An item is
// an object whose UUID is the UUIDv5 of the class and the item's id,
// which is kept as the property cairn_id; its text is cairn_text, its
// metadata both a JSON property (what reads return) and one filterable
// property per key, created on first use, named m_ and the encoded key.
// Filters are translated, through their JSON form, into where-filters.
//
// # Consistency, time bounds and failures
//
// Writes go at [Options.WriteConsistency] (default QUORUM), reads at
// [Options.ReadConsistency] (default QUORUM). Every call is bounded by
// Options.Timeout (default 30 s) or ctx's deadline, whichever is sooner,
// and returns by then, give or take the moment it takes to abandon the
// requests in flight (the cluster tests allow 2 s on a busy machine).
// Within that bound each request is bounded by AttemptTimeout (10 s) and
// retried with backoff, on the next node, on network errors, 429 and 5xx
// answers (over gRPC: Unavailable, DeadlineExceeded, ResourceExhausted,
// Aborted, Internal, and Unknown errors that describe a passing state of
// the cluster); objects of a batch that fail (an HTTP 200 answer carrying
// per-object errors, such as "cannot reach enough replicas" while the
// cluster has not yet marked a killed node dead) are sent again, and
// those still failing are the call's error. A call that runs out of
// attempts or time returns an error wrapping [ErrUnavailable]; a 4xx
// answer, or any other gRPC status, is an [*APIError] at once.
//
// A node restarted while the cluster had no leader serves before its copy
// of the schema has caught up, and says meanwhile that it does not know
// a collection's class (over gRPC and GraphQL: Count, and searches over
// REST), or that an object of it is not there (a REST 404, which is
// false). So a node's word that it does not know the class sends the
// call to the next node, within the call's bound; a call that runs out
// of attempts or time so fails with ErrUnavailable, wrapping
// vector.ErrNotFound too if the class was gone at any attempt. A class
// is gone when the leader's schema lacks it and no node's own schema
// holds it: a leader elected a moment ago can lack a class that exists,
// and then the call is tried again too. So every call on a collection
// deleted through another DB fails with an error wrapping ErrNotFound
// (Collection, DeleteCollection and OpenIndex at once), and Collections
// leaves out only a collection whose class is gone. And a
// 404 about an object counts only from a node that confirmed, in the
// second before, that it has the class's index open, and saw every node
// of the cluster up with the class's shards loaded (a read asks only the
// replicas up, and one may lack the object); the node is asked when it
// has not, and while a node is down a Get of an id that is not there
// fails with ErrUnavailable rather than ErrNotFound.
//
// A read does not return a subset for want of a shard. Weaviate leaves
// out of a search or count, without an error, a shard none of whose
// replicas it holds alive; so after the cluster answers Count, Query,
// Find, Get and an Index's Search, Len (and DeleteWhere) ask which shards
// have a replica on a node that answers, and fail with a [*PartialError],
// which wraps ErrUnavailable and names the shards missing, if any has
// none. A replica that is alive but behind is another matter: a search
// or count (Find, Query, Count, Search, Len) answers from one replica per
// shard, at QUORUM too (Weaviate compares the others only for the
// objects returned), so in the seconds around a network partition it
// can miss acknowledged items without an error; Get by id reads the
// replicas the level asks for and is right far more often
// (RELIABILITY.md has the figures of TestClusterPartition).
//
// A write that fails after sending objects is undone as far as it got: an
// Add deletes every object it sent, an Upsert writes back the versions it
// replaced, a Delete restores what it deleted (DeleteWhere, which has no
// list of what it matched, reports how many it removed). The write itself
// stops a quarter of its time bound (at most 5 s) early, so that the undo
// runs within the bound too; the error is a [*WriteError] that says which
// ids the undo could not confirm (those on a shard without a live
// replica, for one), and then wraps [ErrNotUndone].
//
// With a node down, Weaviate resolves QUORUM to the live replicas of each
// shard and refuses a search over shards that resolved differently; such
// a read is repeated at ONE, which is safe while the node is down (every
// write acknowledged meanwhile reached all live replicas). A node that
// comes back serves the writes it missed once Weaviate's async
// replication has caught up (tens of seconds); a Get at QUORUM sees them
// at once, a search may not (above). Deletes it missed are such writes
// too: until then, searches, counts and an Index's Len that read its
// replica can return or count items deleted while it was down (a
// helper's probe saw a Find return 62 deleted of 162, and Len stay wrong
// for 30 s), while Get by id says they are not found.
//
// Weaviate finishes a write its coordinator began even after the client
// gave up on it (v1.39's commit phase has no time bound), so an attempt
// held by a node cut off from the others can land when the cut heals:
// over a later acknowledged write of the same id, or after the undo of a
// failed write. No client setting prevents it.
//
// # Differences from the local store
//
//   - Writes are not atomic across the cluster: each object is written on
//     its own, and a failed write is undone by further writes, which can
//     themselves fail (the error then says so). Readers may see part of a
//     batch while it is being written.
//   - Add checks that its ids are new and then writes. Within one [DB],
//     writes of one id run one after the other, so of two concurrent Adds
//     of an id exactly one succeeds; across DBs (processes) both may, the
//     last write winning.
//   - Get, Delete, and the duplicate checks of batches of up to 64 items,
//     read each object at the read consistency; larger ones look the
//     objects up by a search, which in the seconds after a node rejoins can
//     miss an object that only the other replica holds. Get and Delete read
//     an object the search missed again by itself before they say it is
//     not there; a larger Add can then write over an item it missed instead
//     of failing with vector.ErrDuplicateID.
//   - A metadata key has one type (string, number or bool) per collection,
//     as a Weaviate property does: writing another type under it is an
//     error wrapping vector.ErrInvalidOptions. String equality is on the
//     whole value after Weaviate's trimming of surrounding whitespace, so
//     "go" and " go " are equal, and the empty string equals nothing.
//   - Find returns items in the order of their creation time in
//     milliseconds, ties by id, rather than in insertion order; ties in
//     Query are broken the same way. Query reaches at most
//     Options.MaxResults items (the cluster's QUERY_MAXIMUM_RESULTS), and
//     an Index's Search with a Go filter fails with [ErrBeyondReach] where
//     its answer lies beyond them.
//   - QueryOptions.Ef is checked but not applied: Weaviate sets ef per
//     class. The index kind Auto is HNSW from the start; QFlat is
//     Weaviate's flat index (exact, no codes).
//   - Only vector search is served: keyword and hybrid modes, Keywords,
//     Fusion, MMR, Rerank and Recency are errors wrapping
//     vector.ErrInvalidOptions (WithEmbeddings works).
//   - Items carry no times: reads give zero CreatedAt and UpdatedAt, and
//     a write that gives CreatedAt, UpdatedAt or ExpiresAt, a
//     CollectionConfig.TTL or KeepHistory, and a TimeRange filter are
//     errors wrapping vector.ErrInvalidOptions.
//   - Weaviate's numbers are float64s: a metadata integer beyond 2^53 in
//     magnitude, which the local store keeps exactly, is an error
//     wrapping vector.ErrInvalidOptions, in a write and in a filter.
//   - Names become Weaviate names (see Mapping): a collection name that
//     encodes to more than 224 characters, or a metadata key to more than
//     228 (a–z and 0–9 count one, any other byte three), is an error wrapping
//     vector.ErrInvalidOptions; a filter cannot name a metadata key that
//     begins with "$", though a write may store one. An Index named x and
//     a collection named index-x are one class: make only one of them.
//   - Count asks the cluster; the vector.Index's Len returns -1 when the
//     cluster does not answer.
//
// # Concurrency
//
// A [DB], its [Collection]s and [Index]es are safe for concurrent use by
// multiple goroutines; requests share a pool of HTTP connections and one
// gRPC connection per node.
//
// # Test cluster
//
// cluster.sh in this directory starts three nodes inside a network
// namespace that has only a loopback interface (root needed), each on its
// own address (127.0.0.1, .2, .3), and test-cluster.sh runs this
// package's cluster tests there; without CAIRN_WEAVIATE set the cluster
// tests skip. TestClusterPartition is a Jepsen-style test: a nemesis
// (cluster.sh cut, pause, heal: nftables rules inside the namespace, and
// SIGSTOP) cuts links between nodes and pauses nodes while writers and
// readers record a history, which a checker then reads. CI runs it for
// 75 s, reporting the anomalies Weaviate is known to produce under
// partitions (-partition.known) and failing on any other; the long,
// strict run is
//
//	weaviate/test-cluster.sh -test.run '^TestClusterPartition$' -test.timeout 60m -partition.duration 30m -partition.known=
//
// RELIABILITY.md has its figures, and what it found.
package weaviate
