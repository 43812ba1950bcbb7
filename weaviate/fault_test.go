// This file holds the fault tests: nodes of the test cluster killed with
// SIGKILL while clients read and write, and started again. They need
// CAIRN_WEAVIATE and CAIRN_WEAVIATE_CLUSTER (the path of cluster.sh, which
// kills and starts nodes by PID), and restart every node they kill, also
// when they fail.

package weaviate

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/memorytest"
	"github.com/cairndb/cairn/vector"
)

// harness controls the nodes of the test cluster through cluster.sh.
type harness struct {
	t      *testing.T
	script string
	addrs  []string
	db     *DB // every node
}

func newHarness(t *testing.T) *harness {
	addrs := clusterAddrs(t)
	script := os.Getenv("CAIRN_WEAVIATE_CLUSTER")
	if script == "" {
		t.Skip("fault tests need CAIRN_WEAVIATE_CLUSTER=path/to/cluster.sh")
	}
	if len(addrs) != 3 {
		t.Fatalf("fault tests need the 3 nodes of cluster.sh, got %v", addrs)
	}
	h := &harness{t: t, script: script, addrs: addrs, db: openCluster(t, &Options{Timeout: 60 * time.Second, AttemptTimeout: 15 * time.Second})}
	h.waitHealthy(3, 90*time.Second)
	return h
}

