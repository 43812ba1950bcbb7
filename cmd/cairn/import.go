// import.go holds "cairn import", which adds the JSON lines of a stream
// (see jsonl.go) to a file: each collection's own items, and its tenants'
// (created if need be) under their headers.
//
// An import is all or nothing unless -batch is given, in one of two ways:
//
//   - Into a file that does not exist, it writes a new database under a
//     temporary name beside it (.NAME.import-RANDOM) as it reads, and
//     links it into place once the whole stream is in; on a failure it
//     removes it. A crash leaves at most that temporary file, never a
//     partial NAME.
//   - Into a file that exists, it first reads the whole stream, checking
//     every line and item against the file's collections and embedding
//     the items given only as text, into a spool file beside it (removed
//     from the directory as soon as it is made, where the system allows),
//     so that a bad line, an embedder error or an interrupt while reading
//     writes nothing. Then it writes the spooled items in transactions of
//     -batch's default size, noting for each what undoes it (the ids it
//     added to a collection or tenant that was there before; with
//     -upsert, the items it replaced). If a write fails (a duplicate id,
//     times out of order, the disk, an interrupt), it undoes its
//     transactions, the latest first, and deletes the tenants and
//     collections it created, the latest first; an item an -upsert
//     replaced is put back as it was, though it then comes last in its
//     collection's or tenant's order (export's). A crash while writing
//     leaves the transactions written so far: rerunning with -upsert
//     finishes the import.
//
// With -batch N, each batch of N items is committed as it is read (into
// the file itself, created when the first collection is), and a failure
// keeps the batches before it; the error says how many items they hold
// and from which line to rerun (with the header of the batch's collection
// or tenant, which the import created at that header if it was new).

package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"time"
	"unicode/utf8"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/metavalue"
	"github.com/cairndb/cairn/internal/symlink"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// importMode is how an import writes, and what a failure leaves.
type importMode int

const (
	staged  importMode = iota // the file exists: read and check all, then write, undoing on failure
	fresh                     // no file: write a temporary file as it reads, linked into place at the end
	batched                   // -batch: commit batch by batch into the file, keeping them on failure
)

// defaultBatch is the number of items a transaction holds without -batch.
const defaultBatch = 1000

const importHelp = `
Import adds the JSON lines on stdin (as cairn export writes them) to FILE,
creating FILE if it does not exist. A tenant's items, after a header with
"tenant", go to that tenant of the collection, created if need be; the
collection must be in FILE or started by a header before. It is all or
nothing: a failure (a bad line or item, a duplicate id, the embedder, the
disk, an interrupt) stores nothing and creates no collection or tenant. A
new FILE is written under a temporary name beside it (.FILE.import-*) and
renamed into place once complete: a failure leaves no file, a crash at most
the temporary one. An existing FILE is written only once the whole stream
has been read and checked (texts embedded), and what the import wrote is
taken out again if a write fails (tenants it created dropped, items it
replaced put back, last in the order of export and list, and their old
and undone versions in the history of a collection that keeps one); a
crash while writing leaves the part written so far (rerun with -upsert to
finish). With -upsert an id may come twice: the later line wins.

With -batch N, every N items are committed as they are read, and a failure
keeps those before it: the error says how many items are stored and from
which line to rerun.

Flags:
`

func cmdImport(ctx context.Context, e *env, args []string) error {
	const synopsis = "FILE [-collection NAME] [-batch N] [-upsert] [-metric M] [-index K]"
	fs := newFlags(e, "import", synopsis)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: cairn import %s\n%s", synopsis, importHelp)
		fs.PrintDefaults()
	}
	coll := fs.String("collection", "", "import into this collection: it names the items before any header line, and renames the stream's one collection")
	batch := fs.Int("batch", defaultBatch, "commit every `N` items as they are read, keeping them if a later line fails (without -batch: all or nothing, written N a transaction)")
	upsert := fs.Bool("upsert", false, "replace items whose ids are already stored (default: an existing id is an error)")
	metric := fs.String("metric", "cosine", "metric of a collection created without a header line: cosine, dot or l2")
	index := fs.String("index", "auto", "index of a collection created without a header line: auto, flat, qflat (int8-quantised flat) or hnsw")
	quiet := fs.Bool("q", false, "do not report progress")
	var emf embedFlags
	emf.register(fs)
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		// A dangling link: the new file goes where it points.
		if path, err = symlink.Target(path); err != nil {
			return err
		}
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
	im := &importer{
		ctx: ctx, e: e, path: path, batchSize: *batch, upsert: *upsert, rename: *coll,
		defaults: cairn.CollectionConfig{Metric: m, Index: kind}, quiet: *quiet, emb: emb,
		planned: map[string]cairn.CollectionConfig{}, newTenants: map[section]bool{},
	}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "batch" {
			im.mode = batched
		}
	})
	_, statErr := os.Stat(path)
	switch {
	case im.mode == batched:
	case errors.Is(statErr, os.ErrNotExist):
		im.mode = fresh
	default:
		im.mode = staged
	}
	if statErr == nil || im.mode == staged { // open it now: a lock or a bad file is reported first
		if err := im.open(path); err != nil {
			return &fileError{path, err}
		}
	}
	if err := sqlitestore.OrphanLog(path); err != nil { // made under another name, it would not meet Open's check
		return &fileError{path, err}
	}
	return im.run()
}

