package sqlitestore

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cairndb/cairn/vector"
)

// The crash tests re-run this test binary as a child process (selected by
// childEnv) that writes to a database and prints every acknowledged write
// on stdout; the parent kills it with SIGKILL at a random moment, reopens
// the file and checks that everything acknowledged is there, whole.

var crashRounds = flag.Int("crash.rounds", 0, "crash-test rounds to run in addition to the default 30 (writes) and 6 (index saves)")

const (
	childEnv  = "CAIRN_SQLITESTORE_CHILD"
	childPath = "CAIRN_SQLITESTORE_PATH"
	childBase = "CAIRN_SQLITESTORE_BASE"
	crashDim  = 32
)

// TestCrashChild is the child side; it does nothing in a normal run.
func TestCrashChild(t *testing.T) {
	mode := os.Getenv(childEnv)
	if mode == "" {
		t.Skip("only runs as the child of a crash test")
	}
	ctx := context.Background()
	db, err := Open(ctx, os.Getenv(childPath), nil)
	if err != nil {
		fmt.Printf("open-error %v\n", err)
		os.Exit(2)
	}
	c, err := db.Collection(ctx, "c")
	if errors.Is(err, vector.ErrNotFound) {
		c, err = db.CreateCollection(ctx, "c", CollectionConfig{Dim: crashDim, Metric: vector.L2})
	}
	if err != nil {
		fmt.Printf("collection-error %v\n", err)
		os.Exit(2)
	}
	base, _ := strconv.ParseUint(os.Getenv(childBase), 10, 64)
	var outMu sync.Mutex
	say := func(format string, args ...any) {
		outMu.Lock()
		fmt.Fprintf(os.Stdout, format+"\n", args...)
		outMu.Unlock()
	}
	switch mode {
	case "hold":
		say("ready")
		io.Copy(io.Discard, os.Stdin) // until the parent kills us
	case "write":
		say("ready")
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(base, uint64(w)))
				next := vector.ID(base + uint64(w)<<32)
				var mine []vector.ID
				for {
					switch op := r.IntN(10); {
					case op < 2 && len(mine) > 0: // delete one of ours
						i := r.IntN(len(mine))
						id := mine[i]
						mine = append(mine[:i], mine[i+1:]...)
						say("try-del %d", id)
						if err := c.DeleteItems(ctx, []vector.ID{id}); err != nil {
							say("error %v", err)
							return
						}
						say("del %d", id)
					case op < 3 && len(mine) > 0: // replace one of ours by its second version
						id := mine[r.IntN(len(mine))]
						say("try-up %d", id)
						if err := c.UpsertItems(ctx, []Item{itemV2(id)}); err != nil {
							say("error %v", err)
							return
						}
						say("up %d", id)
					default: // put a batch of 1 to 8
						n := 1 + r.IntN(8)
						items := make([]Item, n)
						ids := make([]string, n)
						for i := range items {
							items[i] = itemFor(next, crashDim)
							ids[i] = strconv.FormatUint(uint64(next), 10)
							mine = append(mine, next)
							next++
						}
						if err := c.PutItems(ctx, items); err != nil {
							say("error %v", err)
							return
						}
						say("ack %s", strings.Join(ids, " "))
					}
				}
			}()
		}
		wg.Wait()
	case "index":
		if c.Len() == 0 {
			var items []Item
			for id := vector.ID(1); id <= 100; id++ {
				items = append(items, itemFor(id, crashDim))
			}
			if err := c.PutItems(ctx, items); err != nil {
				say("error %v", err)
				os.Exit(2)
			}
		}
		say("ready")
		for seq := base; ; seq++ {
			if err := c.SaveIndex(ctx, "graph", fakeIndex{seq: seq, size: 4 << 20}); err != nil {
				say("error %v", err)
				os.Exit(2)
			}
			say("saved %d", seq)
		}
	}
	os.Exit(0)
}

