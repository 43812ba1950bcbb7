// mcp.go holds "cairn mcp": a memory server for agents over the Model
// Context Protocol, on stdio, with the official Go SDK.

package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// version is the server's version in the MCP handshake.
const version = "0.1.0"

func cmdMCP(ctx context.Context, e *env, args []string) error {
	const synopsis = "-db FILE [-collection NAME] [-namespace NAME] -embed-url URL -embed-model MODEL [-embed-key-env VAR]"
	fs := newFlags(e, "mcp", synopsis)
	path := fs.String("db", "", "the cairn file to keep memories in (created if missing)")
	coll := fs.String("collection", "memories", "the collection of memories")
	namespace := fs.String("namespace", "", "the namespace (a tenant of the collection: a user, an agent) of calls that name none; none: the collection's own")
	maxText := fs.Int("max-text", defaultMaxText, "the longest text of a memory, in characters; its metadata, as JSON, has the same bound")
	callTimeout := fs.Duration("call-timeout", defaultCallTimeout, "bound on one tool call, embedding requests and retries included")
	history := fs.Duration("history", defaultHistory, "how long a collection this server creates keeps the earlier versions of its memories (memory_history, memory_restore); 0: none")
	var emf embedFlags
	emf.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError("unexpected argument %q", fs.Arg(0))
	}
	if *path == "" {
		return usageError("-db is required")
	}
	if *coll == "" {
		return usageError("-collection must not be empty")
	}
	if *maxText < 1 {
		return usageError("-max-text must be positive, got %d", *maxText)
	}
	if *callTimeout <= 0 {
		return usageError("-call-timeout must be positive, got %v", *callTimeout)
	}
	if *history < 0 {
		return usageError("-history must not be negative, got %v", *history)
	}
	if len(*namespace) > maxNamespace || !utf8.ValidString(*namespace) {
		return usageError("-namespace must be UTF-8 of at most %d bytes", maxNamespace)
	}
	if !emf.set() {
		return usageError("an embedder is required: set -embed-url and -embed-model")
	}
	emb, err := emf.embedder()
	if err != nil {
		return err
	}
	emb = markEmbedder(emb)
	db, err := openDB(ctx, *path, true, &cairn.Options{Embedder: emb})
	if err != nil {
		return err
	}
	m, err := newMemory(ctx, db, *coll, emb)
	if err != nil {
		return closeDB(*path, db, &fileError{*path, err})
	}
	m.callTimeout, m.maxText, m.namespace, m.keepFor = *callTimeout, *maxText, *namespace, *history
	n := 0
	if c := m.collection(); c != nil {
		if n, err = c.Count(ctx); err != nil {
			return closeDB(*path, db, &fileError{*path, err})
		}
	}
	// stdout is the protocol's; clients show stderr in their logs.
	fmt.Fprintf(e.stderr, "cairn mcp: serving %s, collection %q (%d memories), embeddings from %s (%s)\n", *path, *coll, n, emf.url, emf.model)
	// An interrupt (ctx) ends the input; the session runs on until the
	// calls in flight have answered.
	t := &lineTransport{r: e.stdin, w: e.stdout, log: e.stderr, stop: ctx.Done()}
	srv, err := m.server()
	if err != nil {
		return closeDB(*path, db, err)
	}
	err = srv.Run(context.WithoutCancel(ctx), t)
	if err != nil && ctx.Err() != nil {
		err = nil // interrupted: a normal way to stop
	}
	if err != nil {
		err = fmt.Errorf("cairn mcp: %w", err)
	}
	return closeDB(*path, db, err)
}

// memory is the state behind the MCP tools: one collection of a DB,
// created on the first memory_store (its dimension is the embedder's).
// It is safe for concurrent use, as the SDK calls tools concurrently.
type memory struct {
	db   *cairn.DB
	name string
	emb  cairn.Embedder

	// callTimeout bounds each tool call (-call-timeout).
	callTimeout time.Duration
	// maxText bounds a memory's text, in characters, and its metadata as
	// JSON, in bytes (-max-text).
	maxText int
	// namespace is the tenant of the calls that name none (-namespace);
	// "" for the collection's own memories.
	namespace string
	// keepFor is how long a collection the server creates keeps
	// versions (-history); 0 for none.
	keepFor time.Duration

	writes *nsLocks // see nsLocks

	mu   sync.Mutex
	coll *cairn.Collection // nil until the collection exists
}

// defaultCallTimeout is -call-timeout's default: an agent waits for a
// tool's answer, and an embeddings server that accepts and never answers
// would otherwise hold it for -embed-timeout times the tries.
const defaultCallTimeout = 30 * time.Second