// importer reads a stream and stores it.
type importer struct {
	ctx       context.Context
	e         *env
	path      string // the file named on the command line
	mode      importMode
	batchSize int
	upsert    bool
	rename    string                 // -collection
	defaults  cairn.CollectionConfig // for a collection without a header
	quiet     bool
	emb       cairn.Embedder // nil if none

	db     *cairn.DB // nil until the file is opened
	dbPath string    // the path db has open: path, or fresh's temporary file

	// Reading.
	name       string                            // the collection of the items being read
	tenant     string                            // their tenant, "" for the collection's own
	header     *cairn.CollectionConfig           // its header's configuration, nil if none
	headerLine int                               // the line of its header, 0 if none
	cur        *target                           // nil until the collection is resolved
	planned    map[string]cairn.CollectionConfig // collections this import creates
	newTenants map[section]bool                  // tenants this import creates
	streamName string                            // with -collection, the collection the headers name
	headers    int                               // collection header lines seen
	pending    []cairn.Item
	lines      []int // lines[i] is the line of pending[i]
	read       int   // items read

	// Writing.
	dst           itemWriter // the collection or tenant being written
	created       []section  // collections and tenants this import created, in order
	stored        int        // items written by this import
	storedThrough int        // the line of the last item of the last batch written
	storedHeader  int        // the header line of that batch's collection or tenant, 0 if none
	expired       int        // items skipped because their expires_at had passed

	// Staging (mode staged): the spooled stream, then the undo records.
	spool     *spool
	spoolName string  // non-empty while the spool still has a name to remove
	spooled   int     // items spooled
	events    []event // collection starts, by position in the spool
	undoOffs  []int64 // offset of each undo record in the spool

	lastShown  time.Time
	shownCount int // the count in the last progress line, -1 if none
}

// target is a collection, or a tenant of one, the stream's items go to.
type target struct {
	name       string
	tenant     string                 // "" for the collection's own items
	cfg        cairn.CollectionConfig // the collection's
	create     bool                   // it does not exist: the import creates it
	ours       bool                   // the import created it (or will): no undo records needed
	headerLine int
}

// section names a collection (tenant "") or a tenant of one.
type section struct{ coll, tenant string }

// itemWriter is what an import writes to: a *cairn.Collection or a
// *cairn.Tenant.
type itemWriter interface {
	Add(ctx context.Context, items ...cairn.Item) error
	Upsert(ctx context.Context, items ...cairn.Item) error
	Items(ctx context.Context, o *cairn.ItemsOptions) iter.Seq2[cairn.Item, error]
	DeleteIfExists(ctx context.Context, ids ...string) (int, error)
}

// maxLine bounds a line: a 16,384-dimensional embedding as JSON is about
// 300 KB.
const maxLine = 64 << 20

