// This file holds the classes behind collections and indexes: creating,
// reading and deleting them, the cairn configuration kept in a class's
// description, and the metadata properties added as items need them.

package weaviate

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// class is a Weaviate class definition, as /v1/schema reads and writes it.
type class struct {
	Class               string         `json:"class"`
	Description         string         `json:"description,omitempty"`
	Vectorizer          string         `json:"vectorizer,omitempty"`
	VectorIndexType     string         `json:"vectorIndexType,omitempty"`
	VectorIndexConfig   map[string]any `json:"vectorIndexConfig,omitempty"`
	ReplicationConfig   map[string]any `json:"replicationConfig,omitempty"`
	ShardingConfig      map[string]any `json:"shardingConfig,omitempty"`
	InvertedIndexConfig map[string]any `json:"invertedIndexConfig,omitempty"`
	Properties          []property     `json:"properties"`
}

type property struct {
	Name              string   `json:"name"`
	DataType          []string `json:"dataType"`
	Tokenization      string   `json:"tokenization,omitempty"`
	IndexFilterable   *bool    `json:"indexFilterable,omitempty"`
	IndexSearchable   *bool    `json:"indexSearchable,omitempty"`
	IndexRangeFilters *bool    `json:"indexRangeFilters,omitempty"`
}

// stored is the cairn configuration of a class, kept as JSON in its
// description: Weaviate itself does not record the dimension, and this
// tells cairn's classes from others.
type stored struct {
	Cairn          int    `json:"cairn"` // format version, 1
	Kind           string `json:"kind"`  // "collection" or "index"
	Name           string `json:"name"`
	Dim            int    `json:"dim"`
	Metric         string `json:"metric"`
	Index          string `json:"index"`
	M              int    `json:"m,omitempty"`
	EfConstruction int    `json:"efConstruction,omitempty"`
	EfSearch       int    `json:"efSearch,omitempty"`
	AutoThreshold  int    `json:"autoThreshold,omitempty"` // kept for Config; Weaviate has no use for it
	// Made tells apart the classes a name has held: random, set when
	// the class is made, so that a handle to a deleted collection does
	// not write into one made again under its name.
	Made string `json:"made,omitempty"`
}

var metricNames = map[vector.Metric]string{vector.Cosine: "cosine", vector.Dot: "dot", vector.L2: "l2-squared"}

func metricOf(s string) (vector.Metric, bool) {
	for m, n := range metricNames {
		if n == s {
			return m, true
		}
	}
	return 0, false
}

var kindOf = map[string]cairn.IndexKind{"auto": cairn.Auto, "flat": cairn.Flat, "hnsw": cairn.HNSW, "qflat": cairn.QFlat}

func (s stored) config() (cairn.CollectionConfig, error) {
	m, ok := metricOf(s.Metric)
	k, kok := kindOf[s.Index]
	if s.Cairn != 1 || !ok || !kok || s.Dim <= 0 {
		return cairn.CollectionConfig{}, fmt.Errorf("%w: class description %+v", vector.ErrCorrupt, s)
	}
	cfg := cairn.CollectionConfig{Dim: s.Dim, Metric: m, Index: k, AutoThreshold: cairn.DefaultAutoThreshold}
	if s.AutoThreshold > 0 {
		cfg.AutoThreshold = s.AutoThreshold
	}
	cfg.HNSW.M, cfg.HNSW.EfConstruction, cfg.HNSW.EfSearch = s.M, s.EfConstruction, s.EfSearch
	// What newClass writes is valid; an M of 1, say, was not written by
	// it, and would reach Config.
	if err := cfg.Validate(); err != nil {
		return cairn.CollectionConfig{}, fmt.Errorf("%w: class description: %v", vector.ErrCorrupt, err)
	}
	return cfg, nil
}

// newClass returns the definition of the class for a collection or index
// (kind) named name with configuration cfg, which is valid.
func (db *DB) newClass(kind, name, cls string, cfg cairn.CollectionConfig) class {
	st := stored{Cairn: 1, Kind: kind, Name: name, Dim: cfg.Dim, Metric: metricNames[cfg.Metric], Index: cfg.Index.String(),
		M: cfg.HNSW.M, EfConstruction: cfg.HNSW.EfConstruction, EfSearch: cfg.HNSW.EfSearch, AutoThreshold: cfg.AutoThreshold,
		Made: rand.Text()}
	desc, _ := json.Marshal(st)
	vic := map[string]any{"distance": metricNames[cfg.Metric]}
	// Auto is Weaviate's HNSW too, which searches a small filtered set
	// exactly; QFlat its flat index, which is exact.
	typ := "hnsw"
	if cfg.Index == cairn.Flat || cfg.Index == cairn.QFlat {
		typ = "flat"
	} else {
		if cfg.HNSW.M > 0 {
			vic["maxConnections"] = cfg.HNSW.M
		}
		if cfg.HNSW.EfConstruction > 0 {
			vic["efConstruction"] = cfg.HNSW.EfConstruction
		}
		if cfg.HNSW.EfSearch > 0 {
			vic["ef"] = cfg.HNSW.EfSearch
		}
	}
	no, yes := false, true
	props := []property{
		{Name: propID, DataType: []string{"text"}, Tokenization: "field", IndexFilterable: &yes, IndexSearchable: &no},
		{Name: propText, DataType: []string{"text"}, IndexFilterable: &no, IndexSearchable: &no},
		{Name: propMeta, DataType: []string{"text"}, IndexFilterable: &no, IndexSearchable: &no},
	}
	if kind == "index" {
		props = nil // an index's objects are a vector and a UUID
	}
	return class{
		Class:               cls,
		Description:         string(desc),
		Vectorizer:          "none",
		VectorIndexType:     typ,
		VectorIndexConfig:   vic,
		ReplicationConfig:   map[string]any{"factor": db.opt.Replication, "asyncEnabled": db.opt.Replication > 1},
		ShardingConfig:      map[string]any{"desiredCount": db.opt.Shards},
		InvertedIndexConfig: map[string]any{"indexTimestamps": true},
		Properties:          props,
	}
}