// defaultMaxText is -max-text's default: 64 Ki characters, about 16k
// tokens, more than most embedding models read (they cut the rest), so a
// text worth remembering fits, and a page of memories stays readable.
const defaultMaxText = 64 << 10

// newMemory returns the memory kept in the collection name of db. emb
// must be the embedder db was opened with, wrapped by markEmbedder.
func newMemory(ctx context.Context, db *cairn.DB, name string, emb cairn.Embedder) (*memory, error) {
	m := &memory{db: db, name: name, emb: emb, callTimeout: defaultCallTimeout, maxText: defaultMaxText, keepFor: defaultHistory, writes: newNSLocks()}
	c, err := db.Collection(ctx, name)
	switch {
	case err == nil:
		m.coll = c
	case !errors.Is(err, vector.ErrNotFound):
		return nil, err
	}
	return m, nil
}

// collection returns the collection, or nil if nothing was stored yet.
func (m *memory) collection() *cairn.Collection {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.coll
}

// space is where a call's memories are: the collection, or one of its
// tenants (a namespace).
type space interface {
	Add(ctx context.Context, items ...cairn.Item) error
	Upsert(ctx context.Context, items ...cairn.Item) error
	UpsertDedup(ctx context.Context, d *cairn.Dedup, items ...cairn.Item) ([]cairn.Merge, error)
	Get(ctx context.Context, ids ...string) ([]cairn.Item, error)
	Delete(ctx context.Context, ids ...string) error
	QueryText(ctx context.Context, text string, k int, o *cairn.QueryOptions) ([]cairn.Result, error)
	Items(ctx context.Context, o *cairn.ItemsOptions) iter.Seq2[cairn.Item, error]
	History(ctx context.Context, id string) ([]cairn.Version, error)
	Restore(ctx context.Context, t time.Time, o *cairn.RestoreOptions) (cairn.Restored, error)
}

// maxNamespace bounds a namespace's length, in bytes.
const maxNamespace = 256

// namespaceOf returns the namespace a call names, else the server's.
func (m *memory) namespaceOf(ns string) (string, error) {
	if len(ns) > maxNamespace {
		return "", toolError("namespace is %d bytes, more than %d", len(ns), maxNamespace)
	}
	return cmp.Or(ns, m.namespace), nil
}

// space returns the memories of namespace ns (see namespaceOf), or nil if
// none were stored there yet.
func (m *memory) space(ctx context.Context, ns string) (space, error) {
	ns, err := m.namespaceOf(ns)
	if err != nil {
		return nil, err
	}
	c := m.collection()
	if c == nil {
		return nil, nil
	}
	if ns == "" {
		return c, nil
	}
	t, err := c.Tenant(ctx, ns)
	if errors.Is(err, vector.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, explain(err)
	}
	return t, nil
}

// create returns the collection, creating it with dimension dim.
func (m *memory) create(ctx context.Context, dim int) (*cairn.Collection, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.coll != nil {
		return m.coll, nil
	}
	cfg := cairn.CollectionConfig{Dim: dim}
	if m.keepFor > 0 {
		cfg.KeepHistory = &cairn.HistoryPolicy{For: m.keepFor}
	}
	c, err := m.db.CreateCollection(ctx, m.name, cfg)
	if err != nil {
		return nil, err
	}
	m.coll = c
	return c, nil
}

const instructions = `Long-term memory kept in a local cairn database. Store facts, preferences and
notes worth remembering with memory_store; before answering, recall what is relevant with
memory_search (by meaning, not exact words). Metadata (strings, numbers, booleans) can be
filtered on, with filters like {"kind":"fact"} or {"year":{"$gte":2020}}. Changes are kept
(for 30 days by default): memory_history shows a memory's versions, and memory_restore puts
memories back as they were at a time, after reporting what it would change.`

// server returns the MCP server with the memory tools.
// exactNumbers wraps a tool handler so that its input is read a second
// time from the raw arguments, after the SDK has validated them: the SDK
// validates through a map whose numbers are float64, which rounds
// integers beyond 2^53, while the second reading keeps the metadata and
// filter numbers as written (see jsonMap). It starts from the SDK's input
// and overwrites only the members the arguments hold.
func exactNumbers[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		if req != nil && req.Params != nil && len(req.Params.Arguments) > 0 {
			again := in
			if json.Unmarshal(req.Params.Arguments, &again) == nil {
				in = again
			}
		}
		return h(ctx, req, in)
	}
}

// exactOutput wraps a tool handler so that its result carries Out as
// written: the SDK validates Out through a map whose numbers are float64
// and sends that map, which rounds integers beyond 2^53 (metadata keeps
// them exactly). The result's text is Out marshalled here, and the
// middleware exactResults sends the same JSON as its structured content.
func exactOutput[In, Out any](h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		res, out, err := h(ctx, req, in)
		if err != nil || res != nil {
			return res, out, err // an error, or a result of the handler's own
		}
		b, merr := json.Marshal(out)
		if merr != nil || len(b) == 0 || b[0] != '{' {
			return res, out, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}}, out, nil
	}
}

