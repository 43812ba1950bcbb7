package main

// This file is the soak mode (-soak): writers and readers run for a long
// time against one database, with deletes and upserts keeping the number
// of items steady and a reopen every few minutes, while the process's
// resident memory and the file's size are sampled. Both must level off:
// memory after warm-up, the file under churn.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

const (
	soakWriters = 8
	soakReaders = 8
	soakDim     = 128
	soakPerW    = 2500 // live items each writer keeps: 20,000 in all
)

type sample struct {
	at                     time.Duration
	rss, heap, file, items int64
	writes, reads          int64
}

func runSoak(dir string, d, every, reopen time.Duration, csvPath, svgPath string, seed uint64) error {
	ctx := context.Background()
	path := filepath.Join(dir, "soak.cairn")
	removeDB(path)
	open := func() (*cairn.DB, *cairn.Collection, error) {
		db, err := cairn.Open(ctx, path, nil)
		if err != nil {
			return nil, nil, err
		}
		c, err := db.Collection(ctx, "soak")
		if err != nil {
			c, err = db.CreateCollection(ctx, "soak", cairn.CollectionConfig{Dim: soakDim, Metric: vector.Cosine, Index: cairn.HNSW})
		}
		if err != nil {
			db.Close()
			return nil, nil, err
		}
		return db, c, nil
	}
	db, c, err := open()
	if err != nil {
		return err
	}
	var (
		gate          sync.RWMutex // held shared by each operation, alone by a reopen
		stop          atomic.Bool
		writes, reads atomic.Int64
		firstErr      atomic.Value
		wg            sync.WaitGroup
	)
	fail := func(err error) {
		firstErr.CompareAndSwap(nil, err)
		stop.Store(true)
	}
	coll := func() *cairn.Collection { return c } // read under gate
	vec := func(r *rand.Rand) []float32 {
		v := make([]float32, soakDim)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		return v
	}
	item := func(r *rand.Rand, w, n int) cairn.Item {
		return cairn.Item{
			ID: fmt.Sprintf("w%dn%d", w, n), Embedding: vec(r),
			Text:     strings.Repeat("x", r.IntN(1024)),
			Metadata: map[string]any{"w": float64(w), "g": float64(n % 16), "n": float64(n)},
		}
	}
	for w := range soakWriters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, uint64(w)))
			var live []int
			next := 0
			for !stop.Load() {
				gate.RLock()
				c := coll()
				var err error
				switch op := r.IntN(10); {
				case len(live) < soakPerW || op < 3: // add a batch
					items := make([]cairn.Item, 1+r.IntN(16))
					for i := range items {
						items[i] = item(r, w, next)
						live = append(live, next)
						next++
					}
					err = c.Add(ctx, items...)
				case op < 6: // upsert some
					items := make([]cairn.Item, 1+r.IntN(8))
					for i := range items {
						items[i] = item(r, w, live[r.IntN(len(live))])
					}
					err = c.Upsert(ctx, dedup(items)...)
				case op < 9: // delete some
					k := min(len(live), 1+r.IntN(16))
					ids := make([]string, k)
					for i := range ids {
						j := r.IntN(len(live))
						ids[i] = fmt.Sprintf("w%dn%d", w, live[j])
						live[j] = live[len(live)-1]
						live = live[:len(live)-1]
					}
					err = c.Delete(ctx, ids...)
				default: // delete a group of ours
					g := r.IntN(16)
					_, err = c.DeleteWhere(ctx, cairn.And(cairn.Eq("w", float64(w)), cairn.Eq("g", float64(g))))
					kept := live[:0]
					for _, n := range live {
						if n%16 != g {
							kept = append(kept, n)
						}
					}
					live = kept
				}
				gate.RUnlock()
				if err != nil {
					fail(fmt.Errorf("writer %d: %w", w, err))
					return
				}
				writes.Add(1)
			}
		}()
	}
	for q := range soakReaders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(seed, 100+uint64(q)))
			for !stop.Load() {
				var o *cairn.QueryOptions
				if r.IntN(3) == 0 {
					o = &cairn.QueryOptions{Filter: cairn.Eq("g", float64(r.IntN(16)))}
				}
				gate.RLock()
				_, err := coll().Query(ctx, vec(r), 10, o)
				gate.RUnlock()
				if err != nil {
					fail(fmt.Errorf("reader %d: %w", q, err))
					return
				}
				reads.Add(1)
			}
		}()
	}
	var samples []sample
	start := time.Now()
	lastReopen := start
	take := func() {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		gate.RLock()
		n, _ := coll().Count(ctx) // 0 if closed: the sample says so
		gate.RUnlock()
		s := sample{at: time.Since(start), rss: rssBytes(), heap: int64(ms.HeapAlloc), file: fileBytes(path), items: int64(n), writes: writes.Load(), reads: reads.Load()}
		samples = append(samples, s)
		fmt.Printf("soak: %6.0fs rss %4d MiB heap %4d MiB file %4d MiB items %6d writes %8d reads %8d\n",
			s.at.Seconds(), s.rss>>20, s.heap>>20, s.file>>20, s.items, s.writes, s.reads)
	}
	take()
	for time.Since(start) < d && !stop.Load() {
		time.Sleep(every)
		if time.Since(lastReopen) >= reopen {
			gate.Lock()
			err := db.Close()
			if err == nil {
				db, c, err = open()
			}
			gate.Unlock()
			if err != nil {
				fail(fmt.Errorf("reopen: %w", err))
				break
			}
			lastReopen = time.Now()
			fmt.Printf("soak: reopened at %.0fs\n", time.Since(start).Seconds())
		}
		take()
	}
	stop.Store(true)
	wg.Wait()
	if err := db.Close(); err != nil {
		fail(fmt.Errorf("close: %w", err))
	}
	if err := writeCSV(csvPath, samples); err != nil {
		return err
	}
	if err := writeSVG(svgPath, samples); err != nil {
		return err
	}
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	return nil
}

