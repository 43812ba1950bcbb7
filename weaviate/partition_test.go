// This file holds the partition test: a nemesis cuts links between nodes
// of the test cluster and pauses nodes while writers and readers work
// through the public API, every operation is recorded, and a checker
// reads the history once the cluster has healed. It needs
// CAIRN_WEAVIATE, CAIRN_WEAVIATE_CLUSTER (cluster.sh, whose cut, pause
// and heal are the nemesis) and nft in the namespace. CI runs it for
// -partition.duration (default 75 s, or CAIRN_PARTITION_DURATION); the
// long run is
//
//	weaviate/test-cluster.sh -test.run '^TestClusterPartition$' -test.timeout 60m -partition.duration 30m

package weaviate

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/memorytest"
	"github.com/cairndb/cairn/vector"
)

var (
	partitionDuration = flag.Duration("partition.duration", 0, "how long the nemesis runs in TestClusterPartition (default CAIRN_PARTITION_DURATION, else 75s)")
	partitionSeed     = flag.Uint64("partition.seed", 1, "seed of TestClusterPartition's nemesis and workload")
	partitionHistory  = flag.String("partition.history", "", "write TestClusterPartition's history to this file, one JSON operation a line")
	partitionKnown    = flag.String("partition.known", "", "anomalies of the server TestClusterPartition reports without failing, a comma list of lost, undone, partial, diverged (RELIABILITY.md says why); none by default")
)

// partitionConfig returns the nemesis's duration: the flag, else
// CAIRN_PARTITION_DURATION, else 75 s.
func partitionConfig(t *testing.T) time.Duration {
	if *partitionDuration > 0 {
		return *partitionDuration
	}
	if s := os.Getenv("CAIRN_PARTITION_DURATION"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("CAIRN_PARTITION_DURATION=%q: %v", s, err)
		}
		return d
	}
	return 75 * time.Second
}

// Outcomes of an operation in the history.
const (
	outOK      = "ok"      // acknowledged (a write) or answered (a read)
	outFail    = "fail"    // a write that stored nothing, or was undone; a read that returned an error
	outUnknown = "unknown" // a write that may or may not be stored
)

// hop is one operation of the history. Times are since the start of the
// workload.
type hop struct {
	Proc    string        `json:"proc"` // w0…, r0…
	Op      string        `json:"op"`   // add, upsert, get, find, count
	Keys    []string      `json:"keys,omitempty"`
	Vers    []int         `json:"vers,omitempty"` // versions written, or read (0: not found)
	Bucket  int           `json:"bucket,omitempty"`
	N       int           `json:"n,omitempty"` // count
	Start   time.Duration `json:"start"`
	End     time.Duration `json:"end"`
	Outcome string        `json:"outcome"`
	Unknown []string      `json:"unknown,omitempty"` // keys of a failed write not confirmed undone
	Err     string        `json:"err,omitempty"`
}

func (o hop) String() string {
	s := fmt.Sprintf("%8.3fs %8.3fs %-3s %-6s %-7s", o.Start.Seconds(), o.End.Seconds(), o.Proc, o.Op, o.Outcome)
	switch o.Op {
	case "count":
		s += fmt.Sprintf(" n=%d", o.N)
	case "find":
		s += fmt.Sprintf(" bucket %d: %d items", o.Bucket, len(o.Keys))
	default:
		for i, k := range o.Keys {
			s += fmt.Sprintf(" %s@%d", k, o.Vers[i])
		}
	}
	if len(o.Unknown) > 0 {
		s += fmt.Sprintf(" not undone %v", o.Unknown)
	}
	if o.Err != "" {
		e := o.Err
		if len(e) > 160 {
			e = e[:160] + "…"
		}
		s += ": " + e
	}
	return s
}

// history is the record of a run, safe for concurrent appends.
type history struct {
	t0  time.Time
	mu  sync.Mutex
	ops []hop
}

func (h *history) since() time.Duration { return time.Since(h.t0) }