// schemaChange sends a change of the schema, and sends it again (within
// the client's attempts and time bound) while a node refuses it for the
// state of its connections (schemaTransient): just after nodes
// restart, a node can refuse a class with 422 "rpc error: code = Canceled
// desc = grpc: the client connection is closing" while it replaces its
// connection to a peer. A change of class cls (empty for none) that the
// leader refuses for want of the class is sent again while a node's own
// schema holds it (client.leaderLacks); once none does, the error wraps
// vector.ErrNotFound.
func (db *DB) schemaChange(ctx context.Context, cls, method, path string, body any) (err error) {
	behind := false // the last refusal was a leader's behind on cls
	for attempt := range db.cl.opt.MaxAttempts {
		if attempt > 0 {
			if serr := sleep(ctx, backoff(attempt)); serr != nil {
				break
			}
			db.cl.retries.Add(1)
		}
		_, err = db.cl.call(ctx, method, path, body, nil)
		var ae *APIError
		if err == nil || !errors.As(err, &ae) || errors.Is(err, ErrUnavailable) {
			return err
		}
		if behind = cls != "" && lacksClass(ae.Message, cls); behind {
			if _, lerr := db.cl.leaderLacks(ctx, cls); errors.Is(lerr, vector.ErrNotFound) {
				return fmt.Errorf("%w: %w", lerr, err)
			}
			continue
		}
		if !schemaTransient(ae.Message) {
			return err
		}
	}
	if behind {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	return err
}

// lacksClass reports whether a refusal of a schema change, msg, says that
// the schema has no class cls (Weaviate v1.39: `class "C": not found`).
func lacksClass(msg, cls string) bool {
	return strings.Contains(msg, `"`+cls+`"`) && strings.Contains(msg, "not found")
}

// schemaTransient reports whether a node's refusal of a schema change
// describes the state of its connections to its peers, which passes,
// rather than the change: narrower than transient, whose words ("replica",
// "shard") also appear in refusals of a bad class, such as one asking for
// more replicas than there are nodes.
func schemaTransient(msg string) bool {
	m := strings.ToLower(msg)
	for _, s := range []string{
		"connection is closing", "connection refused", "connection reset", "broken pipe",
		"leader", "unavailable", "deadline exceeded",
	} {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

// createClass creates cls, or returns an error wrapping
// vector.ErrDuplicateID if it exists.
func (db *DB) createClass(ctx context.Context, c class) (err error) {
	db.shards.Delete(c.Class)
	db.shardNames.Delete(c.Class)
	db.factors.Delete(c.Class)
	err = db.schemaChange(ctx, "", http.MethodPost, "/v1/schema", c)
	defer func() {
		if err == nil {
			db.learn(c)
		}
	}()
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity && strings.Contains(ae.Message, "already exists") {
		// An earlier attempt may have landed unanswered, retried here or
		// by the client below: if the class has our description, whose
		// Made stamp no other call has, it is ours.
		if db.isOurs(ctx, c) {
			return nil
		}
		return fmt.Errorf("%w: %s", vector.ErrDuplicateID, ae.Message)
	}
	if errors.Is(err, ErrUnavailable) {
		// The create may have landed before an attempt timed out: if the
		// class is there now with our description, it is ours.
		if db.isOurs(ctx, c) {
			return nil
		}
	}
	return err
}

// lateLook bounds a look at the schema after a call's time ran out: the
// calls return within Options.Timeout and about this much.
const lateLook = 2 * time.Second

// isOurs reports whether class c is in the schema with c's description
// (made by an attempt of ours that was not answered), looking for at most
// lateLook even if ctx has ended. A node's own schema, which answers
// while the cluster elects a leader, is asked first: one that holds the
// description settles it.
func (db *DB) isOurs(ctx context.Context, c class) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), lateLook)
	defer cancel()
	var local class
	if _, err := db.cl.call(ctx, http.MethodGet, "/v1/schema/"+url.PathEscape(c.Class)+"?consistency=false", nil, &local); err == nil && local.Description == c.Description {
		return true
	}
	got, err := db.getClass(ctx, c.Class)
	return err == nil && got.Description == c.Description
}

