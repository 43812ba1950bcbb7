package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/internal/powerfail"
	"github.com/cairndb/cairn/internal/vfsname"
)

// TestCompactPowerCutAtEverySync is the deterministic form of the -compact
// -powerloss trials: it compacts a file of known content in this process
// through the recording VFS, then checks the file a power cut right after
// each fsync of the Compact would leave (every write no fsync covered
// lost), and with the truncations before the next fsync kept as well:
// each must open, pass Check and list as before, and the last be
// compacted. It also checks the checker: a copy with one item changed
// differs.
func TestCompactPowerCutAtEverySync(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	base := filepath.Join(dir, "base.cairn")
	ids, err := buildCompactFile(ctx, base, 4, rand.New(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(base + "-wal")
	db, err := cairn.Open(ctx, base, &cairn.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := list(ctx, db, ids)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	wantGraphs, err := graphs(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(wantGraphs, "graph current") {
		t.Fatalf("no saved graph to keep: %s", wantGraphs)
	}
	if free, _, err := freePages(base); err != nil || free == 0 {
		t.Fatalf("the built file has %d free pages (%v), want some", free, err)
	}
	fi, err := os.Stat(base)
	if err != nil {
		t.Fatal(err)
	}
	var baseBytes [2][]byte
	if baseBytes[0], err = os.ReadFile(base); err != nil {
		t.Fatal(err)
	}

	path := filepath.Join(dir, "compact.cairn")
	if err := copyFile(path, base); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "iolog")
	if err := powerfail.Register(logPath); err != nil {
		t.Fatal(err)
	}
	vfsname.Name = powerfail.VFSName
	err = cairn.Compact(ctx, path, nil)
	vfsname.Name = ""
	if err != nil {
		t.Fatal(err)
	}
	ops, err := powerfail.ReadLog(logPath)
	if err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(dir, "image.cairn")
	check := func(what string, ops []powerfail.Op) *compactVerdict {
		files := powerfail.Image(baseBytes, ops, powerfail.LoseAll, rand.New(rand.NewPCG(3, 4)))
		removeCompactDB(img)
		if err := os.WriteFile(img, files[powerfail.MainDB], 0o644); err != nil {
			t.Fatal(err)
		}
		if len(files[powerfail.WAL]) > 0 {
			if err := os.WriteFile(img+"-wal", files[powerfail.WAL], 0o644); err != nil {
				t.Fatal(err)
			}
		}
		v := checkCompacted(ctx, img, want, wantGraphs, ids, fi.Size())
		if v.failed() {
			t.Fatalf("power cut %s: refused %v, problems %q", what, v.refused, v.problems)
		}
		t.Logf("power cut %s: compacted %v", what, v.compacted)
		return v
	}
	syncs := 0
	for i, o := range ops {
		last := i == len(ops)-1
		if o.Kind != 'S' && !last {
			continue
		}
		syncs++
		v := check(fmt.Sprintf("after op %d of %d (%c)", i+1, len(ops), o.Kind), ops[:i+1])
		if last && !v.compacted {
			t.Fatalf("the file Compact left is not smaller than %d bytes", fi.Size())
		}
		// A disk that reorders may also keep the truncations before the
		// next fsync and lose the writes before them (a checkpoint writes
		// page 1, then truncates, then syncs): an image of those kept, as
		// if synced.
		cut := slices.Clone(ops[:i+1])
		for _, p := range ops[i+1:] {
			if p.Kind == 'S' {
				break
			}
			if p.Kind == 'T' {
				cut = append(cut, p, powerfail.Op{Kind: 'S', File: p.File})
			}
		}
		if len(cut) > i+1 {
			check(fmt.Sprintf("after op %d of %d, the truncations before the next fsync kept", i+1, len(ops)), cut)
		}
	}
	if syncs < 3 {
		t.Fatalf("Compact synced %d times, want at least the log's and the file's", syncs)
	}

	// The checker sees a change.
	if err := copyFile(path, base); err != nil {
		t.Fatal(err)
	}
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var coll, id string
	for _, coll = range []string{"flat", "auto", "hnsw"} {
		for id = range want[coll].items {
			break
		}
		if id != "" {
			break
		}
	}
	c, err := db.Collection(ctx, coll)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Get(ctx, id)
	if err != nil || len(got) != 1 {
		t.Fatalf("get %s: %v", id, err)
	}
	it := got[0]
	it.Text += "!"
	if err := c.Upsert(ctx, it); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	v := checkCompacted(ctx, path, want, wantGraphs, ids, fi.Size())
	if !strings.Contains(strings.Join(v.problems, "\n"), coll+"/"+it.ID+": item differs") {
		t.Fatalf("an upserted item went unseen: %q", v.problems)
	}
}
