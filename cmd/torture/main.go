// Command torture crash-tests cairn through its public API: it starts
// child processes that run a random mixed workload on a database file
// (Add, Upsert, Delete, DeleteWhere, Restore of chosen ids to a moment
// between two writes and its undo, CreateCollection and DeleteCollection,
// over Flat, HNSW and Auto collections, the Auto one crossing its switch
// and another, with a recall target, measuring its ways to it there,
// and reopens that save and load the HNSW graphs), kills each with SIGKILL
// at a random moment or at a targeted one, reopens the file and checks it
// against every write the child had acknowledged:
//
//   - the file opens, and passes SQLite's integrity check;
//   - every acknowledged write is there, with its exact embedding, text and
//     metadata, and every acknowledged delete is gone;
//   - each write in flight at the kill is there wholly or not at all;
//   - nothing is there that no write left;
//   - the HNSW indexes (saved graphs or rebuilt) answer like their items;
//   - in the collections that keep history (Flat, HNSW and their
//     tenants), each id's newest version is its item, its versions meet
//     end to start, every version an acknowledged write of the trial
//     stored is among them, and none is one that no write stored.
//
// In trials killed at a random moment, the parent also stops the child
// once before the kill, opens the file read-only beside it (in the
// parent, as another process would) and lets it go on: the reader's
// snapshot must pass the same checks against the writes acknowledged
// before the stop, while the child keeps writing and is then killed.
//
// A file serves a chain of trials (-chain), each child writing on what the
// kills before it left. Usage:
//
//	go run ./cmd/torture -trials 1000 -dir /some/disk
//	go run -tags cairn_crashpoint ./cmd/torture -trials 1000 -dir /some/disk
//
// The second form also kills at crash points inside the library (between
// a commit and its acknowledgement, inside an index save). With
// -page-vectors DIR the children and the checks page the vectors in DIR
// (sqlitestore.Options.PageVectorsIn). The last line
// is "trials N, acknowledged A, lost L, refused R, corrupt C"; the exit
// status is non-zero if any write was lost, any file refused or damaged.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/crashpoint"
	"github.com/cairndb/cairn/internal/powerfail"
	"github.com/cairndb/cairn/internal/vfsname"
	"github.com/cairndb/cairn/sqlitestore"
)