func (m *memory) server() (*mcp.Server, error) {
	in, err := m.inputSchemas()
	if err != nil {
		return nil, err
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "cairn", Title: "cairn memory", Version: version},
		&mcp.ServerOptions{Instructions: instructions})
	s.AddReceivingMiddleware(boundErrors, exactResults)
	closed, destructive := new(false), new(true)
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_store",
		InputSchema: in["memory_store"],
		Annotations: &mcp.ToolAnnotations{Title: "Remember", DestructiveHint: new(false), OpenWorldHint: closed},
		Description: "Remember a text (a fact, a preference, a note), with optional metadata to filter on later. " +
			"Returns the memory's id. An id may be given; storing an id that exists is an error (use memory_update). " +
			"With merge_similar (e.g. 0.95), a text that says what a stored memory says updates that memory instead (merged_into names it); " +
			"scope lists metadata keys the two must agree on (e.g. [\"user\"]).",
	}, bounded(m.callTimeout, exactOutput(exactNumbers(m.store))))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_search",
		InputSchema: in["memory_search"],
		Annotations: &mcp.ToolAnnotations{Title: "Recall", ReadOnlyHint: true, OpenWorldHint: closed},
		Description: "Find the memories closest in meaning to a query, most similar first, optionally only those whose metadata match a filter. " +
			`Filters: {"kind":"fact"}, {"year":{"$gte":2020}}, {"tag":{"$in":["a","b"]}}, {"$or":[...]}, {"$not":{...}}. ` +
			"With half_life_days and/or importance (a metadata key holding 0 to 1), memories rank by similarity × recency × importance (vector mode).",
	}, bounded(m.callTimeout, exactOutput(exactNumbers(m.search))))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_get",
		InputSchema: in["memory_get"],
		Annotations: &mcp.ToolAnnotations{Title: "Get memories", ReadOnlyHint: true, OpenWorldHint: closed},
		Description: "Fetch memories by id. Fails if any id is unknown. An answer stops short of 256 KiB: the ids it leaves out are in rest.",
	}, bounded(m.callTimeout, exactOutput(m.get)))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_update",
		InputSchema: in["memory_update"],
		Annotations: &mcp.ToolAnnotations{Title: "Update a memory", DestructiveHint: destructive, IdempotentHint: true, OpenWorldHint: closed},
		Description: "Change a memory's text (it is embedded again) and/or replace its metadata ({} clears it). Fails if the id is unknown.",
	}, bounded(m.callTimeout, exactOutput(exactNumbers(m.update))))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_delete",
		InputSchema: in["memory_delete"],
		Annotations: &mcp.ToolAnnotations{Title: "Forget", DestructiveHint: destructive, IdempotentHint: true, OpenWorldHint: closed},
		Description: "Forget memories by id, all or none: fails, deleting nothing, if any id is unknown.",
	}, bounded(m.callTimeout, exactOutput(m.delete)))
	mcp.AddTool(s, &mcp.Tool{
		Name:        "memory_list",
		InputSchema: in["memory_list"],
		Annotations: &mcp.ToolAnnotations{Title: "List memories", ReadOnlyHint: true, OpenWorldHint: closed},
		Description: "List memories in the order they were stored or last updated, a page at a time, optionally only those whose metadata match a filter.",
	}, bounded(m.callTimeout, exactOutput(exactNumbers(m.list))))
	m.addHistoryTools(s, in)
	return s, nil
}

