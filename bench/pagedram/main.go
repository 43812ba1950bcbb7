// Command pagedram measures an HNSW index whose store's float32 vectors
// are paged (sqlitestore.Options.PageVectorsIn) against the same index
// with every vector in memory: the process's memory, and recall@10 and
// query speed with the page cache cold and warm. The graph walks int8
// codes (rescoring its finalists from the store), or with -quantize none
// the store's float32 vectors, in place.
//
//	go run ./bench/pagedram build -data DIR/NAME -db FILE
//	go run ./bench/pagedram query -data DIR/NAME -db FILE [-pages DIR]
//
// build stores DIR/NAME.base.fvecs in a SQLite file (item i+1 is base
// vector i) and saves an HNSW index of it there (one per -quantize). query opens the
// file, with its vectors paged in -pages if given, loads the index, and
// reports the resident memory (anonymous and file-backed, from
// /proc/self/status) after the load and after paging the vectors out;
// then, for each ef, one pass over DIR/NAME.query.fvecs right after
// paging out (cold) and -passes passes after it (warm), with the recall
// against DIR/NAME.gt.ivecs. The metric is DIR/NAME.metric's. Run each
// query in a process of its own, so that the memory figures are its own;
// bench/pagedram.sh runs the whole comparison beside hnswlib.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/recall"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "pagedram:", err)
		os.Exit(1)
	}
}

type config struct {
	data, db, pages string
	m, efc, passes  int
	efs             []int
	quantize        hnsw.Quantize
}

// indexName is the name the index is saved under.
func (c config) indexName() string { return "hnsw-" + c.quantize.String() }

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "build" && args[0] != "query") {
		return fmt.Errorf("usage: pagedram build|query -data DIR/NAME -db FILE [flags]")
	}
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	var c config
	var efs string
	fs.StringVar(&c.data, "data", "", "DIR/NAME of NAME.{base,query}.fvecs, NAME.gt.ivecs and NAME.metric")
	fs.StringVar(&c.db, "db", "", "the SQLite file")
	fs.StringVar(&c.pages, "pages", "", "query: page the vectors in this directory (default: in memory)")
	fs.IntVar(&c.m, "m", 16, "build: M")
	fs.IntVar(&c.efc, "efc", 200, "build: efConstruction")
	fs.IntVar(&c.passes, "passes", 3, "query: warm passes per ef")
	fs.StringVar(&efs, "ef", "10,16,24,32,48,64,96,128,200", "query: the ef values")
	q := fs.String("quantize", "int8", "what the graph walks: int8, binary (1-bit codes) or none (float32)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	qz, err := hnsw.ParseQuantize(*q)
	if err != nil {
		return fmt.Errorf("bad -quantize: %w", err)
	}
	c.quantize = qz
	if c.data == "" || c.db == "" {
		return fmt.Errorf("-data and -db are required")
	}
	for _, f := range strings.Split(efs, ",") {
		ef, err := strconv.Atoi(f)
		if err != nil || ef < 1 {
			return fmt.Errorf("bad ef %q", f)
		}
		c.efs = append(c.efs, ef)
	}
	m, err := metric(c.data)
	if err != nil {
		return err
	}
	if args[0] == "build" {
		return build(ctx, c, m, out)
	}
	return query(ctx, c, out)
}

func metric(data string) (vector.Metric, error) {
	b, err := os.ReadFile(data + ".metric")
	if err != nil {
		return 0, err
	}
	return recall.MetricOf(string(b))
}

func build(ctx context.Context, c config, m vector.Metric, out io.Writer) error {
	base, err := recall.LoadVectors(c.data + ".base.fvecs")
	if err != nil {
		return err
	}
	db, err := sqlitestore.Open(ctx, c.db, &sqlitestore.Options{Sync: sqlitestore.SyncNormal})
	if err != nil {
		return err
	}
	defer db.Close()
	coll, err := db.CreateCollection(ctx, "v", sqlitestore.CollectionConfig{Dim: len(base[0]), Metric: m})
	if errors.Is(err, vector.ErrDuplicateID) {
		// Built before with the other code: the items are there.
		coll, err = db.Collection(ctx, "v")
	}
	if err != nil {
		return err
	}
	ids := make([]vector.ID, len(base))
	for i := range ids {
		ids[i] = vector.ID(i + 1)
	}
	for lo := coll.Len(); lo < len(base); lo += 1000 {
		items := make([]sqlitestore.Item, 0, 1000)
		for i := lo; i < min(lo+1000, len(base)); i++ {
			items = append(items, sqlitestore.Item{ID: ids[i], Vector: base[i]})
		}
		if err := coll.PutItems(ctx, items); err != nil {
			return err
		}
	}
	ix, err := hnsw.New(coll, &hnsw.Options{M: c.m, EfConstruction: c.efc, Quantize: c.quantize})
	if err != nil {
		return err
	}
	start := time.Now()
	if err := ix.Track(ctx, ids); err != nil {
		return err
	}
	took := time.Since(start)
	if err := coll.SaveIndex(ctx, c.indexName(), ix); err != nil {
		return err
	}
	fmt.Fprintf(out, "built %d × %d (%v) M=%d efC=%d %v in %.1f s\n", len(base), len(base[0]), m, c.m, c.efc, c.quantize, took.Seconds())
	return db.Close()
}

