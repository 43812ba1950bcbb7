package main

// This file is the power-loss mode (-powerloss): the child writes through
// internal/powerfail's recording VFS, and after the kill the parent checks
// not the files the kill left (the kernel kept every write) but images of
// what a power cut could have left: the writes no fsync covered lost,
// kept in order up to a torn sector, or kept at random sector by sector.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/powerfail"
)

var powerModes = []powerfail.Mode{powerfail.LoseAll, powerfail.Prefix, powerfail.Scatter}

// powerTrial runs one child on a new database, kills it, and checks one
// image per mode. It returns the acknowledged writes and, per image, the
// verdict.
func powerTrial(ctx context.Context, self, dir string, trial int, kill, syncFlag string, r *rand.Rand) (trialResult, []*verdict, error) {
	path := filepath.Join(dir, fmt.Sprintf("power-%d.cairn", trial))
	logPath := path + ".iolog"
	defer os.Remove(logPath)
	defer removeDB(path)
	db, err := cairn.Open(ctx, path, nil) // the file exists before the child records
	if err != nil {
		return trialResult{}, nil, err
	}
	if err := db.Close(); err != nil {
		return trialResult{}, nil, err
	}
	var base [2][]byte
	if base[0], err = os.ReadFile(path); err != nil {
		return trialResult{}, nil, err
	}
	if b, err := os.ReadFile(path + "-wal"); err == nil {
		base[1] = b
	}
	res := runTrial(ctx, self, path, trial, r.Uint64(), kill, syncFlag, r, false, "-powerlog", logPath)
	if res.err != nil || res.childErr != "" {
		return res, nil, nil
	}
	ops, err := powerfail.ReadLog(logPath)
	if err != nil {
		return res, nil, err
	}
	want := model{}
	for _, o := range res.acked {
		if err := want.apply(o); err != nil {
			return res, nil, fmt.Errorf("the acknowledged writes contradict the model: %w", err)
		}
	}
	stored := history{}
	stored.add(res.acked)
	stored.add(res.pending)
	img := filepath.Join(dir, fmt.Sprintf("power-%d-image.cairn", trial))
	defer removeDB(img)
	var verdicts []*verdict
	for _, mode := range powerModes {
		files := powerfail.Image(base, ops, mode, r)
		removeDB(img)
		if err := os.WriteFile(img, files[powerfail.MainDB], 0o644); err != nil {
			return res, nil, err
		}
		if len(files[powerfail.WAL]) > 0 {
			if err := os.WriteFile(img+"-wal", files[powerfail.WAL], 0o644); err != nil {
				return res, nil, err
			}
		}
		v := check(ctx, img, want, res.pending, r.Uint64(), historyOf(res.acked), &pastCheck{stored: stored, acked: res.acked})
		v.mode = mode.String()
		verdicts = append(verdicts, v)
	}
	return res, verdicts, nil
}

// runPower runs the power-loss trials and prints their tally; with
// SyncFull, any acknowledged write missing from an image is a failure.
func runPower(trials int, dir string, seed uint64, syncFlag string, verbose bool) bool {
	ctx := context.Background()
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(os.Stderr, "torture: %v\n", err)
		return false
	}
	r := rand.New(rand.NewPCG(seed, 0))
	fmt.Printf("torture: power loss, seed %d, %d trials in %s, sync %s, images %v\n", seed, trials, dir, syncFlag, powerModes)
	var acked, images, lostImages, lost, refused, corrupt, failures int
	kills := []string{killRandom, killCheckpoint, killReopen}
	for trial := 1; trial <= trials; trial++ {
		kill := kills[r.IntN(len(kills))]
		res, vs, err := powerTrial(ctx, self, dir, trial, kill, syncFlag, r)
		line := fmt.Sprintf("trial %d (killed %s after %v): ", trial, kill, res.after.Round(1e6))
		switch {
		case err != nil:
			failures++
			fmt.Printf("%sharness: %v\n", line, err)
			continue
		case res.err != nil:
			failures++
			fmt.Printf("%sharness: %v\n", line, res.err)
			continue
		case res.childErr != "":
			failures++
			fmt.Printf("%schild failed: %s\n", line, res.childErr)
			continue
		}
		n := 0
		for _, o := range res.acked {
			n += o.writes()
		}
		acked += n
		for _, v := range vs {
			images++
			switch {
			case v.refused != nil:
				refused++
				fmt.Printf("%simage %s REFUSED: %v\n", line, v.mode, v.refused)
			case len(v.corrupt) > 0:
				corrupt++
				fmt.Printf("%simage %s CORRUPT: %v\n", line, v.mode, v.corrupt[:min(3, len(v.corrupt))])
			case len(v.lost) > 0:
				lostImages++
				lost += len(v.lost)
				if syncFlag == "full" || verbose {
					fmt.Printf("%simage %s lost %d of %d acknowledged: %v\n", line, v.mode, len(v.lost), n, v.lost[:min(3, len(v.lost))])
				}
			case verbose:
				fmt.Printf("%simage %s: %d acknowledged, ok\n", line, v.mode, n)
			}
		}
	}
	fmt.Printf("images %d, of which %d lost acknowledged writes; harness or child failures %d\n", images, lostImages, failures)
	fmt.Printf("trials %d, acknowledged %d, lost %d, refused %d, corrupt %d\n", trials, acked, lost, refused, corrupt)
	if syncFlag == "normal" {
		return refused == 0 && corrupt == 0 && failures == 0 // losses are SyncNormal's documented behaviour
	}
	return lost == 0 && refused == 0 && corrupt == 0 && failures == 0
}
