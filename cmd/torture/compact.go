package main

// This file is the compaction mode (-compact): the parent builds a file of
// known content (collections, tenants, kept history, items deleted), lists
// it, and in each trial copies it, starts a child that runs cairn.Compact
// on the copy and kills it (at a random moment, mid-checkpoint, at the
// crash points inside sqlitestore's Compact, or once it returned; in a
// third of the trials a second child then compacts the file as the kill
// left it, its log not recovered, and is killed too). The file the kill
// left (with -powerloss: images of what a power cut could have left) must
// open read-only and writable, pass cairn.Check, and list exactly as
// before: every collection, tenant, item (id, text, metadata, embedding
// bits, times) and kept version.

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/crashpoint"
	"github.com/cairndb/cairn/internal/powerfail"
	"github.com/cairndb/cairn/sqlitestore"
)

// compactTargets are the collections and tenants of the compaction file:
// Flat and HNSW keep history (their tenants too), Auto crosses to HNSW
// and has items with an expiry.
var compactTargets = []string{"flat", "hnsw", "auto", "flat@u0", "flat@u1", "hnsw@u0"}

// farFuture is the expiry of some items: far enough that none expires
// during a run.
var farFuture = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)

// compactItem is version ver of id in coll, as the builder writes it.
func compactItem(coll, id string, ver int) cairn.Item {
	it := itemOf(coll, id, ver, 0)
	if strings.HasPrefix(coll, "auto") && groupOf(id) < 4 {
		it.ExpiresAt = farFuture.Add(time.Duration(len(id)) * time.Nanosecond)
	}
	return it
}

// buildCompactFile writes a file of about mb MiB (with its log) at path:
// items added round the targets, a third upserted (a version kept in the
// history), a quarter deleted (an absence kept), and a collection filled
// and deleted, so that there are free pages to reclaim. It returns every
// id written, per target.
func buildCompactFile(ctx context.Context, path string, mb int, r *rand.Rand) (map[string][]string, error) {
	db, err := cairn.Open(ctx, path, storeOptions(sqlitestore.SyncNormal))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, name := range compactTargets {
		base, tenant, isTenant := strings.Cut(name, "@")
		if !isTenant {
			if _, err := db.CreateCollection(ctx, name, configOf(name)); err != nil {
				return nil, err
			}
			continue
		}
		c, err := db.Collection(ctx, base)
		if err != nil {
			return nil, err
		}
		if _, err := c.CreateTenant(ctx, tenant); err != nil {
			return nil, err
		}
	}
	size := func() int64 {
		var n int64
		for _, p := range []string{path, path + "-wal"} {
			if fi, err := os.Stat(p); err == nil {
				n += fi.Size()
			}
		}
		return n
	}
	ids := map[string][]string{}
	add := func(coll string, n int) error {
		c, err := target(ctx, db, coll)
		if err != nil {
			return err
		}
		items := make([]cairn.Item, n)
		for i := range items {
			id := fmt.Sprintf("c%d", len(ids[coll]))
			ids[coll] = append(ids[coll], id)
			items[i] = compactItem(coll, id, 1)
		}
		return c.Add(ctx, items...)
	}
	// The collection deleted at the end leaves a sixth of the size free:
	// less than the quarter at which a write returns free pages itself.
	if _, err := db.CreateCollection(ctx, "tmp-gone", configOf("tmp-gone")); err != nil {
		return nil, err
	}
	for size() < int64(mb)<<20/6 {
		if err := add("tmp-gone", 64); err != nil {
			return nil, err
		}
	}
	for size() < int64(mb)<<20 {
		coll := compactTargets[r.IntN(len(compactTargets))]
		if strings.HasPrefix(coll, "hnsw") && r.IntN(3) != 0 {
			coll = "flat" // the graphs stay small: building them is slow
		}
		if err := add(coll, 64); err != nil {
			return nil, err
		}
	}
	for _, coll := range compactTargets {
		c, err := target(ctx, db, coll)
		if err != nil {
			return nil, err
		}
		var ups []cairn.Item
		var dels []string
		for _, id := range ids[coll] {
			switch r.IntN(12) {
			case 0, 1, 2, 3:
				ups = append(ups, compactItem(coll, id, 2+r.IntN(100)))
			case 4, 5:
				dels = append(dels, id)
			}
		}
		for b := range slices.Chunk(ups, 64) {
			if err := c.Upsert(ctx, b...); err != nil {
				return nil, err
			}
		}
		for b := range slices.Chunk(dels, 64) {
			if err := c.Delete(ctx, b...); err != nil {
				return nil, err
			}
		}
	}
	delete(ids, "tmp-gone")
	if err := db.DeleteCollection(ctx, "tmp-gone"); err != nil {
		return nil, err
	}
	return ids, db.Close()
}

