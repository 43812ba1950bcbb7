// Command tenants measures one cairn file holding many small tenants:
// how long it takes to open, how much memory it holds idle and after
// touching some tenants, how fast a query inside one tenant is beside a
// dedicated collection of the same items, and how long creating and
// deleting a tenant takes.
//
//	go run ./bench/tenants -n 100000 -dir /tmp/tenants -mode tables
//	go run ./bench/tenants -n 100000 -dir /tmp/tenants -mode tenants
//
// Tenant sizes are drawn from a Zipf law over 1 to -max items (s = 1.1),
// as the users of an agent memory are: most have a few memories, a few
// have many. -mode tables keeps each tenant in a collection of its own
// (a SQLite table each); -mode tenants keeps them as tenants of one
// collection (Collection.Tenant). The file is built once (-build) and
// measured in a fresh process (-measure), so that the RSS is that of an
// Open, not of the build.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/sqlitestore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "tenants:", err)
		os.Exit(1)
	}
}

type config struct {
	n, max, dim, touch, queries, rounds int
	budget                              int64
	mode, dir                           string
	seed                                uint64
	build, measure                      bool
}

func run(ctx context.Context, args []string, out io.Writer) error {
	fs := flag.NewFlagSet("tenants", flag.ContinueOnError)
	var c config
	fs.IntVar(&c.n, "n", 100000, "number of tenants")
	fs.IntVar(&c.max, "max", 1000, "largest tenant, in items")
	fs.IntVar(&c.dim, "dim", 64, "dimension of the embeddings")
	fs.IntVar(&c.touch, "touch", 1000, "tenants queried once after the idle measurement")
	fs.IntVar(&c.queries, "queries", 2000, "queries per side in the tenant-vs-dedicated comparison")
	fs.IntVar(&c.rounds, "rounds", 5, "alternating rounds of that comparison")
	fs.StringVar(&c.mode, "mode", "tenants", "tables (a collection per tenant) or tenants (Collection.Tenant)")
	fs.StringVar(&c.dir, "dir", os.TempDir(), "directory of the file")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of sizes and vectors")
	fs.Int64Var(&c.budget, "budget", 0, "Options.TenantMemory, in MiB, when measuring (0: the default)")
	fs.BoolVar(&c.build, "build", false, "only build the file")
	fs.BoolVar(&c.measure, "measure", false, "only measure a built file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if c.mode != "tables" && c.mode != "tenants" {
		return fmt.Errorf("-mode %q: want tables or tenants", c.mode)
	}
	path := c.path()
	if !c.measure {
		if _, err := os.Stat(path); err == nil {
			fmt.Fprintf(out, "file %s exists: not rebuilt\n", path)
		} else if err := build(ctx, c, out); err != nil {
			return err
		}
		if err := buildDedicated(ctx, c); err != nil {
			return err
		}
	}
	if c.build {
		return nil
	}
	if !c.measure {
		// Measure in a fresh process, so that the build's memory is not
		// counted.
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		cmd := exec.CommandContext(ctx, exe, append(args, "-measure")...)
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		return cmd.Run()
	}
	return measure(ctx, c, out)
}

func (c config) path() string {
	return filepath.Join(c.dir, fmt.Sprintf("tenants-%s-%d-%d-%d.db", c.mode, c.n, c.max, c.dim))
}

// sizes returns the number of items of each tenant.
func (c config) sizes() []int {
	z := rand.NewZipf(rand.New(rand.NewPCG(c.seed, 2)), 1.1, 1, uint64(c.max-1))
	out := make([]int, c.n)
	for i := range out {
		out[i] = int(z.Uint64()) + 1
	}
	return out
}

func tenantName(i int) string { return fmt.Sprintf("user-%06d", i) }

// space is where tenants live: a collection each, or tenants of one.
type space interface {
	create(ctx context.Context, name string) (cairn.MemoryCollection, error)
	get(ctx context.Context, name string) (cairn.MemoryCollection, error)
	remove(ctx context.Context, name string) error
}

var cfg = func(dim int) cairn.CollectionConfig { return cairn.CollectionConfig{Dim: dim} }

type tables struct {
	db  *cairn.DB
	dim int
}

func (t tables) create(ctx context.Context, name string) (cairn.MemoryCollection, error) {
	return t.db.CreateCollection(ctx, name, cfg(t.dim))
}

func (t tables) get(ctx context.Context, name string) (cairn.MemoryCollection, error) {
	return t.db.Collection(ctx, name)
}

func (t tables) remove(ctx context.Context, name string) error {
	return t.db.DeleteCollection(ctx, name)
}

