// jsonl.go holds the JSON-lines format of export and import.
//
// A stream is a sequence of lines, each one JSON object. A line with a
// "collection" member starts a collection and describes it; every other
// line is an item of the collection last started. A header with a
// "tenant" member as well starts that tenant of the collection, whose
// items follow (export writes each collection's tenants after its own
// items; import takes a tenant of a collection the file holds or whose
// header came before, and creates the tenant if need be):
//
//	{"collection":{"name":"notes","dim":3,"metric":"cosine","index":"auto","auto_threshold":20000,"hnsw":{"m":16,"ef_construction":200,"ef_search":64},"ttl":"720h0m0s"}}
//	{"id":"n1","text":"the user likes Go","metadata":{"topic":"go"},"embedding":[0.6,0.8,0],"created_at":"2026-03-01T12:00:00Z","updated_at":"2026-03-02T08:30:00Z","expires_at":"2026-04-01T12:00:00Z"}
//
// Export gives the embeddings as they were written, each float32 in the
// shortest form that reads back to the same bits, and the item's times
// (RFC 3339, UTC; absent when the item has none), so that export | import
// | export gives the same bytes: import keeps the times it is given. An
// item whose expires_at has passed is skipped by import, and counted.
// Import ignores members it does not know, so streams written by later
// versions still import; blank lines are skipped. An item without an
// embedding is embedded from its text when import is given an embedder.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/vector"
)