// run imports the stream and reports the outcome.
func (im *importer) run() error {
	im.shownCount = -1
	err := im.readAll()
	if err == nil && im.mode == staged {
		err = im.writeSpool()
	}
	if err == nil {
		err = im.finish()
	}
	if err != nil {
		err = im.fail(err)
	}
	if im.spool != nil {
		im.spool.f.Close()
		if im.spoolName != "" {
			os.Remove(im.spoolName)
		}
	}
	if err != nil {
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

// readAll reads the stream, resolving each collection as it starts and
// handing its items on batch by batch.
func (im *importer) readAll() error {
	in := interruptible(im.ctx, im.e.stdin)
	defer in.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 1<<20), maxLine)
	im.name = im.rename
	n := 0
	for sc.Scan() {
		n++
		if err := im.ctx.Err(); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		b := sc.Bytes()
		if n == 1 {
			// A byte order mark, as some editors on Windows write.
			b = bytes.TrimPrefix(b, []byte("\uFEFF"))
		}
		if len(trimSpace(b)) == 0 {
			continue
		}
		l, err := decodeLine(b)
		if err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
		if l.Collection != nil {
			if err := im.flush(); err != nil {
				return err
			}
			if err := im.startSection(l, n); err != nil {
				return fmt.Errorf("line %d: %w", n, err)
			}
			continue
		}
		if im.name == "" {
			return fmt.Errorf("line %d: an item before any collection header; name the collection with -collection", n)
		}
		im.read++
		im.pending = append(im.pending, cairn.Item{ID: l.ID, Text: l.Text, Metadata: l.Metadata, Embedding: l.Embedding,
			CreatedAt: l.CreatedAt, UpdatedAt: l.UpdatedAt, ExpiresAt: l.ExpiresAt})
		im.lines = append(im.lines, n)
		if len(im.pending) >= im.batchSize {
			if err := im.flush(); err != nil {
				return err
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("line %d: longer than %d MiB, the most a line may hold", n+1, maxLine>>20)
		}
		return fmt.Errorf("line %d: %w", n+1, err)
	}
	return im.flush()
}

// interruptible returns r as a reader whose Read, waiting for input,
// ends with ctx's error once ctx is done: an interrupt stops an import
// whose input is idle (a terminal, a stalled pipe), where a Read of r
// itself would wait on. A goroutine copies r through a pipe; Close ends
// it, once its Read of r in flight returns.
func interruptible(ctx context.Context, r io.Reader) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		_, err := io.Copy(pw, r)
		pw.CloseWithError(err) // nil: io.EOF
	}()
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	return readCloser{pr, func() error { stop(); return pr.Close() }}
}

type readCloser struct {
	io.Reader
	close func() error
}

func (r readCloser) Close() error { return r.close() }

// startSection starts the collection or tenant whose header is l, on
// line n.
func (im *importer) startSection(l *line, n int) error {
	name := l.Collection.Name
	if l.Tenant == nil {
		im.headers++
	}
	if im.rename != "" {
		if im.headers > 1 || (im.streamName != "" && name != im.streamName) {
			return errors.New("-collection renames one collection, and the stream holds more")
		}
		im.streamName, name = name, im.rename
	}
	cfg, _ := l.Collection.config()
	im.name, im.tenant, im.header, im.headerLine, im.cur = name, "", &cfg, n, nil
	if l.Tenant != nil {
		im.tenant = *l.Tenant
	}
	return im.resolve() // an empty collection or tenant is imported too
}

// flush checks the pending items, embeds those given only as text, and
// hands them on: written (modes fresh and batched) or spooled (staged).
func (im *importer) flush() error {
	if len(im.pending) == 0 {
		return nil
	}
	items, lines := im.pending, im.lines
	im.pending, im.lines = im.pending[:0], im.lines[:0]
	if err := im.resolveFirst(items, lines); err != nil {
		return err
	}
	if err := im.embedTexts(items, lines); err != nil {
		return err
	}
	cfg := im.cur.cfg
	for i := range items {
		it := &items[i]
		if len(it.Embedding) == 0 {
			return fmt.Errorf("line %d: item %q has no embedding (give -embed-url and -embed-model to embed its text)", lines[i], it.ID)
		}
		if err := vector.Check(it.Embedding, cfg.Dim, cfg.Metric); err != nil {
			return fmt.Errorf("line %d: item %q: %w", lines[i], it.ID, err)
		}
		if _, err := metavalue.Map(it.Metadata); err != nil {
			return fmt.Errorf("line %d: item %q: %w", lines[i], it.ID, err)
		}
	}
	var err error
	if im.mode == staged {
		err = im.spoolItems(items, lines)
	} else {
		err = im.write(items, lines)
	}
	if err == nil && im.mode != batched {
		im.progress("cairn: %d items read (line %d)\n", im.read, lines[len(lines)-1])
	}
	return err
}

// resolveFirst resolves the collection of a batch that has no header
// before it; the first item names its dimension.
func (im *importer) resolveFirst(items []cairn.Item, lines []int) error {
	if im.cur != nil {
		return nil
	}
	if _, exists, _, err := im.lookup(im.name); err != nil || exists {
		if err == nil {
			err = im.resolve()
		}
		return wrapLine(lines[0], err)
	}
	first := &items[0]
	if len(first.Embedding) == 0 && first.Text != "" && im.emb != nil {
		if err := im.embedTexts(items[:1], lines[:1]); err != nil {
			return err
		}
	}
	if len(first.Embedding) == 0 {
		return fmt.Errorf("line %d: collection %q does not exist and the first item %q has no embedding to take its dimension from (give -embed-url and -embed-model to embed its text)", lines[0], im.name, first.ID)
	}
	return wrapLine(lines[0], im.resolve(len(first.Embedding)))
}

