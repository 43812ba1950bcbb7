package cairn

// This file holds the persistent store: Open, the persister of a DB's
// collections and the backend of one collection, over sqlitestore.

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// graphName is the name under which a collection's HNSW graph is saved.
const graphName = "hnsw"

// Open opens the store kept in the SQLite file at path, creating the file
// if it does not exist. The file has one writer at a time: a second Open
// of it, from this process or another, fails with an error wrapping
// [sqlitestore.ErrLocked] until the first is closed. A file that is not a
// cairn database, or is damaged, gives an error wrapping
// [vector.ErrCorrupt] and is left untouched; one this process may not
// write (read-only media, its permissions or its directory's), an error
// wrapping [sqlitestore.ErrNotWritable]; one with more than one name (hard
// links), in either mode, an error wrapping [sqlitestore.ErrHardLinked].
// A missing file beside which the write-ahead log of a database of its
// name is left (deleted without it) is not created: the error wraps
// [sqlitestore.ErrOrphanLog].
//
// With [Options.ReadOnly], Open never creates, writes or saves anything
// (but for SQLite's rebuild of the log's index, the -shm file, after a
// writer's crash): any number of such stores, in this process and others, can read the
// file beside its writer (or on read-only media). Each sees the file as
// of its Open; open it again to see what the writer committed since.
//
// Open loads every collection's vectors into memory; each collection's
// payload and index are loaded on its first use (see [DB.Collection]).
func Open(ctx context.Context, path string, o *Options) (*DB, error) {
	db := OpenMemory(o)
	so := sqliteOptions(o)
	sdb, err := sqlitestore.Open(ctx, path, so)
	if err != nil {
		return nil, fmt.Errorf("cairn: open: %w", err)
	}
	db.persist = &sqlPersister{db: sdb}
	db.readOnly = so != nil && so.ReadOnly
	return db, nil
}

// sqliteOptions returns the options of o's file, read-only if o says so
// in either place; nil for the defaults.
func sqliteOptions(o *Options) *sqlitestore.Options {
	if o == nil || (o.SQLite == nil && !o.ReadOnly) {
		return nil
	}
	var so sqlitestore.Options
	if o.SQLite != nil {
		so = *o.SQLite
	}
	so.ReadOnly = so.ReadOnly || o.ReadOnly
	return &so
}

// settings is the JSON form of a CollectionConfig's index choice, stored
// with the collection (the dimension and metric are stored by sqlitestore
// itself). Fields are only ever added.
type settings struct {
	Index         string `json:"index"`
	AutoThreshold int    `json:"auto_threshold"`
	HNSW          struct {
		M              int     `json:"m,omitempty"`
		EfConstruction int     `json:"ef_construction,omitempty"`
		EfSearch       int     `json:"ef_search,omitempty"`
		LevelMult      float64 `json:"level_mult,omitempty"`
		Seed           uint64  `json:"seed,omitempty"`
		TargetRecall   float64 `json:"target_recall,omitempty"`
		TargetK        int     `json:"target_k,omitempty"`
		Quantize       string  `json:"quantize,omitempty"` // "int8" or "binary"; absent for none
		QuantizeDims   int     `json:"quantize_dims,omitempty"`
	} `json:"hnsw"`
	QFlat struct {
		Rescore int     `json:"rescore,omitempty"`
		Sample  int     `json:"sample,omitempty"`
		Clip    float64 `json:"clip,omitempty"`
	} `json:"qflat,omitzero"`
	// AutoRoute is the verdict of an Auto collection with a recall
	// target's last measurement. It is state, not
	// configuration: written by the collection, never by encodeSettings.
	AutoRoute *savedRoute `json:"auto_route,omitempty"`
	TTL       string      `json:"ttl,omitempty"` // a time.Duration, as its String writes it
	History   *struct {
		For      string `json:"for,omitempty"` // a time.Duration
		Versions int    `json:"versions,omitempty"`
	} `json:"history,omitempty"`
}

// savedRoute is the way an Auto collection with a recall target measured
// as the fastest to the target, measured at Len items, on Queries
// recorded queries: a scan, kept until the collection holds Below items,
// or "hnsw" (Below 0), kept until it has halved (measuredRoute.holds).
type savedRoute struct {
	Index   string `json:"index"` // "flat", "qflat" or "hnsw"
	Below   int    `json:"below"`
	Len     int    `json:"len,omitempty"`
	Queries int    `json:"queries,omitempty"`
}