func (h *history) add(o hop) {
	h.mu.Lock()
	h.ops = append(h.ops, o)
	h.mu.Unlock()
}

const (
	partDim     = 8
	partBuckets = 8 // a find reads one bucket of the keys
)

// bucketOf is the bucket of a key, stored as its metadata "b".
func bucketOf(key string) int {
	h := 0
	for _, c := range key {
		h = h*31 + int(c)
	}
	return (h%partBuckets + partBuckets) % partBuckets
}

// partItem is version v of key: its text says both, so that a read tells
// which write it sees.
func partItem(r *rand.Rand, key string, v int) cairn.Item {
	e := make([]float32, partDim)
	for i := range e {
		e[i] = r.Float32()*2 - 1
	}
	return cairn.Item{ID: key, Embedding: e, Text: key + "@" + strconv.Itoa(v), Metadata: map[string]any{"b": bucketOf(key)}}
}

// versionOf reads the version from an item's text.
func versionOf(it cairn.Item) int {
	_, v, found := strings.Cut(it.Text, "@")
	n, err := strconv.Atoi(v)
	if !found || err != nil {
		return -1
	}
	return n
}

// writeOutcome classifies a write's error: per key, ok, fail (nothing
// stored: refused before sending, or undone) or unknown (a failed write
// whose undo is not confirmed, or an error this test does not expect).
func writeOutcome(keys []string, err error) (string, []string) {
	if err == nil {
		return outOK, nil
	}
	var we *WriteError
	if errors.As(err, &we) {
		if len(we.NotUndone) == 0 {
			return outFail, nil
		}
		return outFail, we.NotUndone
	}
	if errors.Is(err, ErrUnavailable) {
		// Only a *WriteError comes after objects were sent: this one
		// failed in its checks, before writing.
		return outFail, nil
	}
	return outUnknown, keys
}