// dedup drops repeated ids from a batch (an upsert batch may not repeat one).
func dedup(items []cairn.Item) []cairn.Item {
	seen := map[string]bool{}
	out := items[:0]
	for _, it := range items {
		if !seen[it.ID] {
			seen[it.ID] = true
			out = append(out, it)
		}
	}
	return out
}

// rssBytes is the process's resident set size, from /proc (0 elsewhere).
func rssBytes() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}

// fileBytes is the size of the database file and its write-ahead log.
func fileBytes(path string) int64 {
	var n int64
	for _, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			n += fi.Size()
		}
	}
	return n
}

func writeCSV(path string, samples []sample) error {
	if path == "" {
		return nil
	}
	var b strings.Builder
	b.WriteString("seconds,rss_bytes,heap_bytes,file_bytes,items,writes,reads\n")
	for _, s := range samples {
		fmt.Fprintf(&b, "%.0f,%d,%d,%d,%d,%d,%d\n", s.at.Seconds(), s.rss, s.heap, s.file, s.items, s.writes, s.reads)
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// writeSVG plots RSS and file size (MiB) against time, two lines on one
// chart, in plain SVG.
func writeSVG(path string, samples []sample) error {
	if path == "" || len(samples) == 0 {
		return nil
	}
	const w, h, pad = 640, 320, 48
	maxT := samples[len(samples)-1].at.Seconds()
	var maxY float64
	for _, s := range samples {
		maxY = max(maxY, float64(s.rss)/(1<<20), float64(s.file)/(1<<20))
	}
	maxT, maxY = max(maxT, 1), max(maxY*1.1, 1)
	x := func(t float64) float64 { return pad + t/maxT*(w-2*pad) }
	y := func(v float64) float64 { return h - pad - v/maxY*(h-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`+"\n", pad, h-pad, w-pad, h-pad, pad, pad, pad, h-pad)
	for i := 0; i <= 4; i++ {
		v := maxY * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%d" y="%.0f" text-anchor="end">%.0f</text>`+"\n", pad-4, y(v)+4, v)
		t := maxT * float64(i) / 4
		fmt.Fprintf(&b, `<text x="%.0f" y="%d" text-anchor="middle">%.0f</text>`+"\n", x(t), h-pad+16, t/60)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">minutes</text>`+"\n", w/2, h-8)
	fmt.Fprintf(&b, `<text x="%d" y="%d">MiB: RSS (blue), database file + WAL (red)</text>`+"\n", pad, pad-16)
	for _, series := range []struct {
		color string
		get   func(sample) int64
	}{{"blue", func(s sample) int64 { return s.rss }}, {"red", func(s sample) int64 { return s.file }}} {
		var pts []string
		for _, s := range samples {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(s.at.Seconds()), y(float64(series.get(s))/(1<<20))))
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", series.color, strings.Join(pts, " "))
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}