func main() {
	var (
		trials   = flag.Int("trials", 30, "trials to run")
		dir      = flag.String("dir", "", "directory for the database files (default: a temporary directory, removed at the end)")
		seed     = flag.Uint64("seed", 0, "random seed (default: from the clock)")
		chain    = flag.Int("chain", 5, "trials per database file")
		syncFlag = flag.String("sync", "full", "durability of the children's commits: full or normal")
		verbose  = flag.Bool("v", false, "report every trial")
		within   = flag.Duration("kill-within", 3*time.Second, "kill each child within about this long of its start")
		keep     = flag.Bool("keep", false, "keep the database files")
		pages    = flag.String("page-vectors", "", "page the collections' vectors in this directory (sqlitestore.Options.PageVectorsIn), in the children and the checks")

		soak       = flag.Duration("soak", 0, "instead of crash trials, soak for this long (8 writers, 8 readers, deletes and upserts) sampling RSS and file size")
		soakEvery  = flag.Duration("soak-every", 10*time.Second, "sampling interval of -soak")
		soakReopen = flag.Duration("soak-reopen", 5*time.Minute, "reopen interval of -soak")
		soakCSV    = flag.String("soak-csv", "", "write the -soak samples to this CSV file")
		soakSVG    = flag.String("soak-svg", "", "plot the -soak samples to this SVG file")

		childMode  = flag.Bool("child", false, "run as a child (internal)")
		childPath  = flag.String("path", "", "database of the child (internal)")
		childTrial = flag.Int("trial", 0, "trial number of the child (internal)")
		childLog   = flag.String("powerlog", "", "record the child's I/O to this log (internal)")
		compact    = flag.Bool("compact", false, "instead of the workload, kill children running cairn.Compact on a file of known content and check that it lists as before (with -powerloss, images of what a power cut could leave)")
		compactMB  = flag.Int("compact-mb", 40, "size of the file -compact builds, in MiB")
		powerloss  = flag.Bool("powerloss", false, "check, instead of the files a kill leaves, images of what a power cut could leave (writes no fsync covered lost, kept in order up to a torn sector, or kept at random)")
	)
	flag.Parse()
	syncMode := sqlitestore.SyncFull
	switch *syncFlag {
	case "full":
	case "normal":
		syncMode = sqlitestore.SyncNormal
	default:
		fmt.Fprintf(os.Stderr, "torture: -sync must be full or normal\n")
		os.Exit(2)
	}
	if *seed == 0 {
		*seed = uint64(time.Now().UnixNano())
	}
	killWithin = *within
	pageVectorsIn = *pages
	if *childMode {
		if *childLog != "" {
			if err := powerfail.Register(*childLog); err != nil {
				fmt.Printf("err 0 %v\n", err)
				os.Exit(3)
			}
			vfsname.Name = powerfail.VFSName
		}
		if *compact {
			runCompactChild(*childPath)
			return
		}
		runChild(*childPath, *childTrial, *seed, syncMode)
		return
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "cairn-torture-")
		if err != nil {
			fmt.Fprintf(os.Stderr, "torture: %v\n", err)
			os.Exit(2)
		}
		*dir = d
		if !*keep {
			defer os.RemoveAll(d)
		}
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		fmt.Fprintf(os.Stderr, "torture: %v\n", err)
		os.Exit(2)
	}
	if *soak > 0 {
		if err := runSoak(*dir, *soak, *soakEvery, *soakReopen, *soakCSV, *soakSVG, *seed); err != nil {
			fmt.Fprintf(os.Stderr, "torture: soak: %v\n", err)
			defer os.Exit(1)
		}
		return
	}
	var ok bool
	if *compact {
		ok = runCompact(*trials, *dir, *seed, *compactMB, *powerloss, *verbose)
	} else if *powerloss {
		ok = runPower(*trials, *dir, *seed, *syncFlag, *verbose)
	} else {
		ok = run(*trials, *dir, *seed, *chain, *syncFlag, *verbose, *keep)
	}
	if !ok {
		defer os.Exit(1) // runs last: the directory is removed first
	}
}

// killWithin bounds how long a child runs before it is killed (-kill-within).
var killWithin = 3 * time.Second

// pageVectorsIn is the directory in which the children and the checks
// page the collections' vectors (-page-vectors), "" for none.
var pageVectorsIn string

// storeOptions returns the options the children and the checks open a
// file with: sync as given, the vectors paged under -page-vectors.
func storeOptions(sync sqlitestore.Sync) *cairn.Options {
	return &cairn.Options{SQLite: &sqlitestore.Options{Sync: sync, PageVectorsIn: pageVectorsIn}}
}

// kill strategies
const (
	killRandom     = "random"     // at a random moment
	killCheckpoint = "checkpoint" // as soon as the database file (not the log) changes: mid-checkpoint
	killReopen     = "reopen"     // during a Close, which saves the HNSW graphs, or the Open after it
	killCommit     = "commit"     // at a crash point right after a commit (cairn_crashpoint builds)
	killSaveIndex  = "save-index" // at a crash point inside an index save (cairn_crashpoint builds)
)

func strategies() []string {
	s := []string{killRandom, killRandom, killCheckpoint, killReopen}
	if crashpoint.Enabled {
		s = append(s, killCommit, killSaveIndex)
	}
	return s
}

type totals struct {
	trials, acked, lost, refused, corrupt, childErrs int
	readers, readSkips                               int
	restores, restoresInFlight                       int // Restores acknowledged, and in flight at a kill
	byKill                                           map[string]int
}