// TestClusterPartition runs writers and readers while a nemesis cuts the
// links between nodes (one node from the other two, or one pair) and
// pauses nodes (SIGSTOP), healing between faults, and then checks the
// history: no acknowledged write lost once the cluster has healed and
// converged, no read returning a version whose write failed and was
// undone before the read began, no phantom version, and no read
// answering without an error yet missing what was acknowledged before it
// began (a silent partial answer). It reports the figures: operations,
// acknowledgements, failures, unknowns, stale reads, and how long after
// the heal every acknowledged write was readable at ONE through every
// node.
func TestClusterPartition(t *testing.T) {
	h := newHarness(t)
	dur := partitionConfig(t)
	seed := *partitionSeed
	known := map[string]bool{}
	for _, k := range strings.Split(*partitionKnown, ",") {
		switch k = strings.TrimSpace(k); k {
		case "":
		case "lost", "undone", "partial", "diverged":
			known[k] = true
		default:
			t.Fatalf("-partition.known: unknown anomaly %q (lost, undone, partial, diverged)", k)
		}
	}
	t.Logf("nemesis for %v, seed %d (-partition.seed), known anomalies %q (-partition.known)", dur, seed, *partitionKnown)
	// Heal whatever the test leaves, however it ends; before the
	// cleanups of newHarness, which need the cluster whole.
	t.Cleanup(func() { healQuietly(h) })
	h.run("heal")

	ctx := context.Background()
	name := memorytest.Name(t)
	if _, err := h.db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: partDim, Index: cairn.Flat}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.db.DeleteCollection(context.Background(), name) })
	// The workload's own DB: shorter bounds than the harness's, so that
	// operations cut off by a fault end, as errors, within the fault.
	wdb, err := Open(ctx, h.addrs, clusterOptions(t, Options{Shards: 3, Replication: 2, Timeout: 20 * time.Second, AttemptTimeout: 5 * time.Second}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { wdb.Close() })
	mc, err := wdb.Collection(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	c := mc.(*Collection)

	hist := &history{t0: time.Now()}
	stop := make(chan struct{})
	stopped := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	// keys every writer has tried to add, for the readers to pick from.
	var keysMu sync.Mutex
	var allKeys []string
	var wg sync.WaitGroup
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }); wg.Wait() }
	// However the test ends, the workload stops, and then the nemesis's
	// faults are healed (cleanups run last first).
	t.Cleanup(func() { healQuietly(h) })
	t.Cleanup(halt)
	const writers, readers = 4, 2
	for w := range writers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(100+w)))
			proc := fmt.Sprintf("w%d", w)
			next := 0 // keys made
			version := map[string]int{}
			var own []string // keys whose add is acknowledged or unknown
			for !stopped() {
				n := 1 + r.IntN(3)
				o := hop{Proc: proc}
				var items []cairn.Item
				if len(own) < n || r.IntN(3) == 0 {
					o.Op = "add"
					for range n {
						k := fmt.Sprintf("%s-%d", proc, next)
						next++
						version[k] = 1
						items = append(items, partItem(r, k, 1))
					}
					keysMu.Lock()
					for _, it := range items {
						allKeys = append(allKeys, it.ID)
					}
					keysMu.Unlock()
				} else {
					o.Op = "upsert"
					for _, i := range r.Perm(len(own))[:n] {
						k := own[i]
						version[k]++
						items = append(items, partItem(r, k, version[k]))
					}
				}
				for _, it := range items {
					o.Keys = append(o.Keys, it.ID)
					o.Vers = append(o.Vers, version[it.ID])
				}
				o.Start = hist.since()
				var err error
				if o.Op == "add" {
					err = c.Add(ctx, items...)
				} else {
					err = c.Upsert(ctx, items...)
				}
				o.End = hist.since()
				o.Outcome, o.Unknown = writeOutcome(o.Keys, err)
				if err != nil {
					o.Err = err.Error()
				}
				hist.add(o)
				if o.Op == "add" {
					for _, k := range o.Keys {
						if o.Outcome == outOK || slices.Contains(o.Unknown, k) {
							own = append(own, k)
						}
					}
				}
			}
		})
	}
	for rd := range readers {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, uint64(200+rd)))
			proc := fmt.Sprintf("r%d", rd)
			for !stopped() {
				o := hop{Proc: proc}
				var err error
				switch x := r.IntN(10); {
				case x < 6:
					keysMu.Lock()
					if len(allKeys) == 0 {
						keysMu.Unlock()
						time.Sleep(50 * time.Millisecond)
						continue
					}
					k := allKeys[r.IntN(len(allKeys))]
					keysMu.Unlock()
					o.Op, o.Keys = "get", []string{k}
					o.Start = hist.since()
					var got []cairn.Item
					got, err = c.Get(ctx, k)
					o.End = hist.since()
					switch {
					case err == nil:
						o.Vers = []int{versionOf(got[0])}
					case errors.Is(err, vector.ErrNotFound):
						o.Vers, err = []int{0}, nil
					}
				case x < 9:
					o.Op, o.Bucket = "find", r.IntN(partBuckets)
					o.Start = hist.since()
					var got []cairn.Item
					got, err = c.Find(ctx, cairn.Eq("b", o.Bucket), 0)
					o.End = hist.since()
					for _, it := range got {
						o.Keys = append(o.Keys, it.ID)
						o.Vers = append(o.Vers, versionOf(it))
					}
				default:
					o.Op = "count"
					o.Start = hist.since()
					o.N, err = c.Count(ctx)
					o.End = hist.since()
				}
				o.Outcome = outOK
				if err != nil {
					o.Outcome, o.Err = outFail, err.Error()
				}
				hist.add(o)
			}
		})
	}

	// The nemesis, in this goroutine: a fault for 4 to 12 s, then a heal
	// and 3 to 8 s whole.
	r := rand.New(rand.NewPCG(seed, 1))
	type event struct {
		at   time.Duration
		what string
	}
	var events []event
	faults := map[string]int{}
	time.Sleep(3 * time.Second) // some history before the first fault
	var healed time.Duration    // when the last fault was healed
	for hist.since() < dur {
		var what string
		switch f := r.IntN(4); f {
		case 0, 1: // one node from the other two
			n := r.IntN(3)
			h.run("cut", fmt.Sprint(n), fmt.Sprint((n+1)%3))
			h.run("cut", fmt.Sprint(n), fmt.Sprint((n+2)%3))
			what = fmt.Sprintf("isolate node%d", n)
			faults["isolate"]++
		case 2: // one pair: each of the two still reaches the third
			n := r.IntN(3)
			h.run("cut", fmt.Sprint(n), fmt.Sprint((n+1)%3))
			what = fmt.Sprintf("cut node%d-node%d", n, (n+1)%3)
			faults["cut pair"]++
		case 3:
			n := r.IntN(3)
			h.run("pause", fmt.Sprint(n))
			what = fmt.Sprintf("pause node%d", n)
			faults["pause"]++
		}
		events = append(events, event{hist.since(), what})
		time.Sleep(time.Duration(4000+r.IntN(8000)) * time.Millisecond)
		h.run("heal")
		healed = hist.since()
		events = append(events, event{healed, "heal"})
		time.Sleep(time.Duration(3000+r.IntN(5000)) * time.Millisecond)
	}
	halt()
	ended := hist.since()
	var sched []string
	for _, e := range events {
		sched = append(sched, fmt.Sprintf("%.1fs %s", e.at.Seconds(), e.what))
	}
	t.Logf("nemesis: %d faults %v; schedule: %s", len(events)/2, faults, strings.Join(sched, ", "))
	t.Logf("workload stopped %.1f s after the last heal", (ended - healed).Seconds())

	hist.mu.Lock()
	ops := slices.Clone(hist.ops)
	hist.mu.Unlock()
	slices.SortFunc(ops, func(a, b hop) int { return int(a.Start - b.Start) })
	if *partitionHistory != "" {
		writeHistory(t, *partitionHistory, ops)
	}

	ck := newChecker(ops)
	ck.during()

	// Convergence: from the last heal until the three nodes, each read
	// at ONE through itself, serve the same keys and versions (async
	// replication has caught up). That state is then checked against the
	// history: what it lacks, or holds older than acknowledged, is lost.
	h.waitHealthy(3, 120*time.Second)
	ncs := make([]*Collection, 3)
	for node := range ncs {
		ndb := h.nodeDB(node, Options{ReadConsistency: One, Timeout: 30 * time.Second})
		ncs[node] = ndb.newCollection(name, c.class, c.cfg, c.made, nil)
	}
	limit := max(convergeMax, dur/6)
	conv := time.Duration(-1)
	var state []cairn.Item
	var differ string
	for {
		var snaps [3]map[string]string
		var err error
		for node, nc := range ncs {
			var items []cairn.Item
			if items, err = nc.Find(ctx, nil, 0); err != nil {
				differ = fmt.Sprintf("node%d: %v", node, err)
				break
			}
			snaps[node] = map[string]string{}
			for _, it := range items {
				snaps[node][it.ID] = it.Text
			}
			state = items
		}
		now := hist.since()
		if err == nil {
			differ = ""
			for node := 1; node < 3 && differ == ""; node++ {
				differ = diffSnaps(snaps[0], snaps[node], node)
			}
			if differ == "" {
				conv = now - healed
				t.Logf("the nodes serve at ONE the same %d keys and versions %.1f s after the last heal", len(state), conv.Seconds())
				break
			}
		}
		if now-healed > limit {
			fail := t.Errorf
			if known["diverged"] {
				fail = t.Logf
			}
			fail("the nodes do not serve the same keys and versions at ONE %.0f s after the last heal: %s", (now - healed).Seconds(), differ)
			break
		}
		time.Sleep(2 * time.Second)
	}
	if conv >= 0 {
		ck.lost = append(ck.lost, ck.final(state)...)
	} else {
		for node, nc := range ncs {
			if items, err := nc.Find(ctx, nil, 0); err == nil {
				for _, b := range ck.final(items) {
					ck.lost = append(ck.lost, fmt.Sprintf("node%d at ONE, not converged: %s", node, b))
				}
			}
		}
	}

	t.Logf("history: %d operations in %.0f s: %d writes (%d acknowledged, %d failed of which %d not confirmed undone, %d unknown) of %d keys; %d reads (%d answered, %d errors): %v",
		len(ops), ended.Seconds(), ck.writes, ck.acked, ck.failed, ck.notUndone, ck.unknown, len(ck.keys), ck.reads, ck.readOK, ck.reads-ck.readOK, ck.byOp)
	convs := "none"
	if conv >= 0 {
		convs = fmt.Sprintf("%.1f s", conv.Seconds())
	}
	t.Logf("checker: %d lost acknowledged writes, %d reads of an undone write, %d phantom reads, %d silent partial reads (%d of %d finds, %d of %d counts); %d items missed by a find during their own update; %d stale reads (older than a write acknowledged before they began); convergence after the last heal %s",
		len(ck.lost), len(ck.undoneRead), len(ck.phantom), len(ck.partial), ck.partialFinds, ck.byCount["find"], ck.partialCounts, ck.byCount["count"], ck.inFlight, len(ck.stale), convs)
	t.Logf("retries by the workload's client: %d", wdb.Retries())
	report := func(class, what string, list []string) {
		fail := t.Errorf
		if known[class] {
			fail = t.Logf
			if len(list) > 0 {
				what = "known anomaly of the server (-partition.known): " + what
			}
		}
		for i, s := range list {
			if i == 10 {
				fail("%s: and %d more", what, len(list)-10)
				break
			}
			fail("%s: %s", what, s)
		}
	}
	report("lost", "lost acknowledged write", ck.lost)
	report("undone", "read of an undone write", ck.undoneRead)
	report("", "phantom read", ck.phantom)
	report("partial", "silent partial read", ck.partial)
	for i, s := range ck.stale {
		if i == 5 {
			break
		}
		t.Logf("stale read: %s", s)
	}
}