func (h *harness) run(args ...string) {
	h.t.Helper()
	out, err := exec.Command(h.script, args...).CombinedOutput()
	if err != nil {
		h.t.Fatalf("cluster.sh %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// kill sends SIGKILL to node i and arranges for it to be started again
// when the test ends, however it ends.
func (h *harness) kill(i int) {
	h.t.Helper()
	h.run("kill", fmt.Sprint(i))
	h.t.Logf("node%d killed", i)
	h.t.Cleanup(func() {
		if exec.Command(h.script, "start", fmt.Sprint(i)).Run() == nil {
			h.waitHealthy(3, 90*time.Second)
		}
	})
}

func (h *harness) start(i int) {
	h.t.Helper()
	h.run("start", fmt.Sprint(i))
	h.t.Logf("node%d started", i)
}

// healthy returns how many nodes the cluster reports healthy.
func (h *harness) healthy() int {
	var ans struct {
		Nodes []struct {
			Name   string `json:"name"`
			Status string `json:"status"`
		} `json:"nodes"`
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if _, err := h.db.cl.call(ctx, http.MethodGet, "/v1/nodes", nil, &ans); err != nil {
		return 0
	}
	n := 0
	for _, nd := range ans.Nodes {
		if nd.Status == "HEALTHY" {
			n++
		}
	}
	return n
}

func (h *harness) waitHealthy(n int, d time.Duration) {
	h.t.Helper()
	deadline := time.Now().Add(d)
	for h.healthy() < n {
		if time.Now().After(deadline) {
			h.t.Fatalf("fewer than %d healthy nodes after %v", n, d)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// leader returns the index of the Raft leader among the nodes.
func (h *harness) leader() int {
	var ans struct {
		Statistics []struct {
			Name     string `json:"name"`
			LeaderID string `json:"leaderId"`
		} `json:"statistics"`
	}
	if _, err := h.db.cl.call(context.Background(), http.MethodGet, "/v1/cluster/statistics", nil, &ans); err != nil || len(ans.Statistics) == 0 {
		h.t.Fatalf("cluster statistics: %v", err)
	}
	var id int
	if _, err := fmt.Sscanf(ans.Statistics[0].LeaderID, "node%d", &id); err != nil {
		h.t.Fatalf("leader %q: %v", ans.Statistics[0].LeaderID, err)
	}
	return id
}

// replicas returns, for each shard of class, the nodes holding it.
func (h *harness) replicas(class string) map[string][]int {
	var ans struct {
		Nodes []struct {
			Name   string `json:"name"`
			Shards []struct {
				Class string `json:"class"`
				Name  string `json:"name"`
			} `json:"shards"`
		} `json:"nodes"`
	}
	if _, err := h.db.cl.call(context.Background(), http.MethodGet, "/v1/nodes/"+class+"?output=verbose", nil, &ans); err != nil {
		h.t.Fatalf("nodes: %v", err)
	}
	out := map[string][]int{}
	for _, nd := range ans.Nodes {
		var i int
		fmt.Sscanf(nd.Name, "node%d", &i)
		for _, s := range nd.Shards {
			if s.Class == class {
				out[s.Name] = append(out[s.Name], i)
			}
		}
	}
	return out
}

// nodeDB opens a DB that talks to node i alone.
func (h *harness) nodeDB(i int, o Options) *DB {
	h.t.Helper()
	o.Shards, o.Replication = 3, 2
	db, err := Open(context.Background(), []string{h.addrs[i]}, &o)
	if err != nil {
		h.t.Fatalf("Open(node%d): %v", i, err)
	}
	h.t.Cleanup(func() { db.Close() })
	return db
}

func randItem(r *rand.Rand, id string, dim int) cairn.Item {
	v := make([]float32, dim)
	for i := range v {
		v[i] = r.Float32()*2 - 1
	}
	return cairn.Item{ID: id, Embedding: v, Text: "t " + id, Metadata: map[string]any{"n": r.IntN(10)}}
}

// TestClusterKillOne kills a node (not the Raft leader) while a writer
// adds items at QUORUM and a reader queries: every read must be answered,
// writes acknowledged, and no acknowledged write lost; the node, started
// again, must serve the writes it missed.
func TestClusterKillOne(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const dim = 16
	name := memorytest.Name(t)
	mc, err := h.db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: dim, Index: cairn.HNSW})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.db.DeleteCollection(context.Background(), name) })
	c := mc.(*Collection)
	r := rand.New(rand.NewPCG(1, 2))
	var pre []cairn.Item
	for i := range 200 {
		pre = append(pre, randItem(r, fmt.Sprintf("pre-%d", i), dim))
	}
	if err := c.Add(ctx, pre...); err != nil {
		t.Fatal(err)
	}

	var (
		mu         sync.Mutex
		acked      []string // acknowledged ids
		whileDown  []string // acknowledged after the kill
		failed     []string // ids of writes that failed
		writeErrs  []error
		reads      int
		readErrs   []error
		killed     bool
		writesDown int
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		r := rand.New(rand.NewPCG(3, 4))
		for b := 0; ; b++ {
			select {
			case <-stop:
				return
			default:
			}
			var batch []cairn.Item
			for j := range 5 {
				batch = append(batch, randItem(r, fmt.Sprintf("w-%d-%d", b, j), dim))
			}
			ts := time.Now()
			err := c.Add(ctx, batch...)
			mu.Lock()
			if killed && time.Since(ts) > time.Second {
				t.Logf("a write of %d items took %v: %v", len(batch), time.Since(ts).Round(10*time.Millisecond), err)
			}
			for _, it := range batch {
				if err == nil {
					acked = append(acked, it.ID)
					if killed {
						whileDown = append(whileDown, it.ID)
					}
				} else {
					failed = append(failed, it.ID)
				}
			}
			if err != nil {
				writeErrs = append(writeErrs, err)
			}
			if killed {
				writesDown++
			}
			mu.Unlock()
		}
	})
	wg.Go(func() {
		r := rand.New(rand.NewPCG(5, 6))
		for {
			select {
			case <-stop:
				return
			default:
			}
			q := randItem(r, "q", dim).Embedding
			_, err := c.Query(ctx, q, 5, nil)
			if err == nil {
				_, err = c.Get(ctx, pre[r.IntN(len(pre))].ID)
			}
			mu.Lock()
			reads++
			if err != nil {
				readErrs = append(readErrs, err)
			}
			mu.Unlock()
		}
	})
	time.Sleep(1500 * time.Millisecond)
	victim := (h.leader() + 1) % 3
	t0 := time.Now()
	mu.Lock()
	killed = true
	mu.Unlock()
	h.kill(victim)
	time.Sleep(10 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("node%d down for %v: %d reads (%d failed), %d writes while down, %d items acknowledged while down, %d failed writes, %d retries",
		victim, time.Since(t0).Round(time.Second), reads, len(readErrs), writesDown, len(whileDown), len(writeErrs), h.db.Retries())
	for _, e := range readErrs {
		t.Errorf("read failed: %v", e)
	}
	for _, e := range writeErrs {
		t.Errorf("QUORUM write failed: %v", e)
	}
	if len(whileDown) == 0 {
		t.Fatalf("no write was acknowledged while node%d was down", victim)
	}
	// Nothing acknowledged is lost, nothing failed is visible.
	all := append(append([]string(nil), idsOf(pre)...), acked...)
	if _, err := c.Get(ctx, all...); err != nil {
		t.Fatalf("acknowledged items lost: %v", err)
	}
	for _, id := range failed {
		if _, err := c.Get(ctx, id); !errors.Is(err, vector.ErrNotFound) {
			t.Errorf("item %q of a failed write: Get = %v, want ErrNotFound", id, err)
		}
	}
	if n, err := c.Count(ctx); err != nil || n != len(all) {
		t.Errorf("Count = %d, %v; want %d", n, err, len(all))
	}

	// Started again, the node rejoins and serves, as coordinator, the
	// writes it missed: at QUORUM, reading both replicas, and at ONE once
	// Weaviate's async replication has caught up (until then a ONE read
	// through it may answer from its own stale replica).
	h.start(victim)
	t1 := time.Now()
	h.waitHealthy(3, 90*time.Second)
	t.Logf("node%d healthy again after %v", victim, time.Since(t1).Round(100*time.Millisecond))
	sample := whileDown
	if len(sample) > restReads {
		sample = append(append([]string(nil), whileDown[:restReads/2]...), whileDown[len(whileDown)-restReads/2:]...)
	}
	for _, level := range []Consistency{Quorum, One} {
		vdb := h.nodeDB(victim, Options{ReadConsistency: level, Timeout: 20 * time.Second})
		vc := vdb.newCollection(name, c.class, c.cfg, nil)
		deadline := time.Now().Add(150 * time.Second)
		for {
			_, err := vc.Get(ctx, sample...)
			if err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("node%d does not serve the %d sampled items it missed at %s, %v after it started: %v", victim, len(sample), level, time.Since(t1), err)
			}
			time.Sleep(2 * time.Second)
		}
		t.Logf("node%d serves the %d sampled items it missed at %s, %v after it started", victim, len(sample), level, time.Since(t1).Round(time.Second))
	}
}

func idsOf(items []cairn.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.ID
	}
	return out
}

// TestClusterNoQuorum kills both replicas of a shard and writes a batch
// through the third node: the write must fail with a clear error, within
// its time bound, and leave none of its items visible, before and after
// the nodes come back.
func TestClusterNoQuorum(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	const dim = 8
	name := memorytest.Name(t)
	mc, err := h.db.CreateCollection(ctx, name, cairn.CollectionConfig{Dim: dim, Index: cairn.Flat})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.db.DeleteCollection(context.Background(), name) })
	c := mc.(*Collection)
	r := rand.New(rand.NewPCG(7, 8))
	var pre []cairn.Item
	for i := range 30 {
		pre = append(pre, randItem(r, fmt.Sprintf("pre-%d", i), dim))
	}
	if err := c.Add(ctx, pre...); err != nil {
		t.Fatal(err)
	}
	var dead []int
	for shard, nodes := range h.replicas(c.class) {
		if len(nodes) == 2 {
			dead = nodes
			t.Logf("shard %s lives on nodes %v: killing both", shard, nodes)
			break
		}
	}
	if dead == nil {
		t.Fatalf("no shard with 2 replicas: %v", h.replicas(c.class))
	}
	survivor := 3 - dead[0] - dead[1]
	for _, i := range dead {
		h.kill(i)
	}
	sdb := h.nodeDB(survivor, Options{Timeout: 15 * time.Second, MaxAttempts: 4, ReadConsistency: One})
	sc := sdb.newCollection(name, c.class, c.cfg, c.types)
	var batch []cairn.Item
	for i := range 60 {
		batch = append(batch, randItem(r, fmt.Sprintf("doomed-%d", i), dim))
	}
	t0 := time.Now()
	err = sc.Add(ctx, batch...)
	took := time.Since(t0)
	t.Logf("Add through node%d with nodes %v down: %v after %v", survivor, dead, err, took.Round(100*time.Millisecond))
	if err == nil {
		t.Fatalf("a write to a shard without live replicas succeeded")
	}
	var ae *APIError
	if !errors.Is(err, ErrUnavailable) && !errors.As(err, &ae) {
		t.Fatalf("error %v is neither ErrUnavailable nor an *APIError", err)
	}
	if took > 90*time.Second {
		t.Fatalf("the failed write took %v", took)
	}
	visible := func(c *Collection, level string) {
		for _, it := range batch {
			if _, err := c.Get(ctx, it.ID); err == nil {
				t.Errorf("item %q of the failed write is visible (%s)", it.ID, level)
			}
		}
	}
	visible(sc, "survivor alone, ONE")

	// The Add failed at its first step, the check that its ids are new
	// (their shard cannot be read either). Drive the write step itself
	// with the same items: the objects of the dead shard fail, those of
	// the live ones are written, and the undo of a failed write deletes
	// them again.
	rows, err := sc.prepare(ctx, "add", batch)
	if err != nil {
		t.Fatal(err)
	}
	objs := make([]object, len(rows))
	for i, r := range rows {
		objs[i] = sc.object(r)
	}
	t0 = time.Now()
	done, err := sdb.putObjects(ctx, objs)
	t.Logf("batch write of %d objects through node%d: %d written, then %v after %v", len(objs), survivor, len(done), err, time.Since(t0).Round(100*time.Millisecond))
	if err == nil || len(done) == len(objs) {
		t.Fatalf("every object of a batch reaching a dead shard was written")
	}
	if !strings.Contains(err.Error(), "replica") && !errors.Is(err, ErrUnavailable) {
		t.Errorf("the batch's error does not say what failed: %v", err)
	}
	// As Add does: a request that timed out may have written objects
	// without acknowledging them, so undo every object sent. While the
	// shard's replicas are down the undo itself may fail; it is retried
	// once they are back.
	uuids := make([]string, len(rows))
	for i, r := range rows {
		uuids[i] = r.uuid
	}
	undone := sc.undo(ctx, uuids, nil)
	if undone == nil {
		visible(sc, "survivor alone after the undo, ONE")
	} else {
		t.Logf("undo with the replicas down: %v (retried once they are back)", undone)
	}
	for _, i := range dead {
		h.start(i)
	}
	h.waitHealthy(3, 90*time.Second)
	if undone != nil {
		if err := sc.undo(ctx, uuids, nil); err != nil {
			t.Fatalf("undo with every node back: %v", err)
		}
	}
	visible(c, "all nodes back, QUORUM")
	if _, err := c.Get(ctx, idsOf(pre)...); err != nil {
		t.Fatalf("items stored before the fault: %v", err)
	}
}