// sameClass returns an error wrapping vector.ErrNotFound unless cls holds
// the kind ("collection" or "index") whose Made is made: see
// Collection.same. It asks a node's own schema first, which answers while
// the cluster elects a leader, and the leader's only if that one differs
// (a node that has not applied the class's making or deletion yet).
func (db *DB) sameClass(ctx context.Context, cls, kind, made string) error {
	is := func(c class) bool {
		st, _, ok := describe(c, kind)
		return ok && st.Made == made
	}
	var local class
	if _, err := db.cl.call(ctx, http.MethodGet, "/v1/schema/"+url.PathEscape(cls)+"?consistency=false", nil, &local); err == nil && is(local) {
		return nil
	}
	c, err := db.getClass(ctx, cls)
	if err != nil {
		return err
	}
	if !is(c) {
		return fmt.Errorf("%w: the %s in class %s was deleted (and made again)", vector.ErrNotFound, kind, cls)
	}
	return nil
}

// getClass reads cls from the leader's schema, or returns an error
// wrapping vector.ErrNotFound if it is gone (client.leaderLacks).
func (db *DB) getClass(ctx context.Context, cls string) (class, error) {
	var c class
	err := db.cl.classCall(ctx, cls, "/v1/schema/"+url.PathEscape(cls)+"?consistency=true", &c)
	if err == nil {
		db.learn(c)
	}
	return c, err
}

// learn keeps what the DB needs of c's definition: its shard count and
// its replication factor.
func (db *DB) learn(c class) {
	if n, ok := shardsOf(c); ok {
		db.shards.Store(c.Class, n)
	}
	if n, ok := count(c.ReplicationConfig["factor"]); ok {
		db.factors.Store(c.Class, n)
	}
}

// level is the consistency level of a request about cls that wants
// level want: none for a class of one replica, whose reads and writes
// Weaviate refuses to give a level ("Unknown argument consistencyLevel"
// in GraphQL).
func (db *DB) level(cls string, want Consistency) Consistency {
	if n, ok := db.factors.Load(cls); ok && n.(int) == 1 {
		return ""
	}
	return want
}

// levelParam is the query parameter of level l, after sep ("?" or "&");
// empty for none.
func levelParam(sep string, l Consistency) string {
	if l == "" {
		return ""
	}
	return sep + "consistency_level=" + string(l)
}

// classes lists every class of the cluster.
func (db *DB) classes(ctx context.Context) ([]class, error) {
	var s struct {
		Classes []class `json:"classes"`
	}
	_, err := db.cl.call(ctx, http.MethodGet, "/v1/schema?consistency=true", nil, &s)
	return s.Classes, err
}

func (db *DB) deleteClass(ctx context.Context, cls string) error {
	db.shards.Delete(cls)
	db.shardNames.Delete(cls)
	err := db.schemaChange(ctx, "", http.MethodDelete, "/v1/schema/"+url.PathEscape(cls), nil)
	return err
}

// describe reads the cairn configuration of c, and false if c is not a
// class of the given kind made by this package.
func describe(c class, kind string) (stored, cairn.CollectionConfig, bool) {
	var st stored
	if json.Unmarshal([]byte(c.Description), &st) != nil || st.Kind != kind {
		return st, cairn.CollectionConfig{}, false
	}
	cfg, err := st.config()
	return st, cfg, err == nil
}

// metaTypes returns the metadata properties of c: key → data type.
func metaTypes(c class) map[string]string {
	out := map[string]string{}
	for _, p := range c.Properties {
		enc, ok := strings.CutPrefix(p.Name, "m_")
		if !ok || len(p.DataType) != 1 {
			continue
		}
		if k, ok := decode(enc); ok {
			out[k] = p.DataType[0]
		}
	}
	return out
}

// addProperty adds the property of metadata key k with data type typ to
// cls. A property that exists already (another client added it) is fine.
func (db *DB) addProperty(ctx context.Context, cls, k, typ string) error {
	name, err := propName(k)
	if err != nil {
		return err
	}
	yes, no := true, false
	p := property{Name: name, DataType: []string{typ}, IndexFilterable: &yes, IndexSearchable: &no}
	if typ == typeText {
		p.Tokenization = "field"
	}
	if typ == typeNumber {
		p.IndexRangeFilters = &yes
	}
	err = db.schemaChange(ctx, cls, http.MethodPost, "/v1/schema/"+url.PathEscape(cls)+"/properties", p)
	// Another writer may have added it first: Weaviate v1.39 says "already
	// exists", or, for one added moments before, "conflict for property
	// ...: already in use or provided multiple times". The caller then
	// reads the schema again and checks the type.
	var ae *APIError
	if errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity &&
		(strings.Contains(ae.Message, "already exists") || strings.Contains(ae.Message, "already in use")) {
		return nil
	}
	return err
}