// healQuietly heals the cluster from a cleanup, logging a failure.
func healQuietly(h *harness) {
	if out, err := exec.Command(h.script, "heal").CombinedOutput(); err != nil {
		h.t.Logf("cluster.sh heal: %v\n%s", err, out)
	}
}

func writeHistory(t *testing.T, path string, ops []hop) {
	f, err := os.Create(path)
	if err != nil {
		t.Errorf("history: %v", err)
		return
	}
	enc := json.NewEncoder(f)
	for _, o := range ops {
		enc.Encode(o)
	}
	if err := f.Close(); err != nil {
		t.Errorf("history: %v", err)
	}
	t.Logf("history written to %s", path)
}

// write is one write of one key, as the checker sees it.
type write struct {
	v          int
	start, end time.Duration
	outcome    string // ok, fail, unknown (a failed write not confirmed undone is unknown)
	op         hop
}

// checker holds the history by key and what it found.
type checker struct {
	ops      []hop
	keys     map[string][]write // by key, in order (one writer per key)
	buckets  [partBuckets][]string
	firstAck map[string]time.Duration // end of a key's first acknowledged write

	writes, acked, failed, notUndone, unknown int
	reads, readOK                             int
	byOp                                      map[string]string

	lost, undoneRead, phantom, partial, stale []string
	partialFinds, partialCounts, inFlight     int
	byCount                                   map[string]int // answered reads by op
}