// listing is everything a file holds that a reader can see: per
// collection or tenant ("collection@tenant"), its configuration, and per
// id its item and its kept versions, each as a canonical string.
type listing map[string]*collListing

type collListing struct {
	config string
	items  map[string]string // id -> item
	past   map[string]string // id -> versions, for the collections that keep history
}

func itemString(it cairn.Item) string {
	meta, _ := json.Marshal(it.Metadata) // sorted keys
	var b strings.Builder
	fmt.Fprintf(&b, "%q %q %s created %d updated %d expires %d emb", it.ID, it.Text, meta,
		nanos(it.CreatedAt), nanos(it.UpdatedAt), nanos(it.ExpiresAt))
	for _, f := range it.Embedding {
		fmt.Fprintf(&b, " %08x", math.Float32bits(f))
	}
	return b.String()
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

// list reads every collection and tenant of db, their items, and the
// history of every id in ids (the ids ever written).
func list(ctx context.Context, db *cairn.DB, ids map[string][]string) (listing, error) {
	infos, err := db.Collections(ctx)
	if err != nil {
		return nil, err
	}
	l := listing{}
	for _, info := range infos {
		c, err := db.Collection(ctx, info.Name)
		if err != nil {
			return nil, err
		}
		tenants, err := c.Tenants(ctx)
		if err != nil {
			return nil, err
		}
		cfg := info.Config
		keep := "none"
		if cfg.KeepHistory != nil {
			keep = fmt.Sprintf("%v/%d", cfg.KeepHistory.For, cfg.KeepHistory.Versions)
		}
		config := fmt.Sprintf("dim %d metric %v index %v auto %d ttl %v history %s tenants %q",
			cfg.Dim, cfg.Metric, cfg.Index, cfg.AutoThreshold, cfg.TTL, keep, tenants)
		names := []string{info.Name}
		for _, t := range tenants {
			names = append(names, info.Name+"@"+t)
		}
		for _, name := range names {
			t, err := target(ctx, db, name)
			if err != nil {
				return nil, err
			}
			cl := &collListing{config: config, items: map[string]string{}, past: map[string]string{}}
			items, err := t.Find(ctx, nil, 0)
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", name, err)
			}
			for _, it := range items {
				cl.items[it.ID] = itemString(it)
			}
			if h, ok := t.(historian); ok && cfg.KeepHistory != nil {
				for _, id := range ids[name] {
					vs, err := h.History(ctx, id)
					if err != nil {
						return nil, fmt.Errorf("history of %s/%s: %w", name, id, err)
					}
					var b strings.Builder
					for _, v := range vs {
						fmt.Fprintf(&b, "[absent %v from %d until %d %s]", v.Absent, nanos(v.From), nanos(v.Until), itemString(v.Item))
					}
					cl.past[id] = b.String()
				}
			}
			l[name] = cl
		}
	}
	return l, nil
}

