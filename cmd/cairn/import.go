// import.go holds "cairn import", which adds the JSON lines of a stream
// (see jsonl.go) to a file.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

func cmdImport(ctx context.Context, e *env, args []string) error {
	const synopsis = "FILE [-collection NAME] [-batch N] [-upsert] [-metric M] [-index K]"
	fs := newFlags(e, "import", synopsis)
	coll := fs.String("collection", "", "import into this collection: it names the items before any header line, and renames the stream's one collection")
	batch := fs.Int("batch", 1000, "items per transaction: each batch is stored all or nothing")
	upsert := fs.Bool("upsert", false, "replace items whose ids are already stored (default: an existing id is an error)")
	metric := fs.String("metric", "cosine", "metric of a collection created without a header line: cosine, dot or l2")
	index := fs.String("index", "auto", "index of a collection created without a header line: auto, flat or hnsw")
	quiet := fs.Bool("q", false, "do not report progress")
	var emf embedFlags
	emf.register(fs)
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	if *batch <= 0 {
		return usageError("-batch must be positive, got %d", *batch)
	}
	m, err := vector.ParseMetric(*metric)
	if err != nil {
		return usageError("-metric: %v", err)
	}
	kind, err := parseIndex(*index)
	if err != nil {
		return usageError("-index: %v", err)
	}
	emb, err := emf.embedder()
	if err != nil {
		return err
	}
	db, err := openDB(ctx, path, true, &cairn.Options{Embedder: emb})
	if err != nil {
		return err
	}
	im := &importer{
		ctx: ctx, db: db, e: e, batchSize: *batch, upsert: *upsert, rename: *coll,
		defaults: cairn.CollectionConfig{Metric: m, Index: kind}, quiet: *quiet, emb: emb,
	}
	err = im.run()
	if err != nil {
		err = &fileError{path, err}
	}
	return closeDB(path, db, err)
}

// importer reads a stream and stores it batch by batch.
type importer struct {
	ctx       context.Context
	db        *cairn.DB
	e         *env
	batchSize int
	upsert    bool
	rename    string                 // -collection
	defaults  cairn.CollectionConfig // for a collection without a header
	quiet     bool
	emb       cairn.Embedder // nil if none

	name    string // the collection of the items being read
	header  *cairn.CollectionConfig
	coll    *cairn.Collection // nil until the first batch of name
	headers int               // header lines seen

	pending   []cairn.Item
	firstLine int // line of pending[0]
	lastLine  int // line of the last pending item
	stored    int
	expired   int // items skipped because their expires_at had passed
	lastShown time.Time
}

// maxLine bounds a line: a 16,384-dimensional embedding as JSON is about
// 300 KB.
const maxLine = 64 << 20

func (im *importer) run() error {
	sc := bufio.NewScanner(im.e.stdin)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	im.name = im.rename
	n := 0
	for sc.Scan() {
		n++
		b := sc.Bytes()
		if len(trimSpace(b)) == 0 {
			continue
		}
		l, err := decodeLine(b)
		if err != nil {
			return fmt.Errorf("import: line %d: %w", n, err)
		}
		if l.Collection != nil {
			if err := im.flush(); err != nil {
				return err
			}
			im.headers++
			if im.rename != "" && im.headers > 1 {
				return fmt.Errorf("import: line %d: -collection renames one collection, and the stream holds more", n)
			}
			cfg, _ := l.Collection.config()
			im.name, im.header, im.coll = l.Collection.Name, &cfg, nil
			if im.rename != "" {
				im.name = im.rename
			}
			if err := im.collection(); err != nil { // an empty collection is imported too
				return fmt.Errorf("import: line %d: %w", n, err)
			}
			continue
		}
		if im.name == "" {
			return fmt.Errorf("import: line %d: an item before any collection header; name the collection with -collection", n)
		}
		if len(im.pending) == 0 {
			im.firstLine = n
		}
		if !l.ExpiresAt.IsZero() && !l.ExpiresAt.After(time.Now()) {
			im.expired++ // no read would return it
			continue
		}
		im.lastLine = n
		im.pending = append(im.pending, cairn.Item{ID: l.ID, Text: l.Text, Metadata: l.Metadata, Embedding: l.Embedding,
			CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, ExpiresAt: l.ExpiresAt})
		if len(im.pending) >= im.batchSize {
			if err := im.flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("import: line %d: %w", n+1, err)
	}
	if err := im.flush(); err != nil {
		return err
	}
	if !im.quiet {
		fmt.Fprintf(im.e.stderr, "cairn: imported %d items\n", im.stored)
		if im.expired > 0 {
			fmt.Fprintf(im.e.stderr, "cairn: skipped %d expired items\n", im.expired)
		}
	}
	return nil
}

// flush stores the pending batch, all or nothing.
func (im *importer) flush() error {
	if len(im.pending) == 0 {
		return nil
	}
	last := im.lastLine
	if err := im.collection(); err != nil {
		return fmt.Errorf("import: line %d: %w", im.firstLine, err)
	}
	var err error
	if im.upsert {
		err = im.coll.Upsert(im.ctx, im.pending...)
	} else {
		err = im.coll.Add(im.ctx, im.pending...)
	}
	if err != nil {
		return fmt.Errorf("import: lines %d-%d (not stored; %d items before them were): %w", im.firstLine, last, im.stored, err)
	}
	im.stored += len(im.pending)
	im.pending = im.pending[:0]
	if !im.quiet && time.Since(im.lastShown) > time.Second {
		fmt.Fprintf(im.e.stderr, "cairn: %d items stored (line %d)\n", im.stored, last)
		im.lastShown = time.Now()
	}
	return nil
}

// collection finds or creates the collection of the pending items. A
// header's configuration must agree with an existing collection's
// dimension and metric; without a header, a new collection takes the
// dimension of the first embedding.
func (im *importer) collection() error {
	if im.coll != nil {
		return nil
	}
	c, err := im.db.Collection(im.ctx, im.name)
	switch {
	case err == nil:
		if h := im.header; h != nil {
			got := c.Config()
			if got.Dim != h.Dim || got.Metric != h.Metric {
				return fmt.Errorf("collection %q exists with dim %d, %v; the stream has dim %d, %v", im.name, got.Dim, got.Metric, h.Dim, h.Metric)
			}
		}
	case errors.Is(err, vector.ErrNotFound):
		var cfg cairn.CollectionConfig
		if im.header != nil {
			cfg = *im.header
		} else {
			cfg = im.defaults
			first := &im.pending[0]
			if len(first.Embedding) == 0 && first.Text != "" && im.emb != nil {
				// The embedder's dimension: embed the first item now.
				vs, err := im.emb.Embed(im.ctx, []string{first.Text})
				if err != nil {
					return fmt.Errorf("item %q: embedding: %w", first.ID, err)
				}
				if len(vs) == 1 {
					first.Embedding = vs[0]
				}
			}
			cfg.Dim = len(first.Embedding)
			if cfg.Dim == 0 {
				return fmt.Errorf("collection %q does not exist and the first item %q has no embedding to take its dimension from (give -embed-url and -embed-model to embed its text)", im.name, im.pending[0].ID)
			}
		}
		if c, err = im.db.CreateCollection(im.ctx, im.name, cfg); err != nil {
			return err
		}
	default:
		return err
	}
	im.coll = c
	return nil
}

func trimSpace(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\r') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}