func run(trials int, dir string, seed uint64, chain int, syncFlag string, verbose, keep bool) bool {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "torture: %v\n", err)
		return false
	}
	r := rand.New(rand.NewPCG(seed, 0))
	fmt.Printf("torture: seed %d, %d trials in %s, %d per file, sync %s, crash points %v\n", seed, trials, dir, chain, syncFlag, crashpoint.Enabled)
	t := totals{byKill: map[string]int{}}
	var (
		path   string
		want   model
		stored history // every version a write of the chain stored or may have
	)
	start := time.Now()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM) // finish the trial, then tally
	defer signal.Stop(stop)
	for trial := 1; trial <= trials; trial++ {
		select {
		case <-stop:
			fmt.Printf("torture: interrupted after %d trials\n", t.trials)
			trial = trials + 1
			continue
		default:
		}
		if (trial-1)%chain == 0 || want == nil {
			if path != "" && !keep {
				removeDB(path)
			}
			path = filepath.Join(dir, fmt.Sprintf("chain-%d.cairn", trial))
			want, stored = model{}, history{}
		}
		kill := strategies()[r.IntN(len(strategies()))]
		res := runTrial(ctx, self, path, trial, r.Uint64(), kill, syncFlag, r, true)
		t.trials++
		t.byKill[kill]++
		line := fmt.Sprintf("trial %d (%s, killed %s after %v): ", trial, filepath.Base(path), kill, res.after.Round(time.Millisecond))
		if res.err != nil {
			t.childErrs++
			fmt.Printf("%sharness: %v\n", line, res.err)
			want = nil
			continue
		}
		if res.childErr != "" {
			t.childErrs++
			fmt.Printf("%schild failed: %s\n", line, res.childErr)
		}
		stored.add(res.acked)
		stored.add(res.pending)
		if !t.reader(ctx, line, want, res, r.Uint64(), stored) {
			want = nil
			continue
		}
		acked := 0
		next := want.clone()
		var modelErr error
		for _, o := range res.pending {
			if o.kind == "restore" {
				t.restoresInFlight++
			}
		}
		for _, o := range res.acked {
			if o.kind == "restore" {
				t.restores++
			}
			acked += o.writes()
			if err := next.apply(o); err != nil && modelErr == nil {
				modelErr = err
			}
		}
		t.acked += acked
		if modelErr != nil {
			t.corrupt++
			fmt.Printf("%sthe acknowledged writes contradict the model: %v\n", line, modelErr)
			want = nil
			continue
		}
		v := check(ctx, path, next, res.pending, r.Uint64(), nil, &pastCheck{stored: stored, acked: res.acked})
		switch {
		case v.refused != nil:
			t.refused++
			fmt.Printf("%sREFUSED: %v\n", line, v.refused)
			want = nil
			continue
		case len(v.lost) > 0 || len(v.corrupt) > 0:
			t.lost += len(v.lost)
			if len(v.corrupt) > 0 {
				t.corrupt++
			}
			fmt.Printf("%s%d acknowledged, LOST %d, CORRUPT %d\n", line, acked, len(v.lost), len(v.corrupt))
			for _, s := range append(v.lost, v.corrupt...)[:min(10, len(v.lost)+len(v.corrupt))] {
				fmt.Printf("    %s\n", s)
			}
			want = nil
			continue
		}
		want = v.resolved
		if verbose {
			n := 0
			for _, items := range want {
				n += len(items)
			}
			fmt.Printf("%s%d acknowledged, %d in flight, %d items, ok\n", line, acked, len(res.pending), n)
		}
		if trial%50 == 0 {
			fmt.Fprintf(os.Stderr, "torture: %d trials, %v\n", trial, time.Since(start).Round(time.Second))
		}
	}
	if path != "" && !keep {
		removeDB(path)
	}
	var kills []string
	for _, k := range []string{killRandom, killCheckpoint, killReopen, killCommit, killSaveIndex} {
		if t.byKill[k] > 0 {
			kills = append(kills, fmt.Sprintf("%s %d", k, t.byKill[k]))
		}
	}
	fmt.Printf("kills: %s; readers beside the writer %d (skipped %d); restores %d (in flight at a kill %d); child errors %d; %v\n",
		strings.Join(kills, ", "), t.readers, t.readSkips, t.restores, t.restoresInFlight, t.childErrs, time.Since(start).Round(time.Second))
	fmt.Printf("trials %d, acknowledged %d, lost %d, refused %d, corrupt %d\n", t.trials, t.acked, t.lost, t.refused, t.corrupt)
	return t.lost == 0 && t.refused == 0 && t.corrupt == 0 && t.childErrs == 0
}

