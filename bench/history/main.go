// Command history measures what KeepHistory costs a collection in a
// file: the bytes each kept version adds to the file, the time of a
// Restore and of an AsOf of every item, and the latency of queries and of
// single upserts beside the same collection without history, taken in one
// process, alternating call by call.
//
//	go run ./bench/history -n 10000 -dir /tmp/history
//
// Two collections are filled alike (n items of -dim dimensions with a
// few hundred bytes of text and some metadata); then each item is
// upserted -versions times in both, so that the one with history keeps
// n × versions earlier versions.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/cairndb/cairn"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "history:", err)
		os.Exit(1)
	}
}

type config struct {
	n, dim, versions, queries, upserts int
	dir                                string
	seed                               uint64
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("history", flag.ContinueOnError)
	var c config
	fs.IntVar(&c.n, "n", 10000, "items in each collection")
	fs.IntVar(&c.dim, "dim", 768, "dimension of the embeddings")
	fs.IntVar(&c.versions, "versions", 2, "upserts of every item after it is added")
	fs.IntVar(&c.queries, "queries", 2000, "queries per collection")
	fs.IntVar(&c.upserts, "upserts", 300, "single upserts per collection, timed")
	fs.StringVar(&c.dir, "dir", "", "directory for the files (default: a temporary one)")
	fs.Uint64Var(&c.seed, "seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.dir == "" {
		d, err := os.MkdirTemp("", "cairn-history-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		c.dir = d
	}
	if err := os.MkdirAll(c.dir, 0o755); err != nil {
		return err
	}
	r := rand.New(rand.NewPCG(c.seed, 1))
	fmt.Fprintf(out, "history: %d items, %d-d, %d upserts each, %d queries\n", c.n, c.dim, c.versions, c.queries)

	// One file per side, so that each file's size is its side's alone.
	type side struct {
		name string
		db   *cairn.DB
		c    *cairn.Collection
		path string
	}
	var sides [2]side
	for i, name := range []string{"off", "on"} {
		path := filepath.Join(c.dir, name+".cairn")
		for _, f := range []string{path, path + "-wal", path + "-shm"} { // a run killed before left its log
			os.Remove(f)
		}
		db, err := cairn.Open(ctx, path, nil)
		if err != nil {
			return err
		}
		cfg := cairn.CollectionConfig{Dim: c.dim}
		if name == "on" {
			cfg.KeepHistory = &cairn.HistoryPolicy{}
		}
		coll, err := db.CreateCollection(ctx, "memories", cfg)
		if err != nil {
			return err
		}
		sides[i] = side{name, db, coll, path}
	}
	item := func(id, ver int) cairn.Item {
		emb := make([]float32, c.dim)
		for j := range emb {
			emb[j] = float32(r.NormFloat64())
		}
		return cairn.Item{ID: fmt.Sprint("m", id), Embedding: emb,
			Text:     fmt.Sprintf("memory %d, version %d: %s", id, ver, strings.Repeat("lorem ipsum ", 20)),
			Metadata: map[string]any{"kind": "fact", "version": ver, "importance": r.Float64()}}
	}
	fill := func(ver int) error {
		for start := 0; start < c.n; start += 500 {
			batch := make([]cairn.Item, 0, 500)
			for id := start; id < min(start+500, c.n); id++ {
				batch = append(batch, item(id, ver))
			}
			for _, s := range sides {
				if err := s.c.Upsert(ctx, batch...); err != nil {
					return err
				}
			}
		}
		return nil
	}
	start := time.Now()
	for v := 0; v <= c.versions; v++ {
		if err := fill(v); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "filled in %v\n", time.Since(start).Round(time.Millisecond))
	// Close (which checkpoints the log into the file) to weigh the
	// files, then open them again.
	var size [2]int64
	for i := range sides {
		s := &sides[i]
		if err := s.db.Close(); err != nil {
			return err
		}
		st, err := os.Stat(s.path)
		if err != nil {
			return err
		}
		size[i] = st.Size()
		if s.db, err = cairn.Open(ctx, s.path, nil); err != nil {
			return err
		}
		defer s.db.Close()
		if s.c, err = s.db.Collection(ctx, "memories"); err != nil {
			return err
		}
	}
	kept := int64(c.n * c.versions)
	per := float64(size[1]-size[0]) / float64(kept)
	fmt.Fprintf(out, "file: %s without history, %s with it, keeping %d versions: %.0f bytes a version (%.2f× the %d bytes of its embedding)\n",
		mib(size[0]), mib(size[1]), kept, per, per/float64(4*c.dim), 4*c.dim)

	// Queries as of now, alternating between the two sides.
	lat := [2][]time.Duration{}
	for q := range c.queries {
		emb := item(q, 0).Embedding
		for k := range 2 {
			i := (q + k) % 2
			t0 := time.Now()
			if _, err := sides[i].c.Query(ctx, emb, 10, nil); err != nil {
				return err
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	report(out, "query, top 10", lat)

	// Single upserts, alternating.
	lat = [2][]time.Duration{}
	for u := range c.upserts {
		it := item(r.IntN(c.n), c.versions+1+u)
		for k := range 2 {
			i := (u + k) % 2
			t0 := time.Now()
			if err := sides[i].c.Upsert(ctx, it); err != nil {
				return err
			}
			lat[i] = append(lat[i], time.Since(t0))
		}
	}
	report(out, "single upsert", lat)

	// AsOf and Restore of every item, on the side with history.
	h := sides[1].c
	at := time.Now()
	for start := 0; start < c.n; start += 500 { // every item changes after at
		batch := make([]cairn.Item, 0, 500)
		for id := start; id < min(start+500, c.n); id++ {
			batch = append(batch, item(id, 1000))
		}
		if err := h.Upsert(ctx, batch...); err != nil {
			return err
		}
	}
	t0 := time.Now()
	snap, err := h.AsOf(ctx, at)
	if err != nil {
		return err
	}
	asOf := time.Since(t0)
	n, _ := snap.Count(ctx)
	snap.Close()
	t0 = time.Now()
	res, err := h.Restore(ctx, at, nil)
	if err != nil {
		return err
	}
	restore := time.Since(t0)
	t0 = time.Now()
	if _, err := h.Restore(ctx, res.Undo, nil); err != nil {
		return err
	}
	undo := time.Since(t0)
	fmt.Fprintf(out, "AsOf of %d items (all changed since): %v; Restore of %d: %v; its undo: %v\n",
		n, asOf.Round(time.Millisecond), len(res.Put), restore.Round(time.Millisecond), undo.Round(time.Millisecond))
	return nil
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// report prints p50 and p95 of each side and their ratios.
func report(out io.Writer, what string, lat [2][]time.Duration) {
	q := func(ds []time.Duration, p float64) time.Duration {
		s := slices.Clone(ds)
		slices.Sort(s)
		return s[int(p*float64(len(s)-1))]
	}
	off50, on50 := q(lat[0], 0.5), q(lat[1], 0.5)
	off95, on95 := q(lat[0], 0.95), q(lat[1], 0.95)
	fmt.Fprintf(out, "%s: p50 %v without history, %v with (%.2f×); p95 %v, %v (%.2f×)\n", what,
		off50.Round(time.Microsecond), on50.Round(time.Microsecond), float64(on50)/float64(off50),
		off95.Round(time.Microsecond), on95.Round(time.Microsecond), float64(on95)/float64(off95))
}
