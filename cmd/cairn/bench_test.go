package main

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/openai"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// benchDim and benchN size the collection of the per-call benchmarks.
const benchDim, benchN = 384, 10000

// hashEmbed embeds a text as a pseudo-random vector seeded by its hash,
// a stand-in for a model that costs almost nothing.
func hashEmbed(text string) []float32 {
	h := fnv.New64a()
	h.Write([]byte(text))
	r := rand.New(rand.NewPCG(h.Sum64(), 1))
	v := make([]float32, benchDim)
	for i := range v {
		v[i] = float32(r.NormFloat64())
	}
	return v
}

var hashEmbedder = cairn.EmbedderFunc(func(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = hashEmbed(s)
	}
	return out, nil
})

// fillBench adds benchN items to the collection "memories" of db.
func fillBench(b *testing.B, db *cairn.DB) *cairn.Collection {
	b.Helper()
	ctx := context.Background()
	c, err := db.CreateCollection(ctx, "memories", cairn.CollectionConfig{Dim: benchDim})
	if err != nil {
		b.Fatal(err)
	}
	items := make([]cairn.Item, benchN)
	for i := range items {
		text := fmt.Sprintf("memory number %d about topic %d", i, i%97)
		items[i] = cairn.Item{ID: fmt.Sprint("m", i), Text: text, Embedding: hashEmbed(text), Metadata: map[string]any{"topic": i % 97}}
	}
	if err := c.Add(ctx, items...); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkSearch is the per-call cost of a memory search through each
// door, beside the bare API, over benchN items of benchDim dimensions
// (exact search, k = 5):
//
//   - bare: Collection.QueryText with an in-process embedder;
//   - mcp: the memory_search tool through the SDK's client over an
//     in-memory transport, same embedder: the MCP layer's cost;
//   - bare-http: QueryText with openai.Embedder against a loopback server;
//   - mcp-stdio: memory_search on a cairn mcp child process over stdio,
//     embedding over loopback HTTP as bare-http does.
func BenchmarkSearch(b *testing.B) {
	ctx := context.Background()
	query := func(i int) string { return fmt.Sprintf("what do I know about topic %d", i%97) }
	b.Run("bare", func(b *testing.B) {
		db := cairn.OpenMemory(&cairn.Options{Embedder: hashEmbedder})
		defer db.Close()
		c := fillBench(b, db)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.QueryText(ctx, query(i), 5, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("mcp", func(b *testing.B) {
		emb := markEmbedder(hashEmbedder)
		db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
		defer db.Close()
		fillBench(b, db)
		m, err := newMemory(ctx, db, "memories", emb)
		if err != nil {
			b.Fatal(err)
		}
		cs := connect(b, m)
		benchTool(b, cs, query)
	})
	srv := newEmbedServer(b, hashEmbed)
	b.Run("bare-http", func(b *testing.B) {
		db := cairn.OpenMemory(&cairn.Options{Embedder: &openai.Embedder{BaseURL: srv.url(), Model: "hash"}})
		defer db.Close()
		c := fillBench(b, db)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := c.QueryText(ctx, query(i), 5, nil); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("mcp-stdio", func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "bench.db")
		db, err := cairn.Open(ctx, path, nil)
		if err != nil {
			b.Fatal(err)
		}
		fillBench(b, db)
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
		cmd := exec.Command(os.Args[0], "mcp", "-db", path, "-embed-url", srv.url(), "-embed-model", "hash")
		cmd.Env = append(os.Environ(), "CAIRN_TEST_MAIN=1")
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "v0"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		benchTool(b, cs, query)
	})
}

func benchTool(b *testing.B, cs *mcp.ClientSession, query func(int) string) {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "memory_search", Arguments: map[string]any{"query": query(i), "k": 5}})
		if err != nil || res.IsError {
			b.Fatalf("%v %+v", err, res)
		}
		i++
	}
}

// BenchmarkStore is the per-call cost of remembering one text: bare
// Collection.Add of a text (embedded in process) into memory, against the
// memory_store tool over an in-memory transport.
func BenchmarkStore(b *testing.B) {
	ctx := context.Background()
	b.Run("bare", func(b *testing.B) {
		db := cairn.OpenMemory(&cairn.Options{Embedder: hashEmbedder})
		defer db.Close()
		c := fillBench(b, db)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if err := c.Add(ctx, cairn.Item{ID: fmt.Sprint("new", i), Text: fmt.Sprint("a new memory ", i)}); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("mcp", func(b *testing.B) {
		emb := markEmbedder(hashEmbedder)
		db := cairn.OpenMemory(&cairn.Options{Embedder: emb})
		defer db.Close()
		fillBench(b, db)
		m, err := newMemory(ctx, db, "memories", emb)
		if err != nil {
			b.Fatal(err)
		}
		cs := connect(b, m)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "memory_store", Arguments: map[string]any{"text": fmt.Sprint("a new memory ", i)}})
			if err != nil || res.IsError {
				b.Fatalf("%v %+v", err, res)
			}
			i++
		}
	})
}

// BenchmarkCommand is the cost of one cairn command on a file of benchN
// items, in process (a real invocation adds the process start, a few
// milliseconds): open the file, loading every vector, do the work, close.
func BenchmarkCommand(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "bench.db")
	db, err := cairn.Open(ctx, path, nil)
	if err != nil {
		b.Fatal(err)
	}
	fillBench(b, db)
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	q := "[" + fmt.Sprint(hashEmbed("q")[0])
	for _, x := range hashEmbed("q")[1:] {
		q += "," + fmt.Sprint(x)
	}
	q += "]"
	for _, args := range [][]string{
		{"info", path},
		{"query", path, "-collection", "memories", "-vector", q, "-k", "5"},
	} {
		b.Run(args[0], func(b *testing.B) {
			for b.Loop() {
				if r := runCmd(b, "", args...); r.code != 0 {
					b.Fatalf("%+v", r)
				}
			}
		})
	}
}