// memory is the resident memory of the process, from /proc/self/status.
type memory struct {
	Anon, File int64 // RssAnon and RssFile, bytes
	Peak       int64 // VmHWM, bytes
}

func resident() memory {
	var m memory
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "RssAnon:":
			m.Anon = kb << 10
		case "RssFile:", "RssShmem:":
			m.File += kb << 10
		case "VmHWM:":
			m.Peak = kb << 10
		}
	}
	return m
}

// settle collects the garbage and gives the freed memory back to the
// system before reading the resident memory, so that it counts what is
// live.
func settle() memory {
	runtime.GC()
	debug.FreeOSMemory()
	return resident()
}

// line is one JSON line of the query report.
type line struct {
	Paged       bool    `json:"paged"`
	Quantize    string  `json:"quantize"`
	Phase       string  `json:"phase"` // opened, paged out, cold, warm, end
	Ef          int     `json:"ef,omitempty"`
	Recall      float64 `json:"recall,omitempty"`
	P50us       float64 `json:"p50_us,omitempty"`
	P95us       float64 `json:"p95_us,omitempty"`
	QPS         float64 `json:"qps,omitempty"`
	RSSAnon     int64   `json:"rss_anon"`
	RSSFile     int64   `json:"rss_file"`
	StoreBytes  int64   `json:"store_resident_bytes"`
	GraphBytes  int64   `json:"graph_bytes"`
	OpenSeconds float64 `json:"open_s,omitempty"`
	// BaseRSS is the process's resident memory before the open (the
	// queries and the runtime), which the other figures leave out.
	BaseRSS int64 `json:"base_rss"`
	// PeakRSS is the highest resident memory so far, less BaseRSS.
	PeakRSS int64 `json:"peak_rss"`
	// Graph is the graph's own count of its bytes, by what holds them.
	Graph *hnsw.Memory `json:"graph,omitempty"`
}

func query(ctx context.Context, c config, out io.Writer) error {
	qs, err := recall.LoadVectors(c.data + ".query.fvecs")
	if err != nil {
		return err
	}
	gt, err := recall.LoadIvecs(c.data + ".gt.ivecs")
	if err != nil {
		return err
	}
	before := settle()
	start := time.Now()
	db, err := sqlitestore.Open(ctx, c.db, &sqlitestore.Options{ReadOnly: true, PageVectorsIn: c.pages})
	if err != nil {
		return err
	}
	defer db.Close()
	coll, err := db.Collection(ctx, "v")
	if err != nil {
		return err
	}
	ix, err := hnsw.New(coll, &hnsw.Options{Quantize: c.quantize})
	if err != nil {
		return err
	}
	if err := coll.LoadIndex(ctx, c.indexName(), ix); err != nil {
		return err
	}
	open := time.Since(start)
	paged := c.pages != ""
	enc := json.NewEncoder(out)
	emit := func(l line) error {
		now := settle()
		l.Quantize = c.quantize.String()
		l.Paged, l.RSSAnon, l.RSSFile = paged, now.Anon-before.Anon, now.File-before.File
		l.BaseRSS = before.Anon + before.File
		l.PeakRSS = now.Peak - l.BaseRSS
		l.StoreBytes, l.GraphBytes = coll.Memory().Resident(), ix.Stats().Memory.Total()
		return enc.Encode(l)
	}
	gm := ix.Stats().Memory
	if err := emit(line{Phase: "opened", OpenSeconds: open.Seconds(), Graph: &gm}); err != nil {
		return err
	}
	if err := coll.PageOut(); err != nil {
		return err
	}
	if err := emit(line{Phase: "paged out"}); err != nil {
		return err
	}
	const k = 10
	pass := func(ef int) (lat []time.Duration, rec float64, err error) {
		lat = make([]time.Duration, len(qs))
		for i, q := range qs {
			t0 := time.Now()
			res, err := ix.SearchWith(ctx, q, k, &hnsw.SearchOptions{Ef: max(ef, k)})
			lat[i] = time.Since(t0)
			if err != nil {
				return nil, 0, err
			}
			for j := range res {
				res[j].ID-- // item i+1 is base vector i
			}
			rec += recall.At(res, gt[i], k)
		}
		return lat, rec / float64(len(qs)), nil
	}
	report := func(phase string, ef int, lat []time.Duration, rec float64) error {
		slices.Sort(lat)
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		us := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }
		return emit(line{Phase: phase, Ef: ef, Recall: rec, P50us: us(lat[len(lat)/2]), P95us: us(lat[len(lat)*95/100]),
			QPS: float64(len(lat)) / sum.Seconds()})
	}
	for _, ef := range c.efs {
		if err := coll.PageOut(); err != nil {
			return err
		}
		lat, rec, err := pass(ef)
		if err != nil {
			return err
		}
		if err := report("cold", ef, lat, rec); err != nil {
			return err
		}
		var all []time.Duration
		for range c.passes {
			lat, rec, err = pass(ef)
			if err != nil {
				return err
			}
			all = append(all, lat...)
		}
		if err := report("warm", ef, all, rec); err != nil {
			return err
		}
	}
	return emit(line{Phase: "end"})
}