func newChecker(ops []hop) *checker {
	ck := &checker{ops: ops, keys: map[string][]write{}, byOp: map[string]string{}, byCount: map[string]int{}}
	counts := map[string][2]int{}
	for _, o := range ops {
		c := counts[o.Op]
		c[0]++
		if o.Outcome == outOK {
			c[1]++
			ck.byCount[o.Op]++
		}
		counts[o.Op] = c
		if o.Op != "add" && o.Op != "upsert" {
			ck.reads++
			if o.Outcome == outOK {
				ck.readOK++
			}
			continue
		}
		ck.writes++
		switch {
		case o.Outcome == outOK:
			ck.acked++
		case o.Outcome == outFail:
			ck.failed++
			if len(o.Unknown) > 0 {
				ck.notUndone++
			}
		default:
			ck.unknown++
		}
		for i, k := range o.Keys {
			out := o.Outcome
			if slices.Contains(o.Unknown, k) {
				out = outUnknown
			}
			ck.keys[k] = append(ck.keys[k], write{v: o.Vers[i], start: o.Start, end: o.End, outcome: out, op: o})
		}
	}
	for op, c := range counts {
		ck.byOp[op] = fmt.Sprintf("%d/%d ok", c[1], c[0])
	}
	return ck
}

// ackedBefore returns the last version of key acknowledged before t, or 0.
func (ck *checker) ackedBefore(key string, t time.Duration) int {
	v := 0
	for _, w := range ck.keys[key] {
		if w.outcome == outOK && w.end < t {
			v = w.v
		}
	}
	return v
}