// inputSchemas returns the tools' input schemas: inferred from their
// types, with what the jsonschema tags cannot say (types, enums, bounds) set to what the tools enforce.
func (m *memory) inputSchemas() (map[string]*jsonschema.Schema, error) {
	var errs []error
	schema := func(s *jsonschema.Schema, err error) map[string]*jsonschema.Schema {
		errs = append(errs, err)
		if err != nil {
			return map[string]*jsonschema.Schema{}
		}
		return s.Properties
	}
	num := func(f float64) *float64 { return &f }
	one := new(1)
	// No "default"s: the SDK (v1.8.0) panics applying one to a call
	// without arguments. The descriptions give them.
	bounds := func(p *jsonschema.Schema, lo, hi int) {
		p.Minimum = num(float64(lo))
		if hi > 0 {
			p.Maximum = num(float64(hi))
		}
	}
	nullable := func(p *jsonschema.Schema) { // an optional object: null is as good as absent
		p.Types, p.Type = []string{p.Type, "null"}, ""
	}
	ids := func(p *jsonschema.Schema) {
		p.Types, p.Type, p.MinItems = nil, "array", one
		p.Items.MinLength = one
	}
	scalars := &jsonschema.Schema{Types: []string{"string", "number", "boolean"}}

	in := map[string]*jsonschema.Schema{}
	var p map[string]*jsonschema.Schema
	in["memory_store"], p = schemaOf[storeIn](schema)
	p["text"].MinLength, p["text"].MaxLength = one, &m.maxText
	p["metadata"].AdditionalProperties = scalars
	p["merge_similar"].Minimum, p["merge_similar"].Maximum = num(0), num(1)

	in["memory_search"], p = schemaOf[searchIn](schema)
	p["query"].MinLength = one
	bounds(p["k"], 1, maxK)
	nullable(p["filter"])
	p["mode"].Enum = []any{"vector", "keyword", "hybrid"}
	p["half_life_days"].Minimum = num(0)

	in["memory_get"], p = schemaOf[idsIn](schema)
	ids(p["ids"])
	in["memory_delete"], p = schemaOf[idsIn](schema)
	ids(p["ids"])

	in["memory_update"], p = schemaOf[updateIn](schema)
	p["id"].MinLength = one
	p["text"].MaxLength = &m.maxText
	p["metadata"].AdditionalProperties = scalars

	in["memory_list"], p = schemaOf[listIn](schema)
	nullable(p["filter"])
	bounds(p["page"], 1, maxPage)
	bounds(p["page_size"], 1, maxPageSize)

	in["memory_history"], p = schemaOf[historyIn](schema)
	p["id"].MinLength = one
	in["memory_restore"], p = schemaOf[restoreIn](schema)
	p["to"].MinLength = one
	p["to"].Format = "date-time"
	ids(p["ids"])
	return in, errors.Join(errs...)
}

// schemaOf returns the schema inferred from T, and its properties passed
// through props.
func schemaOf[T any](props func(*jsonschema.Schema, error) map[string]*jsonschema.Schema) (*jsonschema.Schema, map[string]*jsonschema.Schema) {
	s, err := jsonschema.For[T](nil)
	return s, props(s, err)
}

// The tools' inputs and outputs; their JSON schemas are inferred from
// these types, and the jsonschema tags are the descriptions an agent
// reads.
type (
	storeIn struct {
		Text     string  `json:"text" jsonschema:"the text to remember"`
		Metadata jsonMap `json:"metadata,omitempty" jsonschema:"attributes to filter on later: string, number or boolean values"`
		ID       string  `json:"id,omitempty" jsonschema:"an id for the memory; one is generated if omitted"`
		// MergeSimilar and Scope ask for cairn.Collection.UpsertDedup.
		MergeSimilar float64  `json:"merge_similar,omitempty" jsonschema:"if set (0 to 1, e.g. 0.95): a stored memory at least this similar is updated instead of storing a near-duplicate"`
		Scope        []string `json:"scope,omitempty" jsonschema:"with merge_similar: metadata keys a merged memory must share, e.g. [\"user\"]"`
		Namespace    string   `json:"namespace,omitempty" jsonschema:"whose memory this is (a user, an agent, a project): each namespace's memories are kept apart from every other's; default: the server's"`
	}
	storeOut struct {
		ID         string `json:"id" jsonschema:"the id of the memory that holds the text"`
		MergedInto string `json:"merged_into,omitempty" jsonschema:"set when the text updated this existing memory instead of being stored as a new one"`
	}
	searchIn struct {
		Query  string  `json:"query" jsonschema:"what to look for, in words"`
		K      int     `json:"k,omitempty" jsonschema:"how many memories to return, 1 to 100 (default 5)"`
		Filter jsonMap `json:"filter,omitempty" jsonschema:"only memories whose metadata match this filter, e.g. {\"kind\":\"fact\"}"`
		Mode   string  `json:"mode,omitempty" jsonschema:"vector (by meaning, the default), keyword (by words: names, codes, exact terms) or hybrid (both, fused)"`
		// HalfLifeDays and Importance ask for cairn.Recency.
		HalfLifeDays float64 `json:"half_life_days,omitempty" jsonschema:"rank newer memories higher: the age in days at which a memory's weight halves (vector mode)"`
		Importance   string  `json:"importance,omitempty" jsonschema:"rank by this metadata key too, a number from 0 to 1 (vector mode)"`
		Namespace    string  `json:"namespace,omitempty" jsonschema:"search only this namespace's memories (a user, an agent, a project); default: the server's"`
	}
	searchOut struct {
		Hits []hit `json:"hits" jsonschema:"the memories found, most similar first"`
		// SizeLimited is set when the hits were cut short by pageBytes.
		SizeLimited bool `json:"size_limited,omitempty" jsonschema:"true if fewer than k memories are given because they reached 256 KiB"`
	}
	idsIn struct {
		IDs       []string `json:"ids" jsonschema:"the ids of the memories"`
		Namespace string   `json:"namespace,omitempty" jsonschema:"the namespace the memories are in; default: the server's"`
	}
	memoryOut struct {
		ID       string `json:"id"`
		Text     string `json:"text,omitempty"`
		Metadata outMap `json:"metadata,omitempty"`
	}
	memoriesOut struct {
		Memories []memoryOut `json:"memories"`
		// SizeLimited and Rest are set when the memories were cut short
		// by pageBytes.
		SizeLimited bool     `json:"size_limited,omitempty" jsonschema:"true if some memories are not given because the answer reached 256 KiB: ask for the ids in rest in another call"`
		Rest        []string `json:"rest,omitempty" jsonschema:"with size_limited: the ids of the memories not given"`
	}
	updateIn struct {
		ID        string  `json:"id" jsonschema:"the id of the memory to change"`
		Text      string  `json:"text,omitempty" jsonschema:"the new text; omit to keep the text"`
		Metadata  jsonMap `json:"metadata,omitempty" jsonschema:"the new metadata, replacing the old; omit to keep it, {} to clear it"`
		Namespace string  `json:"namespace,omitempty" jsonschema:"the namespace the memory is in; default: the server's"`
	}
	deleteOut struct {
		Deleted int `json:"deleted" jsonschema:"how many memories were deleted"`
	}
	listIn struct {
		Filter    jsonMap `json:"filter,omitempty" jsonschema:"only memories whose metadata match this filter"`
		Page      int     `json:"page,omitempty" jsonschema:"the page, from 1 (default 1)"`
		PageSize  int     `json:"page_size,omitempty" jsonschema:"memories per page, 1 to 100 (default 20)"`
		Namespace string  `json:"namespace,omitempty" jsonschema:"list only this namespace's memories; default: the server's"`
	}
	listOut struct {
		Memories []memoryOut `json:"memories"`
		Page     int         `json:"page"`
		More     bool        `json:"more" jsonschema:"whether a later page has more memories"`
		// SizeLimited is set on a page cut short by pageBytes.
		SizeLimited bool `json:"size_limited,omitempty" jsonschema:"true if the page holds fewer than page_size memories because it reached 256 KiB; the next page goes on from there"`
	}
)