// jsonItem is an item line.
type jsonItem struct {
	ID        string    `json:"id"`
	Text      string    `json:"text,omitempty"`
	Metadata  jsonMap   `json:"metadata,omitempty"`
	Embedding []float32 `json:"embedding,omitempty"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
	ExpiresAt time.Time `json:"expires_at,omitzero"`
}

// jsonMap is a JSON object whose numbers are read as written
// (json.Number) rather than as float64, so that an integer beyond 2^53
// reaches cairn exactly.
type jsonMap map[string]any

// UnmarshalJSON reads an object, or null for none.
func (m *jsonMap) UnmarshalJSON(b []byte) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return err
	}
	*m = v
	return nil
}

// MarshalJSON writes m with its numbers exact (see [exactJSON]).
func (m jsonMap) MarshalJSON() ([]byte, error) { return exactJSON(m) }

// outMap is metadata in an answer (a query's hits, MCP's memories),
// written with its numbers exact (see [exactJSON]) and read as
// encoding/json reads any map.
type outMap map[string]any

// MarshalJSON writes m with its numbers exact (see [exactJSON]).
func (m outMap) MarshalJSON() ([]byte, error) { return exactJSON(m) }

// exactJSON writes metadata as a JSON object whose numbers read back as
// the values they are: encoding/json would write a whole float64 beyond
// 2^53 (such as 2^60, which metadata holds as a float64) in its shortest
// digits, which import and filters read as another integer, or refuse.
func exactJSON(m map[string]any) ([]byte, error) {
	if m == nil {
		return []byte("null"), nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = metavalue.JSON(v)
	}
	return json.Marshal(out)
}

// jsonCollection describes a collection in its header line.
type jsonCollection struct {
	Name          string    `json:"name"`
	Dim           int       `json:"dim"`
	Metric        string    `json:"metric"`
	Index         string    `json:"index"`
	AutoThreshold int       `json:"auto_threshold,omitempty"`
	HNSW          *jsonHNSW `json:"hnsw,omitempty"`
	TTL           string    `json:"ttl,omitempty"` // a Go duration
	// History is the collection's KeepHistory; the versions it kept are
	// not exported.
	History *jsonHistory `json:"history,omitempty"`
}

// jsonHistory is a cairn.HistoryPolicy.
type jsonHistory struct {
	For      string `json:"for,omitempty"` // a Go duration
	Versions int    `json:"versions,omitempty"`
}

type jsonHNSW struct {
	M              int     `json:"m,omitempty"`
	EfConstruction int     `json:"ef_construction,omitempty"`
	EfSearch       int     `json:"ef_search,omitempty"`
	LevelMult      float64 `json:"level_mult,omitempty"`
	Seed           uint64  `json:"seed,omitempty"`
	TargetRecall   float64 `json:"target_recall,omitempty"`
	TargetK        int     `json:"target_k,omitempty"`
	Quantize       string  `json:"quantize,omitempty"` // "int8" or "binary"; absent for none
	QuantizeDims   int     `json:"quantize_dims,omitempty"`
}

// errLine marks a line that is not in the format.
var errLine = errors.New("bad line")

// line is one decoded line: a header (Collection set) or an item.
type line struct {
	Collection *jsonCollection `json:"collection"`
	// Tenant, in a header, names a tenant of the collection, whose items
	// follow; nil for the collection's own header.
	Tenant *string `json:"tenant"`
	jsonItem
}

// decodeLine decodes one line. An item must have an id and no tenant; a
// header must name a collection, describe a valid configuration and, if
// it names a tenant, give a name CreateTenant takes (not empty). Every
// error wraps errLine.
func decodeLine(b []byte) (*line, error) {
	var l line
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&l); err != nil {
		return nil, fmt.Errorf("%w: %v", errLine, err)
	}
	// More is false before a stray "}" or "]", which Token refuses.
	if _, err := d.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: more after the JSON value", errLine)
	}
	if l.Collection != nil {
		if l.Collection.Name == "" {
			return nil, fmt.Errorf("%w: collection without a name", errLine)
		}
		if _, err := l.Collection.config(); err != nil {
			return nil, fmt.Errorf("%w: collection %q: %v", errLine, l.Collection.Name, err)
		}
		if l.Tenant != nil && *l.Tenant == "" {
			return nil, fmt.Errorf("%w: collection %q: empty tenant name", errLine, l.Collection.Name)
		}
		return &l, nil
	}
	if l.ID == "" {
		return nil, fmt.Errorf("%w: item without an id", errLine)
	}
	if l.Tenant != nil {
		// Refused rather than read as the collection's own item.
		return nil, fmt.Errorf("%w: item %q has a tenant; a tenant's items follow its header", errLine, l.ID)
	}
	return &l, nil
}

// config returns the collection configuration the header describes.
func (h *jsonCollection) config() (cairn.CollectionConfig, error) {
	cfg := cairn.CollectionConfig{Dim: h.Dim, AutoThreshold: h.AutoThreshold}
	if h.Metric != "" {
		m, err := vector.ParseMetric(h.Metric)
		if err != nil {
			return cfg, err
		}
		cfg.Metric = m
	}
	k, err := parseIndex(h.Index)
	if err != nil {
		return cfg, err
	}
	cfg.Index = k
	if h.TTL != "" {
		if cfg.TTL, err = time.ParseDuration(h.TTL); err != nil {
			return cfg, fmt.Errorf("ttl: %v", err)
		}
	}
	if p := h.History; p != nil {
		cfg.KeepHistory = &cairn.HistoryPolicy{Versions: p.Versions}
		if p.For != "" {
			if cfg.KeepHistory.For, err = time.ParseDuration(p.For); err != nil {
				return cfg, fmt.Errorf("history: %v", err)
			}
		}
	}
	if p := h.HNSW; p != nil {
		cfg.HNSW = hnsw.Options{M: p.M, EfConstruction: p.EfConstruction, EfSearch: p.EfSearch, LevelMult: p.LevelMult, Seed: p.Seed,
			TargetRecall: p.TargetRecall, TargetK: p.TargetK}
		if cfg.HNSW.Quantize, err = hnsw.ParseQuantize(p.Quantize); err != nil {
			return cfg, err
		}
		cfg.HNSW.QuantizeDims = p.QuantizeDims
	}
	return cfg, cfg.Validate()
}

// header returns the header line of a collection.
func header(name string, cfg cairn.CollectionConfig) jsonCollection {
	h := jsonCollection{Name: name, Dim: cfg.Dim, Metric: cfg.Metric.String(), Index: cfg.Index.String()}
	if cfg.Index == cairn.Auto {
		h.AutoThreshold = cfg.AutoThreshold
	}
	o := cfg.HNSW
	p := jsonHNSW{M: o.M, EfConstruction: o.EfConstruction, EfSearch: o.EfSearch, LevelMult: o.LevelMult, Seed: o.Seed,
		TargetRecall: o.TargetRecall, TargetK: o.TargetK}
	if o.Quantize != hnsw.QuantizeNone {
		p.Quantize = o.Quantize.String()
	}
	p.QuantizeDims = o.QuantizeDims
	if p != (jsonHNSW{}) {
		h.HNSW = &p
	}
	if cfg.TTL != 0 {
		h.TTL = cfg.TTL.String()
	}
	if p := cfg.KeepHistory; p != nil {
		h.History = &jsonHistory{Versions: p.Versions}
		if p.For != 0 {
			h.History.For = p.For.String()
		}
	}
	return h
}

// parseIndex reads an index kind as IndexKind.String writes it; "" is
// Auto.
func parseIndex(s string) (cairn.IndexKind, error) {
	for _, k := range []cairn.IndexKind{cairn.Auto, cairn.Flat, cairn.HNSW, cairn.QFlat} {
		if s == k.String() {
			return k, nil
		}
	}
	if s == "" {
		return cairn.Auto, nil
	}
	return 0, fmt.Errorf("unknown index %q (want auto, flat, qflat or hnsw)", s)
}