// excerpt is the history of key, for a report.
func (ck *checker) excerpt(key string, read hop) string {
	var b strings.Builder
	for _, w := range ck.keys[key] {
		b.WriteString("\n\t" + w.op.String())
	}
	b.WriteString("\n\tread: " + read.String())
	return b.String()
}

// seen checks one version of key that read returned (0: not found).
func (ck *checker) seen(key string, v int, read hop) {
	acked := ck.ackedBefore(key, read.Start)
	if v == 0 {
		if acked > 0 && read.Op == "get" {
			ck.stale = append(ck.stale, fmt.Sprintf("%s not found, version %d acknowledged before the read:%s", key, acked, ck.excerpt(key, read)))
		}
		return
	}
	var w *write
	for i := range ck.keys[key] {
		if ck.keys[key][i].v == v {
			w = &ck.keys[key][i]
		}
	}
	switch {
	case w == nil || w.start > read.End:
		ck.phantom = append(ck.phantom, fmt.Sprintf("%s@%d, never written before the read ended:%s", key, v, ck.excerpt(key, read)))
	case w.outcome == outFail && w.end < read.Start:
		ck.undoneRead = append(ck.undoneRead, fmt.Sprintf("%s@%d, whose write failed and was undone before the read began:%s", key, v, ck.excerpt(key, read)))
	case v < acked:
		ck.stale = append(ck.stale, fmt.Sprintf("%s@%d, version %d acknowledged before the read:%s", key, v, acked, ck.excerpt(key, read)))
	}
}

// writing reports whether a write of key overlapped read.
func (ck *checker) writing(key string, read hop) bool {
	for _, w := range ck.keys[key] {
		if w.start < read.End && w.end > read.Start {
			return true
		}
	}
	return false
}

// diffSnaps describes the first difference between what node 0 and
// node serve (id → text), or returns "".
func diffSnaps(a, b map[string]string, node int) string {
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return fmt.Sprintf("node0 serves %s as %q, node%d as %q (%d and %d keys)", k, v, node, w, len(a), len(b))
		}
	}
	for k, w := range b {
		if _, ok := a[k]; !ok {
			return fmt.Sprintf("node%d serves %s as %q, node0 not at all (%d and %d keys)", node, k, w, len(a), len(b))
		}
	}
	return ""
}