// itemV2 is the second version of item id, written by an upsert.
func itemV2(id vector.ID) Item {
	return Item{ID: id, Key: fmt.Sprintf("k%d", id), Vector: vecFor(id|1<<62, crashDim), Text: fmt.Sprintf("second version of %d", id),
		Metadata: []byte(fmt.Sprintf(`{"id":%d,"version":2}`, id))}
}

func checkItemV2(it Item) error {
	want := itemV2(it.ID)
	if it.Key != want.Key || it.Text != want.Text || string(it.Metadata) != string(want.Metadata) || !equalVec(it.Vector, want.Vector) {
		return fmt.Errorf("id %d is not its second version", it.ID)
	}
	return nil
}

// fakeIndex stands for an index graph: size bytes derived from seq, which
// its ReadFrom checks byte for byte.
type fakeIndex struct {
	seq  uint64
	size int
}

func (f fakeIndex) byteAt(i int) byte { return byte(uint64(i)*2654435761>>13 + f.seq) }

func (f fakeIndex) WriteTo(w io.Writer) (int64, error) {
	var total int64
	var hdr [16]byte
	binary.LittleEndian.PutUint64(hdr[:], f.seq)
	binary.LittleEndian.PutUint64(hdr[8:], uint64(f.size))
	n, err := w.Write(hdr[:])
	total += int64(n)
	if err != nil {
		return total, err
	}
	buf := make([]byte, 64<<10)
	for off := 0; off < f.size; off += len(buf) {
		chunk := buf[:min(len(buf), f.size-off)]
		for i := range chunk {
			chunk[i] = f.byteAt(off + i)
		}
		n, err := w.Write(chunk)
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// fakeLoader is the ReaderFrom of fakeIndex: it records the seq it read and
// fails if any byte is off.
type fakeLoader struct{ seq uint64 }

func (l *fakeLoader) ReadFrom(r io.Reader) (int64, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return int64(len(b)), err
	}
	if len(b) < 16 {
		return int64(len(b)), fmt.Errorf("fake index: %w: short", vector.ErrCorrupt)
	}
	f := fakeIndex{seq: binary.LittleEndian.Uint64(b), size: int(binary.LittleEndian.Uint64(b[8:]))}
	if len(b) != 16+f.size {
		return int64(len(b)), fmt.Errorf("fake index: %w: %d bytes, want %d", vector.ErrCorrupt, len(b), 16+f.size)
	}
	for i, x := range b[16:] {
		if x != f.byteAt(i) {
			return int64(len(b)), fmt.Errorf("fake index: %w: byte %d", vector.ErrCorrupt, i)
		}
	}
	l.seq = f.seq
	return int64(len(b)), nil
}

// child is a running child process and the lines it has printed.
type child struct {
	cmd   *exec.Cmd
	lines chan string
	stdin io.WriteCloser
}

func startChild(t *testing.T, mode, path string, base uint64) *child {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, childPath+"="+path, childBase+"="+strconv.FormatUint(base, 10))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ch := &child{cmd: cmd, lines: make(chan string, 1024), stdin: stdin}
	go func() {
		defer close(ch.lines)
		br := bufio.NewReader(out)
		for {
			s, err := br.ReadString('\n')
			if err != nil {
				return // a line cut short by the kill is not an acknowledgement
			}
			ch.lines <- strings.TrimSuffix(s, "\n")
		}
	}()
	return ch
}

// waitReady waits for the child's "ready" line.
func (ch *child) waitReady(t *testing.T) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case s, ok := <-ch.lines:
			if !ok {
				t.Fatal("child exited before it was ready")
			}
			if s == "ready" {
				return
			}
			t.Fatalf("child: %s", s)
		case <-timeout:
			ch.cmd.Process.Kill()
			t.Fatal("child not ready after 60s")
		}
	}
}

// kill sends SIGKILL, waits for the process and returns every complete
// line it printed after "ready".
func (ch *child) kill(t *testing.T, after time.Duration) []string {
	t.Helper()
	var lines []string
	deadline := time.After(after)
collect:
	for {
		select {
		case s, ok := <-ch.lines:
			if !ok {
				break collect
			}
			lines = append(lines, s)
		case <-deadline:
			break collect
		}
	}
	ch.cmd.Process.Kill()
	for s := range ch.lines {
		lines = append(lines, s)
	}
	ch.cmd.Wait()
	for _, s := range lines {
		if strings.HasPrefix(s, "error") || strings.HasPrefix(s, "open-error") {
			t.Fatalf("child reported: %s", s)
		}
	}
	return lines
}