func wrapLine(line int, err error) error {
	if err != nil {
		return fmt.Errorf("line %d: %w", line, err)
	}
	return nil
}

// embedTexts embeds the items given only as text, in one call.
func (im *importer) embedTexts(items []cairn.Item, lines []int) error {
	var idx []int
	var texts []string
	for i, it := range items {
		if len(it.Embedding) == 0 && it.Text != "" {
			idx = append(idx, i)
			texts = append(texts, it.Text)
		}
	}
	if len(idx) == 0 || im.emb == nil {
		return nil
	}
	vs, err := im.emb.Embed(im.ctx, texts)
	if err == nil && len(vs) != len(texts) {
		err = fmt.Errorf("the embedder returned %d vectors for %d texts", len(vs), len(texts))
	}
	if err != nil {
		return fmt.Errorf("line %d: item %q: embedding: %w", lines[idx[0]], items[idx[0]].ID, err)
	}
	for j, i := range idx {
		items[i].Embedding = vs[j]
	}
	return nil
}

// lookup finds the collection name among those the import creates and
// those in the file.
func (im *importer) lookup(name string) (cfg cairn.CollectionConfig, exists, ours bool, err error) {
	if cfg, ok := im.planned[name]; ok {
		return cfg, true, true, nil
	}
	if im.db == nil {
		return cfg, false, false, nil
	}
	c, err := im.db.Collection(im.ctx, name)
	switch {
	case err == nil:
		return c.Config(), true, false, nil
	case errors.Is(err, vector.ErrNotFound):
		return cfg, false, false, nil
	}
	return cfg, false, false, err
}

// tenantExists reports whether the tenant s is among those the import
// creates or in the file; ours says the import creates its collection,
// which then has no other.
func (im *importer) tenantExists(s section, ours bool) (bool, error) {
	if im.newTenants[s] {
		return true, nil
	}
	if ours || im.db == nil {
		return false, nil
	}
	c, err := im.db.Collection(im.ctx, s.coll)
	if err != nil {
		return false, err
	}
	_, err = c.Tenant(im.ctx, s.tenant)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, vector.ErrNotFound):
		return false, nil
	}
	return false, err
}

// resolve settles the collection of the items that follow: an existing one
// (which a header must agree with in dimension and metric) or a new one
// with the header's configuration, or the defaults and dim (the first
// item's dimension) without one. For a tenant's header, the collection
// must exist or be started earlier in the stream, and the tenant is
// created if need be. It then starts it: created or opened now, or noted
// in the spool.
func (im *importer) resolve(dim ...int) error {
	cfg, exists, ours, err := im.lookup(im.name)
	if err != nil {
		return err
	}
	h := im.header
	if h != nil && h.Metric == 0 {
		h.Metric = vector.Cosine // the default, as CreateCollection fills it in
	}
	switch {
	case im.tenant != "" && !exists:
		return fmt.Errorf("tenant %q: collection %q is not in the file, and no header before starts it", im.tenant, im.name)
	case exists && h != nil && (cfg.Dim != h.Dim || cfg.Metric != h.Metric):
		return fmt.Errorf("collection %q exists with dim %d, %v; the stream has dim %d, %v", im.name, cfg.Dim, cfg.Metric, h.Dim, h.Metric)
	case exists:
	case h != nil:
		cfg = *h
	default:
		cfg = im.defaults
		cfg.Dim = dim[0]
	}
	t := &target{name: im.name, cfg: cfg, create: !exists, ours: ours || !exists, headerLine: im.headerLine}
	if t.create {
		im.planned[t.name] = cfg
	}
	if im.tenant != "" {
		s := section{im.name, im.tenant}
		tExists, err := im.tenantExists(s, ours)
		if err != nil {
			return fmt.Errorf("tenant %q of %q: %w", im.tenant, im.name, err)
		}
		t.tenant, t.create, t.ours = im.tenant, !tExists, ours || im.newTenants[s] || !tExists
		if t.create {
			im.newTenants[s] = true
		}
	}
	im.cur = t
	if im.mode == staged {
		im.events = append(im.events, event{at: im.spooled, t: t, line: im.headerLine})
		return nil
	}
	return im.start(t)
}