func encodeSettings(cfg CollectionConfig) ([]byte, error) {
	var s settings
	s.Index = cfg.Index.String()
	s.AutoThreshold = cfg.AutoThreshold
	h := &s.HNSW
	h.M, h.EfConstruction, h.EfSearch, h.LevelMult, h.Seed = cfg.HNSW.M, cfg.HNSW.EfConstruction, cfg.HNSW.EfSearch, cfg.HNSW.LevelMult, cfg.HNSW.Seed
	h.TargetRecall, h.TargetK = cfg.HNSW.TargetRecall, cfg.HNSW.TargetK
	if cfg.HNSW.Quantize != hnsw.QuantizeNone {
		h.Quantize = cfg.HNSW.Quantize.String()
	}
	h.QuantizeDims = cfg.HNSW.QuantizeDims
	q := &s.QFlat
	q.Rescore, q.Sample, q.Clip = cfg.QFlat.Rescore, cfg.QFlat.Train.Sample, cfg.QFlat.Train.Clip
	if cfg.TTL != 0 {
		s.TTL = cfg.TTL.String()
	}
	if h := cfg.KeepHistory; h != nil {
		s.History = &struct {
			For      string `json:"for,omitempty"`
			Versions int    `json:"versions,omitempty"`
		}{Versions: h.Versions}
		if h.For != 0 {
			s.History.For = h.For.String()
		}
	}
	return json.Marshal(s)
}

func decodeSettings(dim int, m vector.Metric, b []byte) (CollectionConfig, error) {
	s := settings{Index: "auto"} // a collection made by sqlitestore alone
	if len(b) == 0 {
		b = []byte("{}")
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return CollectionConfig{}, fmt.Errorf("%w: collection settings: %v", vector.ErrCorrupt, err)
	}
	cfg := CollectionConfig{Dim: dim, Metric: m, AutoThreshold: s.AutoThreshold}
	switch s.Index {
	case "auto":
		cfg.Index = Auto
	case "flat":
		cfg.Index = Flat
	case "hnsw":
		cfg.Index = HNSW
	case "qflat":
		cfg.Index = QFlat
	default:
		return CollectionConfig{}, fmt.Errorf("%w: collection settings: unknown index %q", vector.ErrCorrupt, s.Index)
	}
	h := s.HNSW
	cfg.HNSW = hnsw.Options{M: h.M, EfConstruction: h.EfConstruction, EfSearch: h.EfSearch, LevelMult: h.LevelMult, Seed: h.Seed,
		TargetRecall: h.TargetRecall, TargetK: h.TargetK}
	if h.Quantize != "" {
		qz, err := hnsw.ParseQuantize(h.Quantize)
		if err != nil || qz == hnsw.QuantizeNone {
			return CollectionConfig{}, fmt.Errorf("%w: collection settings: unknown quantization %q", vector.ErrCorrupt, h.Quantize)
		}
		cfg.HNSW.Quantize = qz
	}
	cfg.HNSW.QuantizeDims = h.QuantizeDims
	q := s.QFlat
	cfg.QFlat = qflat.Options{Rescore: q.Rescore, Train: quant.TrainOptions{Sample: q.Sample, Clip: q.Clip}}
	if s.TTL != "" {
		ttl, err := time.ParseDuration(s.TTL)
		if err != nil {
			return CollectionConfig{}, fmt.Errorf("%w: collection settings: ttl: %v", vector.ErrCorrupt, err)
		}
		cfg.TTL = ttl
	}
	if h := s.History; h != nil {
		cfg.KeepHistory = &HistoryPolicy{Versions: h.Versions}
		if h.For != "" {
			d, err := time.ParseDuration(h.For)
			if err != nil {
				return CollectionConfig{}, fmt.Errorf("%w: collection settings: history: %v", vector.ErrCorrupt, err)
			}
			cfg.KeepHistory.For = d
		}
	}
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return CollectionConfig{}, fmt.Errorf("%w: collection settings: %v", vector.ErrCorrupt, err)
	}
	return cfg, nil
}

// sqlPersister keeps a DB's collections in a sqlitestore.DB.
type sqlPersister struct {
	db *sqlitestore.DB
}

func (p *sqlPersister) create(ctx context.Context, name string, cfg CollectionConfig) (backend, error) {
	b, err := encodeSettings(cfg)
	if err != nil {
		return nil, err
	}
	c, err := p.db.CreateCollection(ctx, name, sqlitestore.CollectionConfig{Dim: cfg.Dim, Metric: cfg.Metric, Settings: b})
	if err != nil {
		return nil, err
	}
	return newSQLBackend(c), nil
}

func (p *sqlPersister) load(ctx context.Context, name string) (backend, CollectionConfig, error) {
	c, err := p.db.Collection(ctx, name)
	if err != nil {
		return nil, CollectionConfig{}, err
	}
	cfg, err := decodeSettings(c.Dim(), c.Metric(), c.Settings())
	if err != nil {
		return nil, CollectionConfig{}, err
	}
	return newSQLBackend(c), cfg, nil
}