// during checks every read of the history.
func (ck *checker) during() {
	ck.firstAck = map[string]time.Duration{}
	// For counts: when each key's add was acknowledged (lo), and from
	// when it may be counted and until when (hi).
	var ackEnds, addStarts, undoneEnds []time.Duration
	for k, ws := range ck.keys {
		ck.buckets[bucketOf(k)] = append(ck.buckets[bucketOf(k)], k)
		for _, w := range ws {
			if w.outcome == outOK {
				ck.firstAck[k] = w.end
				break
			}
		}
		addStarts = append(addStarts, ws[0].start)
		switch ws[0].outcome {
		case outOK:
			ackEnds = append(ackEnds, ws[0].end)
		case outFail:
			undoneEnds = append(undoneEnds, ws[0].end)
		}
	}
	for _, d := range [][]time.Duration{ackEnds, addStarts, undoneEnds} {
		slices.Sort(d)
	}
	before := func(d []time.Duration, t time.Duration) int {
		i, _ := slices.BinarySearch(d, t)
		return i
	}
	for _, o := range ck.ops {
		if o.Outcome != outOK {
			continue
		}
		switch o.Op {
		case "get":
			ck.seen(o.Keys[0], o.Vers[0], o)
		case "find":
			got := map[string]bool{}
			for i, k := range o.Keys {
				got[k] = true
				ck.seen(k, o.Vers[i], o)
			}
			partial := false
			for _, k := range ck.buckets[o.Bucket] {
				if at, ok := ck.firstAck[k]; ok && at < o.Start && !got[k] {
					if ck.writing(k, o) {
						// Weaviate replaces an object by a delete and
						// an insert: a search between them misses it.
						ck.inFlight++
						continue
					}
					partial = true
					ck.partial = append(ck.partial, fmt.Sprintf("find of bucket %d answered %d items without %s, acknowledged before it began:%s", o.Bucket, len(o.Keys), k, ck.excerpt(k, o)))
				}
			}
			if partial {
				ck.partialFinds++
			}
		case "count":
			// At least every key acknowledged before the count began; at
			// most every key whose add began before it ended and had not
			// failed and been undone before it began.
			lo := before(ackEnds, o.Start)
			hi := before(addStarts, o.End) - before(undoneEnds, o.Start)
			if o.N < lo {
				ck.partialCounts++
				ck.partial = append(ck.partial, fmt.Sprintf("count answered %d, %d keys acknowledged before it began: %s", o.N, lo, o))
			}
			// Above every key whose add began is a phantom; above those
			// not undone, the count holds a write reported undone.
			switch all := before(addStarts, o.End); {
			case o.N > all:
				ck.phantom = append(ck.phantom, fmt.Sprintf("count answered %d, at most %d keys written by its end: %s", o.N, all, o))
			case o.N > hi:
				ck.undoneRead = append(ck.undoneRead, fmt.Sprintf("count answered %d, at most %d keys written by its end and not undone before it began: %s", o.N, hi, o))
			}
		}
	}
}

// final checks a complete read after the heal: every key whose add was
// acknowledged is there, every key holds its last acknowledged version
// or a later unknown one, and nothing else is there. It returns what is
// wrong.
func (ck *checker) final(items []cairn.Item) []string {
	var bad []string
	got := map[string]int{}
	for _, it := range items {
		got[it.ID] = versionOf(it)
	}
	for k, ws := range ck.keys {
		allowed := map[int]bool{}
		for _, w := range ws {
			switch w.outcome {
			case outOK:
				clear(allowed)
				allowed[w.v] = true
			case outUnknown:
				allowed[w.v] = true
			}
		}
		if ck.ackedBefore(k, 1<<62) == 0 {
			allowed[0] = true // never acknowledged: may be absent
		}
		v, found := got[k]
		if !found {
			v = 0
		}
		if !allowed[v] {
			var want []int
			for a := range allowed {
				want = append(want, a)
			}
			slices.Sort(want)
			var b strings.Builder
			for _, w := range ws {
				b.WriteString("\n\t" + w.op.String())
			}
			bad = append(bad, fmt.Sprintf("%s@%d, want one of %v:%s", k, v, want, b.String()))
		}
	}
	for k := range got {
		if _, ok := ck.keys[k]; !ok {
			bad = append(bad, fmt.Sprintf("%s, never written", k))
		}
	}
	slices.Sort(bad)
	return bad
}