// start creates or opens the collection or tenant t in the file, opening
// the file first if need be.
func (im *importer) start(t *target) error {
	if err := im.ensureOpen(); err != nil {
		return err
	}
	var c *cairn.Collection
	var err error
	if t.create && t.tenant == "" {
		c, err = im.db.CreateCollection(im.ctx, t.name, t.cfg)
		if err == nil {
			im.created = append(im.created, section{coll: t.name})
		}
	} else {
		c, err = im.db.Collection(im.ctx, t.name)
	}
	if err != nil {
		return err
	}
	if t.tenant == "" {
		im.dst = c
		return nil
	}
	var tn *cairn.Tenant
	if t.create {
		tn, err = c.CreateTenant(im.ctx, t.tenant)
		if err == nil {
			im.created = append(im.created, section{t.name, t.tenant})
		}
	} else {
		tn, err = c.Tenant(im.ctx, t.tenant)
	}
	if err != nil {
		return err
	}
	im.dst = tn
	return nil
}

// ensureOpen opens the file to write if it is not open yet: the file
// itself, or in mode fresh a temporary file beside it.
func (im *importer) ensureOpen() error {
	if im.db != nil {
		return nil
	}
	p := im.path
	if im.mode == fresh {
		var rnd [8]byte
		rand.Read(rnd[:])
		p = beside(im.path, ".import-"+hex.EncodeToString(rnd[:]))
	}
	return im.open(p)
}

// beside returns the name of a temporary file beside the file at path:
// "." + its name + suffix, its name cut short where that and SQLite's
// "-journal" after it would not fit in a directory entry (255 bytes).
func beside(path, suffix string) string {
	base := filepath.Base(path)
	if room := 255 - len(".") - len(suffix) - len("-journal"); len(base) > room {
		for room > 0 && !utf8.RuneStart(base[room]) {
			room-- // not in the middle of a character
		}
		base = base[:room]
	}
	return filepath.Join(filepath.Dir(path), "."+base+suffix)
}

// open opens the file p, creating it if need be. Items reach it embedded:
// it needs no embedder.
func (im *importer) open(p string) error {
	db, err := cairn.Open(im.ctx, p, nil)
	if err != nil {
		return err
	}
	im.db, im.dbPath = db, p
	return nil
}

// write stores items (read from lines) in the current collection or
// tenant, in one transaction but where -upsert meets an id twice: the
// later line wins, as it does when the two are in different batches (one
// Upsert refuses an id twice), so the batch is written in two.
func (im *importer) write(items []cairn.Item, lines []int) error {
	if im.upsert {
		seen := make(map[string]bool, len(items))
		for i, it := range items {
			if seen[it.ID] {
				if err := im.writeBatch(items[:i], lines[:i]); err != nil {
					return err
				}
				return im.write(items[i:], lines[i:])
			}
			seen[it.ID] = true
		}
	}
	return im.writeBatch(items, lines)
}

// writeBatch stores items (read from lines) in the current collection or
// tenant in one transaction, skipping those already expired. In mode
// staged, it first notes in the spool how to undo the batch.
func (im *importer) writeBatch(items []cairn.Item, lines []int) error {
	now := time.Now()
	live := items[:0]
	for _, it := range items {
		if !it.ExpiresAt.IsZero() && !it.ExpiresAt.After(now) {
			im.expired++ // no read would return it
			continue
		}
		live = append(live, it)
	}
	first, last := lines[0], lines[len(lines)-1]
	var undo []byte
	if im.mode == staged && !im.cur.ours && len(live) > 0 {
		u, err := im.undoOf(live)
		if err == nil {
			undo, err = undoLine(u)
		}
		if err != nil {
			return fmt.Errorf("lines %d-%d: %w", first, last, err)
		}
	}
	var err error
	switch {
	case len(live) == 0:
	case im.upsert:
		err = im.dst.Upsert(im.ctx, live...)
	default:
		err = im.dst.Add(im.ctx, live...)
	}
	if err != nil {
		if first == last {
			return fmt.Errorf("line %d: %w", first, err)
		}
		return fmt.Errorf("lines %d-%d: %w", first, last, err)
	}
	if undo != nil {
		if err := im.appendUndo(undo); err != nil {
			im.stored += len(live) // and noted: the undo takes it out
			return fmt.Errorf("lines %d-%d: spool: %w", first, last, err)
		}
	}
	im.stored += len(live)
	im.storedThrough, im.storedHeader = last, im.cur.headerLine
	switch im.mode {
	case batched:
		im.progress("cairn: %d items stored (through line %d)\n", im.stored, last)
	case staged:
		im.progress("cairn: %d of %d items written\n", im.stored, im.spooled)
	}
	return nil
}