const (
	defaultK, maxK               = 5, 100
	defaultPageSize, maxPageSize = 20, 100
	// maxPage is the largest float64 below 2^63: the SDK validates
	// arguments as float64s, so a page beyond it, which would overflow the
	// int it decodes into, is refused in the schema's words, not a
	// decoder's. Every page it lets through past the end is empty.
	maxPage = 1<<63 - 1024
)

// embedError marks an error of the embedder, wherever the store wraps it.
type embedError struct{ err error }

func (e *embedError) Error() string { return e.err.Error() }
func (e *embedError) Unwrap() error { return e.err }

// markEmbedder wraps emb so that its errors are recognisable as the
// embedder's (see explain).
func markEmbedder(emb cairn.Embedder) cairn.Embedder {
	return cairn.EmbedderFunc(func(ctx context.Context, texts []string) ([][]float32, error) {
		vs, err := emb.Embed(ctx, texts)
		if err != nil {
			return nil, &embedError{err}
		}
		return vs, nil
	})
}

// callTimeoutError is the cause of a tool call's end when it outlives
// -call-timeout.
type callTimeoutError struct{ d time.Duration }

func (e *callTimeoutError) Error() string {
	return fmt.Sprintf("the call did not finish within %v (-call-timeout)", e.d)
}

// bounded returns h with a deadline d on each call: a call still running
// then is cancelled and fails with a message saying so.
func bounded[In, Out any](d time.Duration, h mcp.ToolHandlerFor[In, Out]) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		te := &callTimeoutError{d}
		ctx, cancel := context.WithTimeoutCause(ctx, d, te)
		defer cancel()
		res, out, err := h(ctx, req, in)
		if err != nil && context.Cause(ctx) == te && !strings.Contains(err.Error(), "-call-timeout") {
			err = toolError("%v; the call was cancelled", te)
		}
		return res, out, err
	}
}

// toolError is an error an agent reads: a plain sentence, without the
// package prefixes of the error it explains.
func toolError(format string, a ...any) error { return fmt.Errorf(format, a...) }

