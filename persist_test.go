package cairn_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
	"github.com/cairndb/cairn/qflat"
	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
	"github.com/cairndb/cairn/vector/quant"
)

// TestPersistence writes collections of each index kind, closes the file
// and checks that a reopened store holds the same items, configuration and
// answers, with the HNSW graph loaded rather than rebuilt.
func TestPersistence(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	var logs bytes.Buffer
	opts := &cairn.Options{SQLite: &sqlitestore.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}}
	open := func() *cairn.DB {
		t.Helper()
		db, err := cairn.Open(ctx, path, opts)
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	const dim, n = 8, 300
	configs := map[string]cairn.CollectionConfig{
		"auto":  {Dim: dim},
		"flat":  {Dim: dim, Metric: vector.Dot, Index: cairn.Flat},
		"graph": {Dim: dim, Metric: vector.L2, Index: cairn.HNSW, HNSW: hnsw.Options{M: 8, EfSearch: 40, Seed: 7}},
	}
	r := rand.New(rand.NewPCG(5, 6))
	queries := [][]float32{randVec(r, dim), randVec(r, dim), randVec(r, dim)}
	filter := cairn.And(cairn.Gte("i", 50), cairn.Eq("odd", true))

	db := open()
	want := map[string][][]cairn.Result{}
	for name, cfg := range configs {
		c := mustCollection(t, db, name, cfg)
		items := make([]cairn.Item, n)
		for i := range items {
			items[i] = cairn.Item{ID: fmt.Sprint("id", i), Embedding: randVec(r, dim), Text: fmt.Sprint("text ", i),
				Metadata: map[string]any{"i": i, "odd": i%2 == 1, "name": name}}
		}
		if err := c.Add(ctx, items[:200]...); err != nil {
			t.Fatal(err)
		}
		if err := c.Add(ctx, items[200:]...); err != nil {
			t.Fatal(err)
		}
		if err := c.Upsert(ctx, cairn.Item{ID: "id3", Embedding: randVec(r, dim), Text: "replaced", Metadata: map[string]any{"i": 3}}); err != nil {
			t.Fatal(err)
		}
		if err := c.Delete(ctx, "id4", "id5"); err != nil {
			t.Fatal(err)
		}
		for _, q := range queries {
			res, err := c.Query(ctx, q, 10, &cairn.QueryOptions{Filter: filter})
			if err != nil {
				t.Fatal(err)
			}
			want[name] = append(want[name], res)
			res, err = c.Query(ctx, q, 10, nil)
			if err != nil {
				t.Fatal(err)
			}
			want[name] = append(want[name], res)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	check := func(db *cairn.DB) {
		t.Helper()
		infos, err := db.Collections(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != len(configs) {
			t.Fatalf("%d collections after reopen, want %d", len(infos), len(configs))
		}
		for _, info := range infos {
			wantCfg := configs[info.Name]
			c, _ := db.CreateCollection(ctx, info.Name+"-probe", wantCfg) // defaults filled the same way
			wantCfg = c.Config()
			db.DeleteCollection(ctx, info.Name+"-probe")
			if !reflect.DeepEqual(info.Config, wantCfg) {
				t.Errorf("%s: config %+v after reopen, want %+v", info.Name, info.Config, wantCfg)
			}
			if info.Count != n-2 {
				t.Errorf("%s: %d items after reopen, want %d", info.Name, info.Count, n-2)
			}
			c, err := db.Collection(ctx, info.Name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.Get(ctx, "id3", "id7")
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Text != "replaced" || len(got[0].Metadata) != 1 || got[1].Text != "text 7" ||
				got[1].Metadata["i"] != 7.0 || got[1].Metadata["odd"] != true || got[1].Metadata["name"] != info.Name {
				t.Errorf("%s: items after reopen: %+v", info.Name, got)
			}
			if _, err := c.Get(ctx, "id4"); !errors.Is(err, vector.ErrNotFound) {
				t.Errorf("%s: deleted item after reopen: %v", info.Name, err)
			}
			var res [][]cairn.Result
			for _, q := range queries {
				a, err := c.Query(ctx, q, 10, &cairn.QueryOptions{Filter: filter})
				if err != nil {
					t.Fatal(err)
				}
				b, err := c.Query(ctx, q, 10, nil)
				if err != nil {
					t.Fatal(err)
				}
				res = append(res, a, b)
			}
			if !reflect.DeepEqual(res, want[info.Name]) {
				t.Errorf("%s: answers differ after reopen:\n%v\nwant\n%v", info.Name, res, want[info.Name])
			}
		}
	}
	db = open()
	check(db)
	if strings.Contains(logs.String(), "rebuild") {
		t.Errorf("a saved graph was not used:\n%s", logs.String())
	}
	// A second owner of the file is refused while the first has it open.
	if _, err := cairn.Open(ctx, path, nil); !errors.Is(err, sqlitestore.ErrLocked) {
		t.Errorf("second Open: %v, want ErrLocked", err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Reopened once more with nothing written in between: still the same.
	db = open()
	defer db.Close()
	check(db)
}

// TestPersistenceAutoSwitch checks that an Auto collection that switched
// to HNSW reopens with HNSW, and one below its threshold with exact search.
func TestPersistenceAutoSwitch(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 1))
	for _, size := range []int{50, 150} {
		c := mustCollection(t, db, fmt.Sprint(size), cairn.CollectionConfig{Dim: 4, AutoThreshold: 100})
		for i := range size {
			if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 4)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	db.Close()
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	infos, _ := db.Collections(ctx)
	if len(infos) != 2 || infos[0].Name != "150" || infos[0].Index != cairn.HNSW || infos[1].Index != cairn.Flat {
		t.Errorf("after reopen: %+v", infos)
	}
}

// TestOpenForeignCollection opens a file whose collection was made with
// sqlitestore alone (no settings, items without metadata or keys the
// memory store would have written): it gets the default configuration and
// its items, and a bad settings blob is reported as corruption.
func TestOpenForeignCollection(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "foreign.db")
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sdb.CreateCollection(ctx, "plain", sqlitestore.CollectionConfig{Dim: 2, Metric: vector.L2})
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.PutItems(ctx, []sqlitestore.Item{{ID: 7, Key: "seven", Vector: []float32{7, 7}, Text: "t"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := sdb.CreateCollection(ctx, "odd", sqlitestore.CollectionConfig{Dim: 2, Metric: vector.L2, Settings: []byte(`{"index":"btree"}`)}); err != nil {
		t.Fatal(err)
	}
	if err := sdb.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err := db.Collection(ctx, "plain")
	if err != nil {
		t.Fatal(err)
	}
	if cfg := c.Config(); cfg.Index != cairn.Auto || cfg.Metric != vector.L2 || cfg.Dim != 2 || cfg.AutoThreshold != cairn.DefaultAutoThreshold {
		t.Errorf("config %+v", cfg)
	}
	res, err := c.Query(ctx, []float32{7, 6}, 1, nil)
	if err != nil || len(res) != 1 || res[0].ID != "seven" || res[0].Text != "t" {
		t.Errorf("query = %v, %v", res, err)
	}
	// New items get fresh numbers past the stored ones.
	if err := c.Add(ctx, cairn.Item{ID: "eight", Embedding: []float32{8, 8}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Collection(ctx, "odd"); !errors.Is(err, vector.ErrCorrupt) {
		t.Errorf("unknown index in settings: %v", err)
	}
}

// TestLargeID opens a file holding, beside a thousand ordinary items, one
// whose id is 1<<50 (written through sqlitestore, as another program or a
// damaged counter could), and checks that a filtered query large enough
// to be handed over as a bitmap answers rather than sizing anything by
// the largest id (it once died with "fatal error: out of memory"), and
// that writes go on past that id.
func TestLargeID(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "large.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := mustCollection(t, db, "c", cairn.CollectionConfig{Dim: 2, Metric: vector.L2, Index: cairn.Flat})
	const n = 1000
	items := make([]cairn.Item, n)
	for i := range items {
		items[i] = cairn.Item{ID: fmt.Sprint(i), Embedding: []float32{float32(i), 1}, Metadata: map[string]any{"even": i%2 == 0}}
	}
	if err := c.Add(ctx, items...); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	sdb, err := sqlitestore.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := sdb.Collection(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	const far = vector.ID(1) << 50
	if err := sc.PutItems(ctx, []sqlitestore.Item{{ID: far, Key: "far", Vector: []float32{0.5, 1}, Metadata: []byte(`{"even":true}`)}}); err != nil {
		t.Fatal(err)
	}
	if err := sdb.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if c, err = db.Collection(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	res, err := c.Query(ctx, []float32{0, 1}, 3, &cairn.QueryOptions{Filter: cairn.Eq("even", true)})
	if err != nil || !slices.Equal(ids(res), []string{"0", "far", "2"}) {
		t.Fatalf("filtered query = %v, %v; want 0, far, 2", ids(res), err)
	}
	if err := c.Upsert(ctx, cairn.Item{ID: "far", Embedding: []float32{3, 1}, Metadata: map[string]any{"even": false}},
		cairn.Item{ID: "new", Embedding: []float32{1.5, 1}, Metadata: map[string]any{"even": true}}); err != nil {
		t.Fatal(err)
	}
	res, err = c.Query(ctx, []float32{0, 1}, 3, &cairn.QueryOptions{Filter: cairn.Eq("even", true)})
	if err != nil || !slices.Equal(ids(res), []string{"0", "new", "2"}) {
		t.Fatalf("filtered query after the upsert = %v, %v; want 0, new, 2", ids(res), err)
	}
}

// TestPersistenceQFlat checks that a QFlat collection keeps its kind and
// options across a reopen, and that its codes, rebuilt from the items at
// open, find what they found before, with the same distances as an exact
// search.
func TestPersistenceQFlat(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cairn.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	cfg := cairn.CollectionConfig{Dim: 16, Metric: vector.L2, Index: cairn.QFlat,
		QFlat: qflat.Options{Rescore: 3, Train: quant.TrainOptions{Sample: 500, Clip: 0.01}}}
	c := mustCollection(t, db, "q", cfg)
	ex := mustCollection(t, db, "exact", cairn.CollectionConfig{Dim: 16, Metric: vector.L2, Index: cairn.Flat})
	r := rand.New(rand.NewPCG(2, 2))
	for i := range 600 {
		it := cairn.Item{ID: fmt.Sprint(i), Embedding: randVec(r, 16)}
		if err := c.Add(ctx, it); err != nil {
			t.Fatal(err)
		}
		if err := ex.Add(ctx, it); err != nil {
			t.Fatal(err)
		}
	}
	q := randVec(r, 16)
	before, err := c.Query(ctx, q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	db, err = cairn.Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	c, err = db.Collection(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Config(); got.Index != cairn.QFlat || got.QFlat != cfg.QFlat {
		t.Fatalf("config after reopen: %+v, want %+v", got, cfg)
	}
	after, err := c.Query(ctx, q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	ex, _ = db.Collection(ctx, "exact")
	want, _ := ex.Query(ctx, q, 10, nil)
	if len(after) != 10 || len(before) != 10 {
		t.Fatalf("%d results before, %d after reopen", len(before), len(after))
	}
	for i := range after {
		if after[i].ID != before[i].ID || after[i].Score != want[i].Score {
			t.Errorf("rank %d: before %v, after %v, exact %v", i, before[i], after[i], want[i])
		}
	}
}
