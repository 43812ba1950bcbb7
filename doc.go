// Package cairn is an embedded vector memory store for Go programs and
// agents: remember items (an id, an embedding, text and metadata) in named
// collections, and recall the ones most similar to a query, filtered by
// metadata. It runs in your process, keeps its data in one SQLite file (or
// only in memory), and needs no cgo.
//
//	db, err := cairn.Open(ctx, "memory.db", &cairn.Options{Embedder: emb})
//	notes, err := db.CreateCollection(ctx, "notes", cairn.CollectionConfig{Dim: 768})
//	err = notes.Add(ctx, cairn.Item{ID: "n1", Text: "the user likes Go", Metadata: map[string]any{"topic": "go"}})
//	hits, err := notes.QueryText(ctx, "what language?", 5, &cairn.QueryOptions{Filter: cairn.Eq("topic", "go")})
//
// # Model
//
// A [DB] holds [Collection]s by name. Each collection has a fixed
// dimension, a [vector.Metric] (Cosine by default) and an index choice:
// [Flat] (exact), [HNSW] (approximate, fast on large collections),
// [QFlat] (a scan of int8 codes with exact rescoring, for data where
// graphs cannot pay) or [Auto] (exact while small, HNSW from
// [DefaultAutoThreshold] items on; with a recall target, whichever of the
// three meets it fastest, measured from 500 items ([hnsw.MinCalibrationLen])
// on, and again in the background at each doubling while a scan wins and
// once more on the queries a scan answered: see [Route]).
// Items are identified by the caller's string ids; the numeric ids of the
// layers below never show.
//
// Metadata values are strings, numbers and booleans. [Filter]s ([Eq], [Ne],
// [In], [Lt], [Lte], [Gt], [Gte], [TimeRange], [And], [Or], [Not]) are
// evaluated over the collection's metadata and times, held in memory, and the matching ids are
// handed to the index as an allow-list, so a filtered query still returns
// k results whenever k items match: small allow-lists are searched
// exactly, large ones by filtered graph search.
// Equality conditions are answered from posting lists built on first use,
// and their negations ([Ne], Not of [Eq] or [In]) as every item but those
// lists' without a scan; other conditions scan the metadata. [Collection.Find] lists the items a
// filter matches, without a query vector.
//
// An [Embedder] turns text into vectors, so items can be added and queried
// by text; package github.com/cairndb/cairn/openai has one for any
// OpenAI-compatible /embeddings endpoint (OpenAI, Ollama, llama.cpp, vLLM).
//
// # Keyword and hybrid search
//
// Every collection also indexes its items' Text by word, so a query can
// rank by embeddings ([VectorMode], the default), by words ([KeywordMode]:
// BM25, with the tokens and scores of SQLite's FTS5 — its unicode61
// tokenizer, case and diacritics folded, and bm25() with k1 = 1.2,
// b = 0.75) or by both ([HybridMode]: the two lists fused by reciprocal
// rank fusion, see [Fusion]). Keyword queries are plain text: quotes, '*',
// '-' and NEAR are never operators. Names, error codes and rare words that
// embeddings blur are what the keyword list is for. Filters apply inside
// each list. The word index is one Go implementation for memory and file
// collections alike: it is updated at the same instant as the vectors
// (a write's items become visible to both at once) and rebuilt from the
// items' text when a collection is loaded. [MMR] diversifies results and a
// [Reranker] reorders them ([Rerank]); [QueryOptions] says how.
//
// # Time and expiry
//
// Every item keeps the time it was created and last updated
// ([Item.CreatedAt], [Item.UpdatedAt]), set by the store and kept in the
// file; an Upsert keeps CreatedAt. An item may expire: by its own
// [Item.ExpiresAt] (which must be in the future when written) or by its
// collection's time-to-live ([CollectionConfig.TTL], counted from each
// write). From the instant it expires, no read returns it: Get and Delete
// report it missing, Find, Items, Count and every query mode leave it out,
// and an Add of its id succeeds. Expired items are removed by a
// background sweeper, when the next item is due and when a collection is
// loaded, in batches through the same delete every write takes, so the
// keyword index, the search graph and the file stay in step, and neither
// readers nor writers wait more than for any delete; [Collection.RemoveExpired]
// removes them at once. [TimeRange] filters by any of the three times.
//
// # Memory that lasts
//
// [Collection.UpsertDedup] keeps one memory per fact: a new item that is
// a near-duplicate of a stored one ([Dedup]) updates it instead, and the
// call reports the [Merge]. [QueryOptions].Recency ranks by relevance ×
// recency × importance ([Recency]), exactly over the index's ranking.
//
// # Tenants
//
// A collection's tenants ([Collection.CreateTenant], [Collection.Tenant])
// are the users, agents or sessions of one application, each with items
// of its own, as Weaviate's tenants and mem0's user_id keep them apart: a
// [Tenant] has the methods of a Collection and its configuration, the same
// ids may be used in every tenant, and no read of one returns another's
// item. In a file, a tenant costs no memory until it is used: its items
// and index are loaded on its first call and closed again, least recently
// used first, once the loaded tenants exceed [Options.TenantMemory], so
// one file can hold far more tenants than memory, and Open does not grow
// with their number. A tenant no call loads is swept all the same: a
// writable file's DB finds, by two indexes of the file, the tenants of
// its loaded collections with an item expired or history past the
// policy's age, and loads each for its sweeper's pass, then closes it
// again, so that what is due leaves the file within moments of its time
// (a minute at most, if the clock jumps) whether or not the tenant is
// used again.
//
// # Errors
//
// Bad input is reported with the sentinel errors of package vector,
// wrapped with context, and changes nothing: [vector.ErrDimensionMismatch],
// [vector.ErrNonFinite], [vector.ErrOutOfRange] (a Dot or L2 vector so
// large that float32 distances could overflow), [vector.ErrZeroVector],
// [vector.ErrEmptyID],
// [vector.ErrDuplicateID], [vector.ErrNotFound] (unknown item or
// collection), [vector.ErrInvalidK], [vector.ErrInvalidOptions] (malformed
// filter or time range, bad metadata, configuration or query options, a
// negative TTL, an ExpiresAt not in the future, keywords that are empty or
// over [MaxKeywordBytes]) and, once the store is closed,
// [vector.ErrClosed], from every call. A collection name already taken is
// [ErrCollectionExists]; a reranker's bad answer [ErrBadRerank]. Text
// calls without an embedder return [ErrNoEmbedder].
//
// # Concurrency
//
// A DB and its collections are safe for concurrent use by many
// goroutines. Within a collection, queries, reads and writes run in
// parallel: a write holds the collection's lock only to check and reserve
// its ids and, once its transaction has committed, to make its change
// visible, so queries are never held up by a commit, and concurrent writes
// reach the file together and share its transactions and fsyncs (group
// commit). Different collections do not block each other, and loading one
// from the file holds up no other.
//
// One rule makes this work: versions by id. Every write of an item
// stores a new version of it under an internal id never used before, and
// leaves the version it replaces untouched; once the new versions are
// durable, the write publishes them, and unpublishes the versions they
// replace or delete, all at one instant under the collection's lock; only
// then are the old versions removed from the index and the store. Readers
// see published versions only: of whatever the index returns they ask
// one question, whether their view at the read's instant allows it
// (published, and not expired).
//
// The rules for concurrent writes to one collection:
//
//   - Each write (a whole batch) becomes visible to readers at one
//     instant, after it is durable: a query, Get or Find sees all of it or
//     none of it, and never a write that fails or is cancelled. Until then
//     readers see the items' previous versions.
//   - Writes that share no id run fully in parallel.
//   - A write that names an id another write has in flight (being added,
//     replaced or deleted) waits for that write to finish, then proceeds
//     against its outcome. So of two concurrent Adds of one id exactly one
//     succeeds and the other returns [vector.ErrDuplicateID] (if the first
//     fails, the second goes ahead); a Delete or Upsert of an id being added
//     applies after the Add; [Collection.DeleteWhere] waits for the writes
//     in flight on the items it matches. A cancelled context ends the wait,
//     with nothing changed.
//   - The build of an HNSW graph by an [Auto] collection waits for the
//     writes in flight and holds up new ones, not queries.
//
// # Persistence
//
// [Open] keeps everything in one SQLite file: each write is all or
// nothing (concurrent writes may share one transaction, each in its own
// savepoint) and durable when the call returns. The items are the source of
// truth; HNSW graphs are saved by [DB.Close] and rebuilt from the items
// when missing or stale. Reads never write: a session that only reads
// (queries, Get, Find, Items, an expiry sweep that finds nothing expired)
// leaves every byte of the file as it found it, so a graph it rebuilt, or
// an Auto collection's routing verdict it measured, is kept only in
// memory, and the next Open rebuilds or measures again. A file has one
// writer at a time; with [Options.ReadOnly] any number of readers, in this
// process and others, read it beside the writer (each as of its Open) or
// on read-only media. [OpenMemory] has the same API and keeps nothing.
package cairn