// explain turns a store error into a tool error.
func explain(err error) error {
	var ee *embedError
	var te *callTimeoutError
	switch {
	case errors.As(err, &ee) && errors.As(err, &te):
		return toolError("the embedding service did not answer within %v (-call-timeout), nothing was changed: is it running, and serving the model?", te.d)
	case errors.As(err, &te):
		return toolError("%v; the call was cancelled", te)
	case errors.Is(err, context.Canceled):
		return toolError("cancelled: %v", err) // by the client, not the embedder's failure
	case errors.As(err, &ee):
		return toolError("the embedding service failed, nothing was changed: %v", ee.err)
	case errors.Is(err, vector.ErrDimensionMismatch):
		return toolError("the embedding model's vectors do not fit this memory (%v): serve it with the model it was made with, or use another -collection", err)
	case errors.Is(err, context.DeadlineExceeded):
		return toolError("cancelled: %v", err)
	case errors.Is(err, vector.ErrInvalidOptions):
		return toolError("invalid input: %v", err)
	}
	return err
}

func (m *memory) store(ctx context.Context, _ *mcp.CallToolRequest, in storeIn) (*mcp.CallToolResult, storeOut, error) {
	if strings.TrimSpace(in.Text) == "" {
		return nil, storeOut{}, toolError("text is empty: give the text to remember")
	}
	if err := m.checkSize(in.Text, in.Metadata); err != nil {
		return nil, storeOut{}, err
	}
	id := in.ID
	if id == "" {
		id = newID()
	}
	it := cairn.Item{ID: id, Text: in.Text, Metadata: in.Metadata}
	if math.IsNaN(in.MergeSimilar) || in.MergeSimilar < 0 || in.MergeSimilar > 1 {
		return nil, storeOut{}, toolError("merge_similar must be between 0 and 1, got %v", in.MergeSimilar)
	}
	ns, err := m.namespaceOf(in.Namespace)
	if err != nil {
		return nil, storeOut{}, err
	}
	if it.Embedding, err = m.embed(ctx, in.Text); err != nil {
		return nil, storeOut{}, err
	}
	c := m.collection()
	if c == nil {
		if c, err = m.create(ctx, len(it.Embedding)); err != nil {
			return nil, storeOut{}, explain(err)
		}
	}
	defer m.writing(ns)()
	var sp space = c
	if ns != "" {
		t, err := c.GetOrCreateTenant(ctx, ns)
		if err != nil {
			return nil, storeOut{}, explain(err)
		}
		sp = t
	}
	if in.MergeSimilar > 0 {
		return m.storeMerging(ctx, sp, it, &cairn.Dedup{MinSimilarity: in.MergeSimilar, Scope: in.Scope})
	}
	if err := sp.Add(ctx, it); err != nil {
		if errors.Is(err, vector.ErrDuplicateID) {
			return nil, storeOut{}, toolError("a memory with id %q exists: use memory_update to change it", id)
		}
		return nil, storeOut{}, explain(err)
	}
	return nil, storeOut{ID: id}, nil
}

// embed returns the embedding of text, computed before a write takes its
// namespace's lock.
func (m *memory) embed(ctx context.Context, text string) ([]float32, error) {
	vs, err := m.emb.Embed(ctx, []string{text})
	if err != nil {
		return nil, explain(err)
	}
	if len(vs) != 1 || len(vs[0]) == 0 {
		return nil, toolError("the embedding service returned no vector, nothing was stored")
	}
	return vs[0], nil
}

// storeMerging stores it unless a stored memory says the same, as d says:
// then that memory takes its text and metadata.
func (m *memory) storeMerging(ctx context.Context, c space, it cairn.Item, d *cairn.Dedup) (*mcp.CallToolResult, storeOut, error) {
	if _, err := c.Get(ctx, it.ID); err == nil {
		return nil, storeOut{}, toolError("a memory with id %q exists: use memory_update to change it", it.ID)
	}
	merged, err := c.UpsertDedup(ctx, d, it)
	if err != nil {
		return nil, storeOut{}, explain(err)
	}
	if len(merged) > 0 {
		return nil, storeOut{ID: merged[0].Into, MergedInto: merged[0].Into}, nil
	}
	return nil, storeOut{ID: it.ID}, nil
}

// checkSize refuses a memory's text or metadata larger than -max-text.
func (m *memory) checkSize(text string, md map[string]any) error {
	if n := utf8.RuneCountInString(text); n > m.maxText {
		return toolError("text is %d characters, more than the %d a memory may hold (-max-text): store it in parts, or a summary", n, m.maxText)
	}
	if n := jsonSize(md); md != nil && n > m.maxText {
		return toolError("metadata is %d bytes as JSON, more than the %d a memory may hold (-max-text)", n, m.maxText)
	}
	return nil
}

// parseFilter turns a tool's filter argument into a cairn filter. An
// empty object, as agents send for an optional one, is no filter.
func parseFilter(f map[string]any) (*cairn.Filter, error) {
	if len(f) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, toolError("bad filter: %v", err)
	}
	cf, err := cairn.ParseFilter(b)
	if err != nil {
		return nil, toolError("bad filter %s: %v", b, strings.TrimPrefix(err.Error(), "cairn: "))
	}
	return cf, nil
}

