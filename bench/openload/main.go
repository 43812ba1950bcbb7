// Command openload measures how long the first use of a collection takes
// after an Open: the load of its rows, its saved graph and, with a recall
// target, the calibration its graph needs before it answers under the
// target (saved with the graph since format version 4 of package hnsw).
//
//	go run ./bench/openload -n 100000 -dim 768 -file /tmp/openload.cairn
//
// The first run writes the file (clustered vectors, an HNSW collection
// with TargetRecall, or with -index auto an Auto one, which measures its
// ways to the target and keeps the verdict; closed once the calibration
// covers every vector); later runs reuse it, so that two builds of cairn
// can be timed in turn on one file. A file saved by a build that keeps no calibration is
// loaded by one that does as an older file: its calibration runs again.
// Each round opens the file, loads the collection, reads its calibration
// and closes; the report gives every round's time and the median.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/vector"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "openload:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("openload", flag.ContinueOnError)
	n := fs.Int("n", 100000, "vectors in the collection, when the file is written")
	dim := fs.Int("dim", 768, "their dimension")
	target := fs.Float64("target", 0.95, "the collection's TargetRecall")
	file := fs.String("file", "", "the cairn file: written if absent, else reused (required)")
	rounds := fs.Int("rounds", 3, "opens timed")
	index := fs.String("index", "hnsw", "the collection's index when the file is written: hnsw, or auto (an Auto collection, which measures its ways to the target)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *file == "" {
		return errors.New("-file is required")
	}
	if _, err := os.Stat(*file); errors.Is(err, os.ErrNotExist) {
		kind := cairn.HNSW
		switch *index {
		case "hnsw":
		case "auto":
			kind = cairn.Auto
		default:
			return fmt.Errorf("-index %q: want hnsw or auto", *index)
		}
		if err := write(ctx, *file, *n, *dim, *target, kind); err != nil {
			return err
		}
	} else if err != nil {
		return err
	}
	var took []time.Duration
	for r := range *rounds {
		start := time.Now()
		db, err := cairn.Open(ctx, *file, nil)
		if err != nil {
			return err
		}
		c, err := db.Collection(ctx, "c")
		if err != nil {
			db.Close()
			return err
		}
		d := time.Since(start)
		info, err := c.Info(ctx)
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		took = append(took, d)
		cal := ""
		if info.Recall != nil && info.Recall.Route != nil {
			cal = fmt.Sprintf("route %v at %d; ", info.Recall.Route.Index, info.Recall.Route.Len)
		}
		if info.Recall != nil && info.Recall.Calibration != nil {
			k := info.Recall.Calibration
			cal += fmt.Sprintf("ef %d, exact %v, on %d vectors, took %v", k.Ef, k.Exact, k.Len, k.Took.Round(time.Millisecond))
		}
		fmt.Fprintf(out, "round %d: Open + Collection %v (%d items; calibration: %s)\n", r+1, d.Round(time.Millisecond), info.Count, cal)
	}
	slices.Sort(took)
	fmt.Fprintf(out, "median of %d: %v\n", len(took), took[len(took)/2].Round(time.Millisecond))
	return nil
}

// write makes the file: n clustered vectors of dimension dim in the HNSW
// collection "c" with recall target target, closed once calibrated on
// all of them, so that the graph saved at Close carries that calibration.
func write(ctx context.Context, path string, n, dim int, target float64, kind cairn.IndexKind) error {
	start := time.Now()
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		return err
	}
	defer db.Close()
	c, err := db.CreateCollection(ctx, "c", cairn.CollectionConfig{Dim: dim, Metric: vector.Cosine, Index: kind,
		HNSW: hnsw.Options{TargetRecall: target}})
	if err != nil {
		return err
	}
	// One Add: one batch, after which the graph calibrates on all of it
	// (a graph calibrates again only once it has doubled).
	ds := recall.Clustered(n, 0, dim, 1)
	items := make([]cairn.Item, n)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: ds.Base[i]}
	}
	if err := c.Add(ctx, items...); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Minute)
	for {
		if time.Now().After(deadline) {
			return errors.New("no calibration on all the vectors after 10 minutes")
		}
		info, err := c.Info(ctx)
		if err != nil {
			return err
		}
		if info.Recall != nil && info.Recall.Calibration != nil && info.Recall.Calibration.Len == n {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Printf("wrote %s: %d × %d-d, target %.2f, in %v\n", path, n, dim, target, time.Since(start).Round(time.Second))
	return nil
}