// TestPartitionChecker feeds the checker a made-up history with one of
// each anomaly, and a clean one.
func TestPartitionChecker(t *testing.T) {
	s := time.Second
	item := func(k string, v int) cairn.Item { return cairn.Item{ID: k, Text: k + "@" + strconv.Itoa(v)} }
	a, b := "w0-0", "w0-1"
	for i := 2; bucketOf(b) != bucketOf(a); i++ { // a find reads one bucket: put both in it
		b = fmt.Sprintf("w0-%d", i)
	}
	ops := []hop{
		{Proc: "w0", Op: "add", Keys: []string{a, b}, Vers: []int{1, 1}, Start: 0, End: 1 * s, Outcome: outOK},
		{Proc: "w0", Op: "upsert", Keys: []string{a}, Vers: []int{2}, Start: 2 * s, End: 3 * s, Outcome: outOK},
		{Proc: "w0", Op: "upsert", Keys: []string{b}, Vers: []int{2}, Start: 4 * s, End: 5 * s, Outcome: outFail},
		{Proc: "w0", Op: "upsert", Keys: []string{a}, Vers: []int{3}, Start: 6 * s, End: 7 * s, Outcome: outUnknown, Unknown: []string{a}},
		{Proc: "r0", Op: "get", Keys: []string{a}, Vers: []int{1}, Start: 4 * s, End: 4 * s, Outcome: outOK},                                         // stale
		{Proc: "r0", Op: "get", Keys: []string{b}, Vers: []int{2}, Start: 6 * s, End: 6 * s, Outcome: outOK},                                         // undone
		{Proc: "r0", Op: "get", Keys: []string{b}, Vers: []int{2}, Start: 4500 * time.Millisecond, End: 4600 * time.Millisecond, Outcome: outOK},     // in flight: fine
		{Proc: "r0", Op: "get", Keys: []string{a}, Vers: []int{9}, Start: 8 * s, End: 8 * s, Outcome: outOK},                                         // phantom
		{Proc: "r0", Op: "find", Bucket: bucketOf(a), Keys: []string{a}, Vers: []int{2}, Start: 3500 * time.Millisecond, End: 4 * s, Outcome: outOK}, // b missing
		{Proc: "r0", Op: "count", N: 1, Start: 2 * s, End: 2 * s, Outcome: outOK},                                                                    // partial
		{Proc: "r0", Op: "count", N: 3, Start: 2 * s, End: 2 * s, Outcome: outOK},                                                                    // phantom
		{Proc: "r0", Op: "count", N: 2, Start: 2 * s, End: 2 * s, Outcome: outOK},
		{Proc: "r0", Op: "get", Keys: []string{a}, Vers: []int{3}, Start: 6500 * time.Millisecond, End: 8 * s, Outcome: outOK},
	}
	ck := newChecker(ops)
	ck.during()
	if len(ck.stale) != 1 || len(ck.undoneRead) != 1 || len(ck.phantom) != 2 || len(ck.partial) != 2 {
		t.Errorf("stale %d, undone %d, phantom %d, partial %d; want 1, 1, 2, 2:\n%s\n%s\n%s\n%s", len(ck.stale), len(ck.undoneRead), len(ck.phantom), len(ck.partial),
			ck.stale, ck.undoneRead, ck.phantom, ck.partial)
	}
	for _, c := range []struct {
		items []cairn.Item
		bad   int
	}{
		{[]cairn.Item{item(a, 2), item(b, 1)}, 0},
		{[]cairn.Item{item(a, 3), item(b, 1)}, 0},               // the unknown write landed
		{[]cairn.Item{item(a, 1), item(b, 1)}, 1},               // version 2 lost
		{[]cairn.Item{item(a, 2), item(b, 2)}, 1},               // the undone write came back
		{[]cairn.Item{item(a, 2)}, 1},                           // b lost
		{[]cairn.Item{item(a, 2), item(b, 1), item("x", 1)}, 1}, // never written
	} {
		if bad := ck.final(c.items); len(bad) != c.bad {
			t.Errorf("final(%v) = %q, want %d wrong", c.items, bad, c.bad)
		}
	}
}