func (m *memory) search(ctx context.Context, _ *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, searchOut, error) {
	out := searchOut{Hits: []hit{}}
	mode, ok := parseMode(in.Mode)
	if !ok {
		return nil, out, toolError("unknown mode %q: use vector, keyword or hybrid", in.Mode)
	}
	k := in.K
	if k == 0 {
		k = defaultK
	}
	if k < 1 || k > maxK {
		return nil, out, toolError("k must be between 1 and %d, got %d", maxK, in.K)
	}
	if strings.TrimSpace(in.Query) == "" {
		return nil, out, toolError("query is empty")
	}
	f, err := parseFilter(in.Filter)
	if err != nil {
		return nil, out, err
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil || c == nil {
		return nil, out, err // nil, nil: nothing stored yet
	}
	o := &cairn.QueryOptions{Filter: f, Mode: mode}
	if in.HalfLifeDays < 0 || math.IsNaN(in.HalfLifeDays) {
		return nil, out, toolError("half_life_days must not be negative, got %v", in.HalfLifeDays)
	}
	if in.HalfLifeDays > 0 || in.Importance != "" {
		if mode != cairn.VectorMode {
			return nil, out, toolError("half_life_days and importance rank by meaning: use mode vector")
		}
		hl := min(in.HalfLifeDays*float64(24*time.Hour), float64(math.MaxInt64/2)) // centuries: no decay to speak of
		if in.HalfLifeDays > 0 {
			hl = max(hl, 1) // under a nanosecond: one, not 0 (no recency)
		}
		o.Recency = &cairn.Recency{HalfLife: time.Duration(hl), Importance: in.Importance}
	}
	res, err := c.QueryText(ctx, in.Query, k, o)
	if err != nil {
		return nil, out, explain(err)
	}
	used := 0
	for _, r := range res {
		h := hitOf(r)
		b := jsonSize(h)
		if len(out.Hits) > 0 && used+b > pageBytes {
			out.SizeLimited = true
			break
		}
		used += b
		out.Hits = append(out.Hits, h)
	}
	return nil, out, nil
}

// notFound explains err, the error of a call on ids: if it is about an
// unknown id, it names the first of ids that c does not hold.
func notFound(ctx context.Context, c space, err error, ids []string) error {
	if !errors.Is(err, vector.ErrNotFound) {
		return explain(err)
	}
	for _, id := range ids {
		if _, gerr := c.Get(ctx, id); errors.Is(gerr, vector.ErrNotFound) {
			return toolError("no memory has the id %q", id)
		}
	}
	return toolError("no memory has one of the ids %q", ids)
}

func (m *memory) get(ctx context.Context, _ *mcp.CallToolRequest, in idsIn) (*mcp.CallToolResult, memoriesOut, error) {
	out := memoriesOut{Memories: []memoryOut{}}
	if len(in.IDs) == 0 {
		return nil, out, toolError("ids is empty")
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil {
		return nil, out, err
	}
	if c == nil {
		return nil, out, toolError("no memory has the id %q", in.IDs[0])
	}
	// Each memory once: Get gives an id asked for n times n times, and a
	// request of a few KB naming one long memory over and over made an
	// answer of gigabytes.
	ids := make([]string, 0, len(in.IDs))
	seen := make(map[string]bool, len(in.IDs))
	for _, id := range in.IDs {
		if !seen[id] {
			seen[id] = true
			ids = append(ids, id)
		}
	}
	// Every id is looked up, so that an unknown one fails the call; the
	// answer stops short of pageBytes (holding at least one memory), and
	// says which ids it leaves out.
	used := 0
	for from := 0; from < len(ids); from += getChunk {
		chunk := ids[from:min(from+getChunk, len(ids))]
		items, err := c.Get(ctx, chunk...)
		if err != nil {
			return nil, memoriesOut{Memories: []memoryOut{}}, notFound(ctx, c, err, chunk)
		}
		for i, it := range items {
			mo := memoryOut{ID: it.ID, Text: it.Text, Metadata: it.Metadata}
			b := jsonSize(mo)
			if !out.SizeLimited && len(out.Memories) > 0 && used+b > pageBytes {
				out.SizeLimited = true
			}
			if out.SizeLimited {
				out.Rest = append(out.Rest, chunk[i])
				continue
			}
			used += b
			out.Memories = append(out.Memories, mo)
		}
	}
	return nil, out, nil
}

// getChunk is how many memories memory_get reads at a time.
const getChunk = 100

func (m *memory) update(ctx context.Context, _ *mcp.CallToolRequest, in updateIn) (*mcp.CallToolResult, memoryOut, error) {
	if in.ID == "" {
		return nil, memoryOut{}, toolError("id is empty")
	}
	if in.Text == "" && in.Metadata == nil {
		return nil, memoryOut{}, toolError("nothing to change: give text and/or metadata")
	}
	if in.Text != "" && strings.TrimSpace(in.Text) == "" {
		return nil, memoryOut{}, toolError("text is blank: give the new text, or leave it out to keep the old")
	}
	if err := m.checkSize(in.Text, in.Metadata); err != nil {
		return nil, memoryOut{}, err
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil {
		return nil, memoryOut{}, err
	}
	if c == nil {
		return nil, memoryOut{}, toolError("no memory has the id %q", in.ID)
	}
	var emb []float32
	if in.Text != "" {
		if emb, err = m.embed(ctx, in.Text); err != nil {
			return nil, memoryOut{}, err
		}
	}
	defer m.writing(in.Namespace)()
	items, err := c.Get(ctx, in.ID)
	if err != nil {
		return nil, memoryOut{}, notFound(ctx, c, err, []string{in.ID})
	}
	it := items[0]
	if in.Text != "" && in.Text != it.Text {
		it.Text, it.Embedding = in.Text, emb
	}
	if in.Metadata != nil {
		it.Metadata = in.Metadata
	}
	if err := c.Upsert(ctx, it); err != nil {
		return nil, memoryOut{}, explain(err)
	}
	return nil, memoryOut{ID: it.ID, Text: it.Text, Metadata: it.Metadata}, nil
}

func (m *memory) delete(ctx context.Context, _ *mcp.CallToolRequest, in idsIn) (*mcp.CallToolResult, deleteOut, error) {
	if len(in.IDs) == 0 {
		return nil, deleteOut{}, toolError("ids is empty")
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil {
		return nil, deleteOut{}, err
	}
	if c == nil {
		return nil, deleteOut{}, toolError("no memory has the id %q", in.IDs[0])
	}
	defer m.writing(in.Namespace)()
	if err := c.Delete(ctx, in.IDs...); err != nil {
		return nil, deleteOut{}, notFound(ctx, c, err, in.IDs)
	}
	// An id given twice is one memory deleted.
	ids := slices.Clone(in.IDs)
	slices.Sort(ids)
	return nil, deleteOut{Deleted: len(slices.Compact(ids))}, nil
}

func (m *memory) list(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
	page, size := in.Page, in.PageSize
	if page == 0 {
		page = 1
	}
	if size == 0 {
		size = defaultPageSize
	}
	out := listOut{Memories: []memoryOut{}, Page: page}
	if page < 1 {
		return nil, out, toolError("page must be 1 or more, got %d", in.Page)
	}
	if size < 1 || size > maxPageSize {
		return nil, out, toolError("page_size must be between 1 and %d, got %d", maxPageSize, in.PageSize)
	}
	f, err := parseFilter(in.Filter)
	if err != nil {
		return nil, out, err
	}
	c, err := m.space(ctx, in.Namespace)
	if err != nil || c == nil {
		return nil, out, err
	}
	// Pages are runs of at most size memories and pageBytes bytes, from
	// the first memory on: page n starts where page n-1 stopped.
	n, used := 1, 0
	var memories int // on page n
	for it, err := range c.Items(ctx, &cairn.ItemsOptions{Filter: f}) {
		if err != nil {
			return nil, out, explain(err)
		}
		mo := memoryOut{ID: it.ID, Text: it.Text, Metadata: it.Metadata}
		b := jsonSize(mo)
		if memories > 0 && (memories == size || used+b > pageBytes) {
			if n == page { // the page is full: another one follows
				out.More, out.SizeLimited = true, memories < size
				break
			}
			n, used, memories = n+1, 0, 0
		}
		memories++
		used += b
		if n == page {
			out.Memories = append(out.Memories, mo)
		}
	}
	return nil, out, nil
}

// pageBytes bounds the memories of a memory_list page, and the hits of a
// memory_search, as JSON: a page or a search stops short of it (but holds
// at least one memory).
const pageBytes = 256 << 10

// jsonSize returns the length of v as JSON.
func jsonSize(v any) int {
	b, err := json.Marshal(v)
	if err != nil {
		return 0
	}
	return len(b)
}

// parseMode reads a search mode as the tools and query -mode name it.
func parseMode(s string) (cairn.QueryMode, bool) {
	switch s {
	case "", "vector":
		return cairn.VectorMode, true
	case "keyword":
		return cairn.KeywordMode, true
	case "hybrid":
		return cairn.HybridMode, true
	}
	return 0, false
}

// newID returns a random id of 16 hex digits.
func newID() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
