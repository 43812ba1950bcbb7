// query.go holds "cairn query": the nearest items to a text or a vector.

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// hit is one result as query -json and the MCP tools print it.
type hit struct {
	ID string `json:"id"`
	// Similarity is the embeddings' (0 in keyword mode); Score is what
	// the search ranked by: the similarity, the BM25 score of the words,
	// or the fused score of a hybrid search.
	Similarity float64 `json:"similarity" jsonschema:"how close the memory's embedding is to the query's: their cosine similarity, from -1 to 1, higher is closer (0 in keyword mode)"`
	Score      float64 `json:"score" jsonschema:"what the search ranked by, higher first: the similarity (vector mode), a BM25 score of the query's words (keyword mode, unbounded), or the fusion of both lists' ranks, the sum of 1/(60+rank) (hybrid mode, about 0.033 at most); compare scores within one search only"`
	Text       string  `json:"text,omitempty"`
	Metadata   outMap  `json:"metadata,omitempty"`
}

func hitOf(r cairn.Result) hit {
	return hit{ID: r.ID, Similarity: r.Similarity, Score: r.Score, Text: r.Text, Metadata: r.Metadata}
}

// searcher is what query searches: a *cairn.Collection or a
// *cairn.Tenant.
type searcher interface {
	Query(ctx context.Context, embedding []float32, k int, o *cairn.QueryOptions) ([]cairn.Result, error)
	QueryText(ctx context.Context, text string, k int, o *cairn.QueryOptions) ([]cairn.Result, error)
}

func cmdQuery(ctx context.Context, e *env, args []string) error {
	const synopsis = "FILE -collection NAME [-tenant NAME] (-text T | -vector JSON) [-mode vector|keyword|hybrid] [-k 10] [-filter JSON] [-json]"
	fs := newFlags(e, "query", synopsis)
	coll := fs.String("collection", "", "the collection to search (required)")
	tenant := fs.String("tenant", "", "search this tenant of the collection (a namespace of cairn mcp) instead of its own items")
	text := fs.String("text", "", "query by this text, embedded with the -embed-* flags")
	vec := fs.String("vector", "", "query by this vector, a JSON array of numbers")
	k := fs.Int("k", 10, "number of results")
	filter := fs.String("filter", "", `metadata filter in JSON, e.g. {"kind":"fact"} or {"year":{"$gte":2020}}; {} is no filter`)
	ef := fs.Int("ef", 0, "HNSW beam width for this query (0 for the collection's)")
	modeName := fs.String("mode", "vector", "rank by embeddings (vector), by the words of -text (keyword), or both (hybrid)")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	var emf embedFlags
	emf.register(fs)
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	if *coll == "" {
		return usageError("-collection is required")
	}
	if (*text == "") == (*vec == "") {
		return usageError("give one of -text and -vector")
	}
	if *k <= 0 {
		return usageError("-k must be positive, got %d", *k)
	}
	if *ef < 0 {
		return usageError("-ef must be 0 or more, got %d", *ef)
	}
	var q []float32
	if *vec != "" {
		if err := json.Unmarshal([]byte(*vec), &q); err != nil {
			return usageError("-vector: not a JSON array of numbers: %v", err)
		}
	}
	mode, ok := parseMode(*modeName)
	if !ok {
		return usageError("-mode: want vector, keyword or hybrid, got %q", *modeName)
	}
	if mode != cairn.VectorMode && *text == "" {
		return usageError("-mode %s needs -text, whose words it matches", *modeName)
	}
	opts := &cairn.QueryOptions{Ef: *ef, Mode: mode}
	if !noFilter(*filter) {
		f, err := cairn.ParseFilter([]byte(*filter))
		if err != nil {
			return usageError("-filter: %v", err)
		}
		opts.Filter = f
	}
	emb, err := emf.embedder()
	if err != nil {
		return err
	}
	if *text != "" && emb == nil && mode != cairn.KeywordMode {
		return usageError("-text needs an embedder (set -embed-url and -embed-model), except with -mode keyword")
	}
	db, err := openDB(ctx, path, false, &cairn.Options{Embedder: emb})
	if err != nil {
		return err
	}
	c, err := db.Collection(ctx, *coll)
	var s searcher = c
	if err == nil && *tenant != "" {
		s, err = c.Tenant(ctx, *tenant)
	}
	if err != nil {
		return closeDB(path, db, &fileError{path, err})
	}
	var res []cairn.Result
	if *text != "" {
		res, err = s.QueryText(ctx, *text, *k, opts)
	} else {
		res, err = s.Query(ctx, q, *k, opts)
	}
	if errors.Is(err, vector.ErrInvalidOptions) {
		// Only the command line sets the query's options (-k, -ef, and a
		// -filter whose values do not fit its operators).
		_, why, _ := strings.Cut(err.Error(), vector.ErrInvalidOptions.Error()+": ")
		return closeDB(path, db, usageError("%s", why))
	}
	if err != nil {
		return closeDB(path, db, &fileError{path, err})
	}
	return closeDB(path, db, printHits(e, res, *asJSON))
}

// noFilter reports whether the -filter argument s asks for no filter:
// it is empty, {} or null.
func noFilter(s string) bool {
	var v any
	if strings.TrimSpace(s) == "" {
		return true
	}
	if json.Unmarshal([]byte(s), &v) != nil {
		return false
	}
	m, isMap := v.(map[string]any)
	return v == nil || isMap && len(m) == 0
}

func printHits(e *env, res []cairn.Result, asJSON bool) error {
	hits := make([]hit, len(res))
	for i, r := range res {
		hits[i] = hitOf(r)
	}
	if asJSON {
		enc := json.NewEncoder(e.stdout)
		return enc.Encode(hits)
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "RANK\tID\tSCORE\tTEXT\tMETADATA")
	for i, h := range hits {
		md := ""
		if len(h.Metadata) > 0 {
			b, err := json.Marshal(h.Metadata)
			if err != nil {
				return err
			}
			md = string(b)
		}
		fmt.Fprintf(tw, "%d\t%s\t%.4f\t%s\t%s\n", i+1, idCell(h.ID), h.Score, clip(h.Text, 60), md)
	}
	return tw.Flush()
}

// idCell is id as the table shows it: quoted, as in Go, if it holds a
// control character (a tab or a newline would break the table's lines).
func idCell(id string) string {
	if strings.ContainsFunc(id, unicode.IsControl) {
		return strconv.Quote(id)
	}
	return id
}

// clip shortens s to at most n runes on one line.
func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