func TestCrashWrites(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	rounds := 30 + *crashRounds
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d rounds", seed, rounds)
	r := rand.New(rand.NewPCG(seed, 1))
	path := filepath.Join(t.TempDir(), "crash.cairn")
	present := map[vector.ID]bool{} // acknowledged and not (being) deleted
	maybe := map[vector.ID]bool{}   // deletion begun but not acknowledged
	// replaced[id] is true once an upsert to the second version was
	// acknowledged, false while one is begun but not acknowledged.
	replaced := map[vector.ID]bool{}
	acked := 0
	for round := range rounds {
		ch := startChild(t, "write", path, uint64(round+1)<<20)
		ch.waitReady(t)
		lines := ch.kill(t, time.Duration(r.IntN(80))*time.Millisecond)
		for _, s := range lines {
			f := strings.Fields(s)
			for _, w := range f[1:] {
				n, err := strconv.ParseUint(w, 10, 64)
				if err != nil {
					t.Fatalf("bad line %q", s)
				}
				id := vector.ID(n)
				switch f[0] {
				case "ack":
					present[id] = true
					acked++
				case "try-del":
					delete(present, id)
					maybe[id] = true
				case "del":
					delete(maybe, id)
				case "try-up":
					if present[id] && !replaced[id] {
						replaced[id] = false // v1 or v2 until acknowledged
					}
				case "up":
					if present[id] {
						replaced[id] = true
					}
				}
			}
		}
		verifyCrashDB(t, path, present, maybe, replaced)
		for id := range maybe { // settle: what is there now stays there
			delete(maybe, id)
		}
	}
	t.Logf("%d rounds, %d writes acknowledged, %d items at the end", rounds, acked, len(present))
}