func (p *sqlPersister) names(ctx context.Context) ([]string, error) {
	infos, err := p.db.Collections(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return names, nil
}

func (p *sqlPersister) drop(ctx context.Context, name string) error {
	return p.db.DropCollection(ctx, name)
}

func (p *sqlPersister) close() error { return p.db.Close() }

// sqlBackend keeps a collection in a sqlitestore.Collection: each write is
// one transaction holding the vectors and their payload together.
type sqlBackend struct {
	c *sqlitestore.Collection
	// writeItems is c.WriteItems, a seam through which a benchmark times
	// the store's own work within an Add.
	writeItems func(ctx context.Context, items []sqlitestore.Item, drop []vector.ID) error
}

func newSQLBackend(c *sqlitestore.Collection) *sqlBackend {
	return &sqlBackend{c: c, writeItems: c.WriteItems}
}

func (b *sqlBackend) past() pastStore { return sqlPast{b.c} }

func (b *sqlBackend) store() vector.Store { return b.c }

func (b *sqlBackend) file() *sqlitestore.Collection { return b.c }

func (b *sqlBackend) items(rows []row) ([]sqlitestore.Item, error) {
	items := make([]sqlitestore.Item, len(rows))
	for i, r := range rows {
		md, err := encodeMetadata(r.md)
		if err != nil {
			return nil, fmt.Errorf("%w: metadata of %q: %v", vector.ErrInvalidOptions, r.key, err)
		}
		items[i] = sqlitestore.Item{ID: r.id, Key: r.key, Vector: r.vec, Text: r.text, Metadata: md,
			Created: nullNanos(r.created), Updated: nullNanos(r.updated), Expires: nullNanos(r.expires)}
	}
	return items, nil
}

// write stores rows and deletes drop in one transaction, with prior;
// the vectors of drop stay in memory until evict.
func (b *sqlBackend) write(ctx context.Context, rows []row, drop []vector.ID, prior []prior) error {
	items, err := b.items(rows)
	if err != nil {
		return err
	}
	if len(prior) == 0 {
		return b.writeItems(ctx, items, drop)
	}
	ps := make([]sqlitestore.Prior, len(prior))
	for i, p := range prior {
		ps[i] = sqlitestore.Prior{Key: p.key, Until: p.until}
		if p.was != nil {
			ps[i].Was = p.was.id
		}
	}
	return b.c.WriteItemsKeeping(ctx, items, drop, ps)
}

func (b *sqlBackend) evict(_ context.Context, ids []vector.ID) error {
	return b.c.Evict(ids)
}

func (b *sqlBackend) volatile() bool { return false }

func (b *sqlBackend) load(ctx context.Context, fn func(row) error) error {
	return b.c.ForEachItem(ctx, func(it sqlitestore.Item) error {
		md, err := decodeMetadata(it.Metadata)
		if err != nil {
			return fmt.Errorf("item %q: %w", it.Key, err)
		}
		return fn(row{id: it.ID, key: it.Key, text: it.Text, md: md, created: nanosOf(it.Created), updated: nanosOf(it.Updated), expires: nanosOf(it.Expires)})
	})
}

// route returns the verdict saveRoute stored, or nil for none.
func (b *sqlBackend) route() *measuredRoute {
	var s settings
	if json.Unmarshal(b.c.Settings(), &s) != nil || s.AutoRoute == nil {
		return nil
	}
	sr := s.AutoRoute
	r := &measuredRoute{Route: Route{Len: sr.Len, Queries: sr.Queries}, next: sr.Below}
	switch sr.Index {
	case "flat":
		r.Index = Flat
	case "qflat":
		r.Index = QFlat
	case "hnsw":
		r.Index = HNSW
	default:
		return nil
	}
	return r
}

// saveRoute stores r with the collection's settings; they are written
// only if the verdict kept changes.
func (b *sqlBackend) saveRoute(ctx context.Context, r *measuredRoute) error {
	if old := b.route(); old != nil && *old == *r {
		return nil
	}
	var s map[string]json.RawMessage
	if err := json.Unmarshal(b.c.Settings(), &s); err != nil || s == nil {
		s = map[string]json.RawMessage{}
	}
	v, err := json.Marshal(savedRoute{Index: r.Index.String(), Below: r.next, Len: r.Len, Queries: r.Queries})
	if err != nil {
		return err
	}
	s["auto_route"] = v
	out, err := json.Marshal(s)
	if err != nil {
		return err
	}
	return b.c.SetSettings(ctx, out)
}

func (b *sqlBackend) saveGraph(ctx context.Context, g graph) error {
	return b.c.SaveIndex(ctx, graphName, g)
}

func (b *sqlBackend) loadGraph(ctx context.Context, g graph) error {
	return b.c.LoadIndex(ctx, graphName, g)
}

// close does nothing: the sqlitestore.DB closes its collections.
func (b *sqlBackend) close() error { return nil }

// nullNanos is the file's form of a time: NULL (not Valid) for noTime.
func nullNanos(ns int64) sql.NullInt64 { return sql.NullInt64{Int64: ns, Valid: ns != noTime} }

// nanosOf is a time as the file holds it: noTime for NULL. A stored 0 is
// the Unix epoch: earlier builds stored none as NULL, never as 0 (and
// lost an explicit epoch, which they took for none).
func nanosOf(n sql.NullInt64) int64 {
	if !n.Valid {
		return noTime
	}
	return n.Int64
}