// diff returns how got differs from want, at most max lines.
func (want listing) diff(got listing, max int) []string {
	var out []string
	say := func(format string, args ...any) {
		if len(out) < max {
			out = append(out, fmt.Sprintf(format, args...))
		}
	}
	for name, w := range want {
		g, ok := got[name]
		if !ok {
			say("%s is gone", name)
			continue
		}
		if g.config != w.config {
			say("%s: config %s, want %s", name, g.config, w.config)
		}
		for _, kind := range []struct {
			what     string
			got, was map[string]string
		}{{"item", g.items, w.items}, {"history", g.past, w.past}} {
			for id, s := range kind.was {
				switch t, ok := kind.got[id]; {
				case !ok:
					say("%s/%s: %s gone", name, id, kind.what)
				case t != s:
					i := 0
					for i < min(len(t), len(s)) && t[i] == s[i] {
						i++
					}
					say("%s/%s: %s differs from byte %d: %.80q, want %.80q", name, id, kind.what, i, t[i:], s[i:])
				}
			}
			for id := range kind.got {
				if _, ok := kind.was[id]; !ok {
					say("%s/%s: %s there that was not", name, id, kind.what)
				}
			}
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			say("%s is there, and was not", name)
		}
	}
	return out
}

func (l listing) counts() (items, versions int) {
	for _, c := range l {
		items += len(c.items)
		versions += len(c.past)
	}
	return
}

// compactVerdict is the outcome of checking one file after a kill.
type compactVerdict struct {
	refused   error    // it did not open, read-only or writable
	problems  []string // Check's problems and the differences from before
	compacted bool     // it is smaller than before, once opened and closed
}

// graphs describes the file at path as cairn.Inspect does: each
// collection's size, tenants and the state of its saved graph, which a
// Compact must leave current.
func graphs(ctx context.Context, path string) (string, error) {
	fi, err := cairn.Inspect(ctx, path, nil)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range fi.Collections {
		fmt.Fprintf(&b, "%s: %d items, index %v, graph %v, %d tenants of %d items; ", c.Name, c.Count, c.Index, c.SavedGraph, c.Tenants, c.TenantItems)
	}
	return b.String(), nil
}

func (v *compactVerdict) failed() bool { return v.refused != nil || len(v.problems) > 0 }

// checkCompacted checks the file at path after a kill against want (the
// listing before Compact) and wantGraphs (its graphs): read-only first,
// Inspect and a DB, as readers beside a dead writer; then Check; then
// writable, which recovers the log and, closing, checkpoints it. before
// is the file's size before Compact: a file smaller once checkpointed is
// compacted.
func checkCompacted(ctx context.Context, path string, want listing, wantGraphs string, ids map[string][]string, before int64) *compactVerdict {
	v := &compactVerdict{}
	g, err := graphs(ctx, path)
	if err != nil {
		v.refused = fmt.Errorf("inspect: %w", err)
		return v
	}
	if g != wantGraphs {
		v.problems = append(v.problems, fmt.Sprintf("inspect: %s, want %s", g, wantGraphs))
	}
	for _, ro := range []bool{true, false} {
		o := storeOptions(sqlitestore.SyncFull)
		o.ReadOnly = ro
		mode := map[bool]string{true: "read-only", false: "writable"}[ro]
		db, err := cairn.Open(ctx, path, o)
		if err != nil {
			v.refused = fmt.Errorf("%s open: %w", mode, err)
			return v
		}
		got, err := list(ctx, db, ids)
		if err != nil {
			v.problems = append(v.problems, fmt.Sprintf("%s: %v", mode, err))
		} else {
			for _, d := range want.diff(got, 10) {
				v.problems = append(v.problems, mode+": "+d)
			}
		}
		if err := db.Close(); err != nil {
			v.problems = append(v.problems, fmt.Sprintf("%s close: %v", mode, err))
		}
		if !ro {
			break
		}
		rep, err := cairn.Check(ctx, path, nil)
		if err != nil {
			v.refused = fmt.Errorf("check: %w", err)
			return v
		}
		for _, p := range rep.Problems {
			v.problems = append(v.problems, "check: "+p)
		}
	}
	if fi, err := os.Stat(path); err == nil {
		v.compacted = fi.Size() < before
	}
	return v
}