// verifyCrashDB reopens the database and checks it against what the
// children acknowledged; it also folds unacknowledged survivors into
// present, since they are now part of the file.
func verifyCrashDB(t *testing.T, path string, present, maybe, replaced map[vector.ID]bool) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer db.Close()
	if err := db.IntegrityCheck(ctx); err != nil {
		t.Fatalf("after kill: %v", err)
	}
	c, err := db.Collection(ctx, "c")
	if errors.Is(err, vector.ErrNotFound) && len(present) == 0 {
		return // killed before the collection was committed
	}
	if err != nil {
		t.Fatal(err)
	}
	found := map[vector.ID]bool{}
	err = c.ForEachItem(ctx, func(it Item) error {
		found[it.ID] = true
		v2, pending := replaced[it.ID]
		errV1, errV2 := checkItem(it, crashDim), checkItemV2(it)
		switch {
		case errV1 != nil && errV2 != nil:
			return fmt.Errorf("partial or wrong item: %w; %w", errV1, errV2)
		case v2 && errV2 != nil:
			return fmt.Errorf("acknowledged replacement lost: %w", errV2)
		case !pending && errV1 != nil:
			return fmt.Errorf("item replaced without an upsert: %w", errV1)
		}
		if errV2 == nil {
			replaced[it.ID] = true // settled: it is the second version now
		} else if pending && !v2 {
			delete(replaced, it.ID) // the unacknowledged upsert did not happen
		}
		got, err := c.Get(it.ID)
		if err != nil || !equalVec(got, it.Vector) {
			return fmt.Errorf("arena disagrees with SQLite on id %d: %v", it.ID, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != len(found) {
		t.Fatalf("arena holds %d vectors, SQLite %d items", c.Len(), len(found))
	}
	for id := range present {
		if !found[id] {
			t.Fatalf("acknowledged item %d lost", id)
		}
	}
	for id := range found {
		if !present[id] && !maybe[id] {
			present[id] = true // committed, killed before the ack was printed
		}
	}
	for id := range maybe {
		if found[id] {
			present[id] = true
		}
	}
	// A search finds an acknowledged item: exact scan over the arena.
	for id := range present {
		q := vecFor(id, crashDim)
		if replaced[id] {
			q = itemV2(id).Vector
		}
		res, err := bruteForce(c, q, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 || res[0].ID != id || res[0].Distance != 0 {
			t.Fatalf("search for item %d found %v", id, res)
		}
		break
	}
}

// bruteForce is an exact top-k over a store, through ViewBlocks.
func bruteForce(s vector.Store, q vector.Vector, k int) ([]vector.Result, error) {
	q, err := vector.Prepare(q, s.Dim(), s.Metric())
	if err != nil {
		return nil, err
	}
	var res []vector.Result
	err = s.(vector.BlockViewer).ViewBlocks(func(blocks []vector.Block) error {
		for _, b := range blocks {
			out := make([]float32, len(b.IDs))
			s.Metric().BatchDistance(q, b.Data, out)
			for i, d := range out {
				if b.Live[i] {
					res = append(res, vector.Result{ID: b.IDs[i], Distance: d})
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortResults(res)
	return res[:min(k, len(res))], nil
}

func sortResults(res []vector.Result) {
	for i := 1; i < len(res); i++ {
		for j := i; j > 0 && res[j].Less(res[j-1]); j-- {
			res[j], res[j-1] = res[j-1], res[j]
		}
	}
}

func TestCrashIndexSave(t *testing.T) {
	if testing.Short() {
		t.Skip("crash test re-executes the test binary")
	}
	rounds := 6 + *crashRounds/5
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d rounds", seed, rounds)
	r := rand.New(rand.NewPCG(seed, 2))
	path := filepath.Join(t.TempDir(), "crash.cairn")
	ctx := context.Background()
	var lastAcked uint64
	saves, loads := 0, 0
	for round := range rounds {
		base := uint64(round+1) * 1000
		ch := startChild(t, "index", path, base)
		ch.waitReady(t)
		lines := ch.kill(t, time.Duration(r.IntN(300))*time.Millisecond)
		for _, s := range lines {
			if seq, ok := strings.CutPrefix(s, "saved "); ok {
				lastAcked, _ = strconv.ParseUint(seq, 10, 64)
				saves++
			}
		}
		db, err := Open(ctx, path, nil)
		if err != nil {
			t.Fatalf("reopen: %v", err)
		}
		if err := db.IntegrityCheck(ctx); err != nil {
			t.Fatal(err)
		}
		c, err := db.Collection(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		var l fakeLoader
		err = c.LoadIndex(ctx, "graph", &l)
		switch {
		case errors.Is(err, vector.ErrNotFound) && lastAcked == 0:
		case err != nil:
			t.Fatalf("round %d: load after kill (last acknowledged save %d): %v", round, lastAcked, err)
		case l.seq < lastAcked:
			t.Fatalf("round %d: loaded save %d, but %d was acknowledged", round, l.seq, lastAcked)
		default:
			lastAcked = l.seq
			loads++
		}
		if c.Len() != 100 {
			t.Fatalf("items: %d, want 100", c.Len())
		}
		db.Close()
	}
	t.Logf("%d saves acknowledged; a whole save loaded after %d of %d kills", saves, loads, rounds)
}

func TestLockAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "held.cairn")
	ch := startChild(t, "hold", path, 0)
	ch.waitReady(t)
	if _, err := Open(ctx, path, nil); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open of a file another process holds: %v, want ErrLocked", err)
	}
	start := time.Now()
	if _, err := Open(ctx, path, &Options{LockTimeout: 200 * time.Millisecond}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Open with LockTimeout: %v, want ErrLocked", err)
	} else if d := time.Since(start); d < 150*time.Millisecond {
		t.Fatalf("Open gave up after %v, before its LockTimeout", d)
	}
	ch.kill(t, 0)
	db, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatalf("Open after the holder died: %v", err)
	}
	db.Close()
}