// reader checks the snapshot of the reader opened beside the child
// against want and the writes the child had acknowledged by then, tallies
// it, and reports whether it passed.
func (t *totals) reader(ctx context.Context, line string, want model, res trialResult, seed uint64, stored history) bool {
	switch {
	case res.readErr != nil:
		t.refused++
		fmt.Printf("%sREADER REFUSED beside the writer: %v\n", line, res.readErr)
		return false
	case res.readSkip != "":
		t.readSkips++
		return true
	case res.reader == nil:
		return true
	}
	defer res.reader.Close()
	t.readers++
	acked, pending, _, _, err := parseLog(res.readLines)
	if err != nil {
		t.childErrs++
		fmt.Printf("%sharness: reader: %v\n", line, err)
		return false
	}
	next := want.clone()
	for _, o := range acked {
		if err := next.apply(o); err != nil {
			return true // reported by the trial's own check
		}
	}
	v := &verdict{}
	checkDB(ctx, v, res.reader, next, pending, seed, nil, &pastCheck{stored: stored, acked: acked})
	if len(v.lost) == 0 && len(v.corrupt) == 0 {
		return true
	}
	t.lost += len(v.lost)
	if len(v.corrupt) > 0 {
		t.corrupt++
	}
	fmt.Printf("%sREADER beside the writer: LOST %d, CORRUPT %d\n", line, len(v.lost), len(v.corrupt))
	for _, s := range append(v.lost, v.corrupt...)[:min(10, len(v.lost)+len(v.corrupt))] {
		fmt.Printf("    %s\n", s)
	}
	return false
}

func removeDB(path string) {
	for _, p := range []string{path, path + "-wal", path + "-journal"} {
		os.Remove(p)
	}
}

type trialResult struct {
	acked, pending []*op
	childErr       string
	after          time.Duration
	err            error
	// reader, if set, was opened read-only while the child was stopped,
	// after the child had printed readLines: its snapshot must hold what
	// they acknowledge. readSkip says why no reader was opened, readErr
	// why it could not be.
	reader    *cairn.DB
	readLines []string
	readSkip  string
	readErr   error
}