// Kill strategies of the compaction trials, beside killRandom and
// killCheckpoint (as soon as the file itself changes: mid-checkpoint).
const (
	killCompacted = "returned" // once Compact returned
)

func compactKills() []string {
	s := []string{killRandom, killRandom, killRandom, killCheckpoint, killCheckpoint, killCompacted}
	if crashpoint.Enabled {
		s = append(s, crashpoint.CompactVacuum, crashpoint.CompactVacuumed, crashpoint.CompactCopied)
	}
	return s
}

// runCompactChild is the child of a compaction trial: it says "ready",
// compacts path, says "compacted" and waits to be killed.
func runCompactChild(path string) {
	os.Stdout.WriteString("ready\n")
	if err := cairn.Compact(context.Background(), path, storeOptions(sqlitestore.SyncFull)); err != nil {
		fmt.Printf("err 0 %v\n", err)
		os.Exit(3)
	}
	os.Stdout.WriteString("compacted\n")
	time.Sleep(10 * time.Minute) // the parent kills it; a backstop if the parent is gone
	os.Exit(4)
}

// compactRun is one child's run: how long its Compact took if it
// returned before the kill, and what went wrong in the harness or the
// child.
type compactRun struct {
	took     time.Duration // 0 if killed before Compact returned
	after    time.Duration // from "ready" to the kill
	childErr string
}

// runCompactChildOnce starts a child on path and kills it as kill says;
// est is about how long a Compact takes.
func runCompactChildOnce(self, path, kill string, est time.Duration, r *rand.Rand, extra ...string) compactRun {
	args := append([]string{"-child", "-compact", "-path", path, "-page-vectors", pageVectorsIn}, extra...)
	cmd := exec.Command(self, args...)
	cmd.Env = os.Environ()
	if strings.HasPrefix(kill, "compact-") {
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%s:1", crashpoint.Env, kill))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return compactRun{childErr: err.Error()}
	}
	if err := cmd.Start(); err != nil {
		return compactRun{childErr: err.Error()}
	}
	ready, done := make(chan time.Time, 1), make(chan time.Time, 1)
	exited := make(chan error, 1)
	var lines []string
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines = append(lines, sc.Text())
			switch sc.Text() {
			case "ready":
				ready <- time.Now()
			case "compacted":
				done <- time.Now()
			}
		}
		exited <- cmd.Wait()
	}()
	killNow := func() { cmd.Process.Signal(syscall.SIGKILL) }
	var begun time.Time
	select {
	case begun = <-ready:
	case <-time.After(60 * time.Second):
		killNow()
	}
	switch kill {
	case killRandom:
		select {
		case <-time.After(time.Duration(r.Int64N(int64(est) + 1))):
		case err := <-exited:
			exited <- err
		}
	case killCheckpoint:
		waitFileChange(path, 4*est+10*time.Second, exited)
		time.Sleep(time.Duration(r.Int64N(int64(est/4) + 1)))
	case killCompacted:
		select {
		case <-done:
			done <- time.Time{}
		case err := <-exited:
			exited <- err
		}
	default: // a crash point: the child kills itself
		select {
		case <-time.After(4*est + 20*time.Second):
		case err := <-exited:
			exited <- err
		}
	}
	killNow()
	<-exited
	res := compactRun{after: time.Since(begun)}
	select {
	case t := <-done:
		if !t.IsZero() {
			res.took = t.Sub(begun)
		} else {
			res.took = -1 // returned; its time was taken above
		}
	default:
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "err ") {
			res.childErr = l
		}
	}
	if res.childErr == "" && !killed(cmd.ProcessState) {
		res.childErr = fmt.Sprintf("exited (%v) instead of being killed; stderr: %s", cmd.ProcessState, tail(stderr.String()))
	}
	return res
}