func open(ctx context.Context, c config, o *cairn.Options) (*cairn.DB, space, error) {
	db, err := cairn.Open(ctx, c.path(), o)
	if err != nil {
		return nil, nil, err
	}
	if c.mode == "tables" {
		return db, tables{db, c.dim}, nil
	}
	s, err := openTenants(ctx, db, c.dim)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return db, s, nil
}

func items(rng *rand.Rand, n, dim int, prefix string) []cairn.Item {
	out := make([]cairn.Item, n)
	for i := range out {
		v := make([]float32, dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		out[i] = cairn.Item{ID: fmt.Sprintf("%s-%d", prefix, i), Text: fmt.Sprintf("memory %d of %s", i, prefix), Embedding: v}
	}
	return out
}

// build writes the file: every tenant with its items.
func build(ctx context.Context, c config, out io.Writer) error {
	start := time.Now()
	db, s, err := open(ctx, c, &cairn.Options{SQLite: &sqlitestore.Options{Sync: sqlitestore.SyncNormal}})
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(c.seed, 3))
	total := 0
	for i, size := range c.sizes() {
		name := tenantName(i)
		t, err := s.create(ctx, name)
		if err != nil {
			db.Close()
			return err
		}
		if err := t.Add(ctx, items(rng, size, c.dim, name)...); err != nil {
			db.Close()
			return err
		}
		total += size
		if (i+1)%10000 == 0 {
			fmt.Fprintf(out, "built %d tenants, %d items, %v\n", i+1, total, time.Since(start).Round(time.Second))
		}
	}
	if err := db.Close(); err != nil {
		return err
	}
	fi, _ := os.Stat(c.path())
	fmt.Fprintf(out, "built %s: %d tenants, %d items, %.1f MiB, in %v\n", c.path(), c.n, total, float64(fi.Size())/(1<<20), time.Since(start).Round(time.Second))
	return nil
}

// buildDedicated adds to the file, unless it has them, a dedicated
// collection for each compared size, holding the items of that tenant.
func buildDedicated(ctx context.Context, c config) error {
	db, s, err := open(ctx, c, &cairn.Options{SQLite: &sqlitestore.Options{Sync: sqlitestore.SyncNormal}})
	if err != nil {
		return err
	}
	for _, size := range compared(c) {
		name := fmt.Sprintf("dedicated-%d", size)
		its, err := tenantItems(ctx, s, c, size)
		if err != nil {
			db.Close()
			return err
		}
		d, err := db.GetOrCreateCollection(ctx, name, cfg(c.dim))
		if err != nil {
			db.Close()
			return err
		}
		if n, err := d.Count(ctx); err != nil || n == len(its) {
			if err != nil {
				db.Close()
				return err
			}
			continue // built before
		}
		err = d.Upsert(ctx, its...)
		if err != nil {
			db.Close()
			return err
		}
	}
	return db.Close()
}

// compared returns the tenant sizes compared with a dedicated collection:
// the largest tenant's, and about 100 and 10 items.
func compared(c config) []int {
	sizes := c.sizes()
	out := []int{slices.Max(sizes)}
	for _, want := range []int{100, 10} {
		if want < out[0] {
			out = append(out, want)
		}
	}
	return out
}

// tenantOf returns the first tenant whose size is nearest to size.
func tenantOf(c config, size int) int {
	sizes := c.sizes()
	best := 0
	for i, s := range sizes {
		if abs(s-size) < abs(sizes[best]-size) {
			best = i
		}
	}
	return best
}

func abs(x int) int { return max(x, -x) }

// tenantItems returns the items of the tenant of about size items, with
// their embeddings.
func tenantItems(ctx context.Context, s space, c config, size int) ([]cairn.Item, error) {
	t, err := s.get(ctx, tenantName(tenantOf(c, size)))
	if err != nil {
		return nil, err
	}
	return t.Find(ctx, nil, 0)
}