// progress reports, at most once a second, the count that is the first
// argument of a.
func (im *importer) progress(format string, a ...any) {
	if im.quiet || time.Since(im.lastShown) < time.Second {
		return
	}
	fmt.Fprintf(im.e.stderr, format, a...)
	im.lastShown, im.shownCount = time.Now(), a[0].(int)
}

// finish closes the file; in mode fresh it links the new file into place.
func (im *importer) finish() error {
	if err := im.ensureOpen(); err != nil { // an empty stream makes an empty file
		return err
	}
	db := im.db
	im.db = nil
	if err := db.Close(); err != nil {
		return &closedError{err}
	}
	if im.mode != fresh {
		return nil
	}
	tmp := im.dbPath
	err := os.Link(tmp, im.path)
	if err != nil && !errors.Is(err, os.ErrExist) {
		// No hard links on this file system: rename, unless the name has
		// been taken since.
		if _, serr := os.Lstat(im.path); errors.Is(serr, os.ErrNotExist) {
			err = os.Rename(tmp, im.path)
		}
	}
	if errors.Is(err, os.ErrExist) {
		err = errors.New("the file was created by another program during the import")
	}
	if err != nil {
		return err
	}
	removeDB(tmp)
	if d, err := os.Open(filepath.Dir(im.path)); err == nil { // make the new name durable
		d.Sync()
		d.Close()
	}
	return nil
}

// closedError marks an error closing the file after a complete import.
type closedError struct{ err error }

func (e *closedError) Error() string { return e.err.Error() }
func (e *closedError) Unwrap() error { return e.err }

// removeDB removes the database file p and the files SQLite keeps beside
// it.
func removeDB(p string) error {
	var first error
	for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
		if err := os.Remove(p + suffix); err != nil && !errors.Is(err, os.ErrNotExist) && first == nil {
			first = err
		}
	}
	return first
}

// fail puts things back as far as the mode promises after err, closes
// the file, and returns the error to report: err, with what it left.
func (im *importer) fail(err error) error {
	var what string
	switch im.mode {
	case batched:
		if !im.quiet && im.shownCount >= 0 && im.shownCount != im.stored {
			fmt.Fprintf(im.e.stderr, "cairn: %d items stored (through line %d)\n", im.stored, im.storedThrough)
		}
		switch {
		case im.stored == 0:
			what = "0 items stored before it; fix it and rerun"
		case im.storedHeader > 0:
			r := im.storedThrough + 1
			what = fmt.Sprintf("%d items stored before it; fix it and rerun with line %d and the lines from line %d on, e.g. sed -n '%dp;%d,$p'",
				im.stored, im.storedHeader, r, im.storedHeader, r)
		default:
			r := im.storedThrough + 1
			what = fmt.Sprintf("%d items stored before it; fix it and rerun from line %d, e.g. tail -n +%d", im.stored, r, r)
		}
	case fresh:
		what = "nothing stored"
		if im.db != nil {
			im.db.Close()
			im.db = nil
		}
		if im.dbPath != "" {
			if rerr := removeDB(im.dbPath); rerr != nil {
				what = fmt.Sprintf("nothing stored, but the temporary file %s could not be removed: %v", im.dbPath, rerr)
			}
		}
	case staged:
		what = "nothing stored"
		if im.db != nil {
			if uerr := im.undo(); uerr != nil {
				what = fmt.Sprintf("%d items stored before it, and taking them out failed: %v; rerun with -upsert to finish the import", im.stored, oneLine(uerr))
			} else if im.stored > 0 {
				what = fmt.Sprintf("nothing stored: the %d items written before it were taken out", im.stored)
			}
		}
	}
	if im.db != nil {
		if cerr := im.db.Close(); cerr != nil && im.mode != fresh {
			what += fmt.Sprintf("; closing the file: %v", cerr)
		}
		im.db = nil
	}
	var ce *closedError
	if errors.As(err, &ce) && im.mode != fresh {
		// A complete import that could not be closed: its commits are in
		// the file's log, which the next Open reads.
		return &fileError{im.path, fmt.Errorf("import: all %d items are stored, but closing the file failed: %w", im.stored, err)}
	}
	return &fileError{im.path, fmt.Errorf("import: %w (%s)", err, what)}
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