// freePages returns the free pages of the (closed) file at path, and all
// its pages, as SQLite counts them.
func freePages(path string) (free, pages int64, err error) {
	db, err := sql.Open("sqlite", "file:"+path+"?immutable=1")
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA freelist_count").Scan(&free); err != nil {
		return 0, 0, err
	}
	err = db.QueryRow("PRAGMA page_count").Scan(&pages)
	return free, pages, err
}

// removeCompactDB removes the file at path, its log and the log's index,
// so that each trial starts from the copy alone.
func removeCompactDB(path string) {
	removeDB(path)
	os.Remove(path + "-shm")
}

func copyFile(dst, src string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// runCompact runs the compaction trials and prints their tally.
func runCompact(trials int, dir string, seed uint64, mb int, power, verbose bool) bool {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "torture: %v\n", err)
		return false
	}
	r := rand.New(rand.NewPCG(seed, 0))
	start := time.Now()
	base := filepath.Join(dir, "compact-base.cairn")
	defer removeCompactDB(base)
	ids, err := buildCompactFile(ctx, base, mb, r)
	if err != nil {
		fmt.Printf("torture: build the file: %v\n", err)
		return false
	}
	if fi, err := os.Stat(base + "-wal"); err == nil && fi.Size() > 0 {
		fmt.Printf("torture: the built file's log was left with %d bytes\n", fi.Size())
		return false
	}
	os.Remove(base + "-wal")
	fi, err := os.Stat(base)
	if err != nil {
		fmt.Printf("torture: %v\n", err)
		return false
	}
	size := fi.Size()
	db, err := cairn.Open(ctx, base, &cairn.Options{ReadOnly: true})
	if err != nil {
		fmt.Printf("torture: %v\n", err)
		return false
	}
	want, err := list(ctx, db, ids)
	db.Close()
	if err != nil {
		fmt.Printf("torture: list the built file: %v\n", err)
		return false
	}
	wantGraphs, err := graphs(ctx, base)
	if err != nil {
		fmt.Printf("torture: inspect the built file: %v\n", err)
		return false
	}
	nItems, nPast := want.counts()
	free, pages, err := freePages(base)
	if err != nil {
		fmt.Printf("torture: %v\n", err)
		return false
	}
	fmt.Printf("torture: compact, seed %d, %d trials in %s, power loss %v, crash points %v; file %.1f MiB, %d of its %d pages free, %d collections and tenants, %d items, %d ids with history (built in %v)\n",
		seed, trials, dir, power, crashpoint.Enabled, float64(size)/(1<<20), free, pages, len(want), nItems, nPast, time.Since(start).Round(time.Second))
	var baseBytes [2][]byte
	if power {
		if baseBytes[0], err = os.ReadFile(base); err != nil {
			fmt.Printf("torture: %v\n", err)
			return false
		}
	}
	est := 3 * time.Second // how long a Compact takes, once one is seen
	byKill := map[string]int{}
	var checked, compacted, asBefore, returned, refused, failed, childErrs int
	path := filepath.Join(dir, "compact.cairn")
	img := filepath.Join(dir, "compact-image.cairn")
	defer removeCompactDB(path)
	defer removeCompactDB(img)
	report := func(line string, v *compactVerdict) {
		checked++
		switch {
		case v.refused != nil:
			refused++
			fmt.Printf("%sREFUSED: %v\n", line, v.refused)
		case len(v.problems) > 0:
			failed++
			fmt.Printf("%sDIFFERS (%d problems):\n", line, len(v.problems))
			for _, p := range v.problems[:min(10, len(v.problems))] {
				fmt.Printf("    %s\n", p)
			}
		default:
			if v.compacted {
				compacted++
			} else {
				asBefore++
			}
			if verbose {
				fmt.Printf("%sok, %s\n", line, map[bool]string{true: "compacted", false: "as it was"}[v.compacted])
			}
		}
	}
	// ended counts how a child's Compact ended, and reports whether the
	// trial has a file to check.
	ended := func(res compactRun, kill, line string) bool {
		switch {
		case res.childErr != "":
			childErrs++
			fmt.Printf("%schild failed: %s\n", line, res.childErr)
			return false
		case res.took != 0:
			returned++
		case kill == killCompacted:
			childErrs++
			fmt.Printf("%sCompact never returned\n", line)
			return false
		}
		return true
	}
	for trial := 1; trial <= trials; trial++ {
		removeCompactDB(path)
		if err := copyFile(path, base); err != nil {
			fmt.Printf("torture: %v\n", err)
			return false
		}
		kill := compactKills()[r.IntN(len(compactKills()))]
		if power && kill == killCheckpoint && r.IntN(2) == 0 {
			kill = killRandom
		}
		byKill[kill]++
		var extra []string
		logPath := path + ".iolog"
		if power {
			extra = []string{"-powerlog", logPath}
		}
		res := runCompactChildOnce(self, path, kill, est, r, extra...)
		line := fmt.Sprintf("trial %d (killed %s after %v): ", trial, kill, res.after.Round(time.Millisecond))
		if !ended(res, kill, line) {
			continue
		}
		if res.took > 0 {
			est = res.took
		}
		if !power && kill != killCompacted && r.IntN(3) == 0 {
			// Compact again the file as the kill left it, its log not
			// recovered, and kill that too.
			kill2 := compactKills()[r.IntN(len(compactKills()))]
			byKill["then "+kill2]++
			res2 := runCompactChildOnce(self, path, kill2, est, r)
			line = fmt.Sprintf("trial %d (killed %s after %v, then %s after %v): ", trial, kill, res.after.Round(time.Millisecond), kill2, res2.after.Round(time.Millisecond))
			if !ended(res2, kill2, line) {
				continue
			}
			kill = kill2
		}
		if !power {
			v := checkCompacted(ctx, path, want, wantGraphs, ids, size)
			if kill == killCompacted && !v.failed() && !v.compacted {
				v.problems = append(v.problems, "Compact returned, yet the file is not smaller")
			}
			report(line, v)
			continue
		}
		ops, err := powerfail.ReadLog(logPath)
		os.Remove(logPath)
		if err != nil {
			childErrs++
			fmt.Printf("%sharness: %v\n", line, err)
			continue
		}
		for _, mode := range powerModes {
			files := powerfail.Image(baseBytes, ops, mode, r)
			removeCompactDB(img)
			if err := os.WriteFile(img, files[powerfail.MainDB], 0o644); err != nil {
				fmt.Printf("torture: %v\n", err)
				return false
			}
			if len(files[powerfail.WAL]) > 0 {
				if err := os.WriteFile(img+"-wal", files[powerfail.WAL], 0o644); err != nil {
					fmt.Printf("torture: %v\n", err)
					return false
				}
			}
			v := checkCompacted(ctx, img, want, wantGraphs, ids, size)
			if kill == killCompacted && !v.failed() && !v.compacted {
				v.problems = append(v.problems, "Compact returned, yet the image is not compacted")
			}
			report(fmt.Sprintf("%simage %s: ", line, mode), v)
		}
	}
	var kills []string
	for _, then := range []string{"", "then "} {
		for _, k := range []string{killRandom, killCheckpoint, killCompacted, crashpoint.CompactVacuum, crashpoint.CompactVacuumed, crashpoint.CompactCopied} {
			if byKill[then+k] > 0 {
				kills = append(kills, fmt.Sprintf("%s%s %d", then, k, byKill[then+k]))
			}
		}
	}
	what := "files"
	if power {
		what = "images"
	}
	fmt.Printf("kills: %s; Compact returned before the kill %d; child errors %d; %v\n", strings.Join(kills, ", "), returned, childErrs, time.Since(start).Round(time.Second))
	fmt.Printf("trials %d, %s checked %d: compacted %d, as before %d, refused %d, differing %d\n", trials, what, checked, compacted, asBefore, refused, failed)
	return refused == 0 && failed == 0 && childErrs == 0 && checked > 0
}