func measure(ctx context.Context, c config, out io.Writer) error {
	fmt.Fprintf(out, "mode %s, %d tenants of 1 to %d items (Zipf 1.1), %d-d, budget %d MiB, %s/%s, %d cores, %s\n",
		c.mode, c.n, c.max, c.dim, c.budget, runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), time.Now().Format("2006-01-02 15:04"))
	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Fprintf(out, "load average at start: %s", load)
	}
	base := rssKiB()
	start := time.Now()
	db, s, err := open(ctx, c, &cairn.Options{TenantMemory: c.budget << 20})
	if err != nil {
		return err
	}
	defer db.Close()
	opened := time.Since(start)
	idle := settledRSS()
	fmt.Fprintf(out, "open: %v\n", opened.Round(time.Millisecond))
	fmt.Fprintf(out, "RSS idle: %.1f MiB (%.1f MiB before open): %.0f B a tenant\n",
		mib(idle), mib(base), float64(idle-base)*1024/float64(c.n))

	rng := rand.New(rand.NewPCG(c.seed, 4))
	q := func() []float32 {
		v := make([]float32, c.dim)
		for j := range v {
			v[j] = float32(rng.NormFloat64())
		}
		return v
	}
	start = time.Now()
	for _, i := range rng.Perm(c.n)[:min(c.touch, c.n)] {
		t, err := s.get(ctx, tenantName(i))
		if err != nil {
			return err
		}
		if _, err := t.Query(ctx, q(), 5, nil); err != nil {
			return err
		}
	}
	touched := time.Since(start)
	after := settledRSS()
	fmt.Fprintf(out, "touched %d tenants (a query each) in %v: RSS %.1f MiB, %.1f KiB a touched tenant\n",
		c.touch, touched.Round(time.Millisecond), mib(after), float64(after-idle)/float64(c.touch))

	fmt.Fprintf(out, "\nQuery p50 (p95), top 5: looked up by name for each query, as a server handling a request does, and through a handle held\n\n")
	fmt.Fprintf(out, "| items | tenant, looked up | collection, looked up | ratio | tenant, held | collection, held | ratio |\n|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, size := range compared(c) {
		name := tenantName(tenantOf(c, size))
		dname := fmt.Sprintf("dedicated-%d", size)
		d, err := db.Collection(ctx, dname)
		if err != nil {
			return err
		}
		t, err := s.get(ctx, name)
		if err != nil {
			return err
		}
		n, _ := d.Count(ctx)
		qs := make([][]float32, c.queries)
		for i := range qs {
			qs[i] = q()
		}
		// The four sides take each query in turn, each first in turn, so
		// that a busy machine slows them alike.
		sides := []func(v []float32) error{
			func(v []float32) error {
				t, err := s.get(ctx, name)
				if err == nil {
					_, err = t.Query(ctx, v, 5, nil)
				}
				return err
			},
			func(v []float32) error {
				d, err := db.Collection(ctx, dname)
				if err == nil {
					_, err = d.Query(ctx, v, 5, nil)
				}
				return err
			},
			func(v []float32) error { _, err := t.Query(ctx, v, 5, nil); return err },
			func(v []float32) error { _, err := d.Query(ctx, v, 5, nil); return err },
		}
		lat := make([][]time.Duration, len(sides))
		for r := range c.rounds {
			for i, v := range qs {
				for j := range sides {
					k := (i + r + j) % len(sides)
					t0 := time.Now()
					if err := sides[k](v); err != nil {
						return err
					}
					lat[k] = append(lat[k], time.Since(t0))
				}
			}
		}
		p := func(k int) string { return fmt.Sprintf("%v (%v)", pct(lat[k], 50), pct(lat[k], 95)) }
		ratio := func(a, b int) float64 { return float64(pct(lat[a], 50)) / float64(pct(lat[b], 50)) }
		fmt.Fprintf(out, "| %d | %s | %s | %.3f | %s | %s | %.3f |\n", n, p(0), p(1), ratio(0, 1), p(2), p(3), ratio(2, 3))
	}

	const k = 200
	var cr, dl []time.Duration
	for i := range k {
		name := fmt.Sprintf("new-%d-%d", time.Now().UnixNano(), i)
		t0 := time.Now()
		if _, err := s.create(ctx, name); err != nil {
			return err
		}
		cr = append(cr, time.Since(t0))
		t0 = time.Now()
		if err := s.remove(ctx, name); err != nil {
			return err
		}
		dl = append(dl, time.Since(t0))
	}
	fmt.Fprintf(out, "\ncreate an empty tenant: p50 %v, p95 %v; delete it: p50 %v, p95 %v (%d each, SyncFull)\n",
		pct(cr, 50), pct(cr, 95), pct(dl, 50), pct(dl, 95), k)
	start = time.Now()
	if err := db.Close(); err != nil {
		return err
	}
	fmt.Fprintf(out, "close: %v\n", time.Since(start).Round(time.Millisecond))
	return nil
}

func pct(ds []time.Duration, p int) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	d := s[min(len(s)-1, len(s)*p/100)]
	switch {
	case d > time.Millisecond:
		return d.Round(10 * time.Microsecond)
	case d > 10*time.Microsecond:
		return d.Round(100 * time.Nanosecond)
	}
	return d.Round(10 * time.Nanosecond)
}

// settledRSS returns the RSS after a GC that returns freed memory.
func settledRSS() int64 {
	runtime.GC()
	debug.FreeOSMemory()
	return rssKiB()
}

// rssKiB returns the process's resident set, in KiB (Linux; 0 elsewhere).
func rssKiB() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "VmRSS:" {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

func mib(kib int64) float64 { return float64(kib) / 1024 }