// runTrial runs one child on path and kills it as kill says.
func runTrial(ctx context.Context, self, path string, trial int, seed uint64, kill, syncFlag string, r *rand.Rand, readBeside bool, extra ...string) trialResult {
	args := append([]string{"-child", "-path", path, "-trial", fmt.Sprint(trial), "-seed", fmt.Sprint(seed), "-sync", syncFlag, "-page-vectors", pageVectorsIn}, extra...)
	cmd := exec.Command(self, args...)
	cmd.Env = os.Environ()
	switch kill {
	case killCommit:
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%s:%d", crashpoint.Env, crashpoint.Commit, 1+r.IntN(100)))
	case killSaveIndex:
		cmd.Env = append(cmd.Env, fmt.Sprintf("%s=%s:%d", crashpoint.Env, crashpoint.SaveIndex, 1+r.IntN(3)))
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return trialResult{err: err}
	}
	if err := cmd.Start(); err != nil {
		return trialResult{err: err}
	}
	var (
		mu      sync.Mutex
		lines   []string
		ready   = make(chan struct{})
		reopen  = make(chan struct{}, 1)
		readErr = make(chan error, 1)
	)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<24)
		once := false
		for sc.Scan() {
			l := sc.Text()
			mu.Lock()
			lines = append(lines, l)
			mu.Unlock()
			if l == "ready" && !once {
				once = true
				close(ready)
			}
			if strings.HasSuffix(l, " reopen") {
				select {
				case reopen <- struct{}{}:
				default:
				}
			}
		}
		readErr <- sc.Err()
	}()
	exited := make(chan error, 1)
	var begun time.Time
	killNow := func() { cmd.Process.Signal(syscall.SIGKILL) }
	select {
	case <-ready:
		begun = time.Now()
	case <-time.After(60 * time.Second):
		killNow()
	}
	go func() {
		// Wait returns once stdout is drained, which the reader does.
		<-readErr
		exited <- cmd.Wait()
	}()
	// A random moment, and the limit of the targeted waits.
	budget := 200*time.Millisecond + time.Duration(r.Int64N(int64(max(killWithin-200*time.Millisecond, 1))))
	var res trialResult
	switch kill {
	case killRandom:
		readAt := time.After(time.Duration(float64(budget) * (0.2 + 0.6*r.Float64())))
		if !readBeside {
			readAt = nil
		}
		deadline := time.After(budget)
	wait:
		for {
			select {
			case <-readAt:
				res.reader, res.readLines, res.readSkip, res.readErr = readBesideChild(ctx, cmd.Process, path, func() []string {
					mu.Lock()
					defer mu.Unlock()
					return slices.Clone(lines)
				})
			case <-deadline:
				killNow()
				break wait
			case <-exited:
				exited <- nil
				break wait
			}
		}
	case killCheckpoint:
		waitFileChange(path, budget+killWithin, exited)
		time.Sleep(time.Duration(r.IntN(3000)) * time.Microsecond)
		killNow()
	case killReopen:
		select {
		case <-reopen:
			time.Sleep(time.Duration(r.IntN(40000)) * time.Microsecond)
		case <-time.After(budget + killWithin):
		}
		killNow()
	case killCommit, killSaveIndex:
		select { // the child kills itself; a backstop if the point is never reached
		case <-time.After(20 * time.Second):
			killNow()
		case <-exited:
			exited <- nil
		}
	}
	<-exited
	var after time.Duration
	if !begun.IsZero() {
		after = time.Since(begun)
	}
	mu.Lock()
	defer mu.Unlock()
	acked, pending, gotReady, childErr, err := parseLog(lines)
	if err != nil {
		if res.reader != nil {
			res.reader.Close()
		}
		return trialResult{err: err}
	}
	if !gotReady && childErr == "" {
		childErr = fmt.Sprintf("%v; stderr: %s", errNoReady, tail(stderr.String()))
	}
	if childErr == "" && cmd.ProcessState != nil && !killed(cmd.ProcessState) {
		childErr = fmt.Sprintf("exited (%v) instead of being killed; stderr: %s", cmd.ProcessState, tail(stderr.String()))
	}
	res.acked, res.pending, res.childErr, res.after = acked, pending, childErr, after
	return res
}

// readBesideChild stops the child, waits for the lines it printed to be
// read, opens the file read-only and lets the child go on: the reader's
// snapshot then holds every write the lines acknowledge, and of the
// writes they show in flight each wholly or not at all.
func readBesideChild(ctx context.Context, p *os.Process, path string, printed func() []string) (*cairn.DB, []string, string, error) {
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		return nil, nil, "child gone", nil
	}
	defer p.Signal(syscall.SIGCONT)
	// The lines already in the pipe are read within moments.
	time.Sleep(50 * time.Millisecond)
	lines := printed()
	db, err := cairn.Open(ctx, path, &cairn.Options{ReadOnly: true})
	if errors.Is(err, sqlitestore.ErrLocked) {
		// Stopped while it held the whole file (recovering or deleting
		// its log) or halfway through updating the log's index.
		return nil, nil, "the writer held a lock a reader needs", nil
	}
	if err != nil {
		return nil, nil, "", err
	}
	return db, lines, "", nil
}

func killed(ps *os.ProcessState) bool {
	ws, ok := ps.Sys().(syscall.WaitStatus)
	// SIGKILL from us (or the child's own crash point); SIGINT or SIGTERM
	// when the whole run is interrupted.
	return ok && ws.Signaled() && (ws.Signal() == syscall.SIGKILL || ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM)
}

// waitFileChange returns once the database file itself (which in WAL mode
// only a checkpoint writes) changes size or modification time, or after
// limit, or when the child exits.
func waitFileChange(path string, limit time.Duration, exited chan error) {
	stat := func() (int64, time.Time) {
		fi, err := os.Stat(path)
		if err != nil {
			return -1, time.Time{}
		}
		return fi.Size(), fi.ModTime()
	}
	size, mod := stat()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return
		default:
		}
		if s, m := stat(); s != size || !m.Equal(mod) {
			return
		}
		time.Sleep(100 * time.Microsecond)
	}
}

func tail(s string) string {
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}
