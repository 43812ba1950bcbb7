// info.go holds "cairn info": what a file holds, collection by collection.

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
)

// collectionInfo is one collection as info reports it (and as -json
// prints it).
type collectionInfo struct {
	Name        string `json:"name"`
	Dim         int    `json:"dim"`
	Metric      string `json:"metric"`
	Index       string `json:"index"`        // the configured index: auto, flat or hnsw
	InUse       string `json:"index_in_use"` // flat or hnsw
	Items       int    `json:"items"`
	Tenants     int    `json:"tenants"`
	TenantItems int    `json:"tenant_items"` // the items of its tenants, not in items
	Params      string `json:"params"`       // the index's parameters
	SavedGraph  string `json:"saved_graph"`
}

type fileInfo struct {
	Path        string           `json:"path"`
	Bytes       int64            `json:"bytes"`
	Collections []collectionInfo `json:"collections"`
}

func cmdInfo(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "info", "FILE [-json]")
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	fi, err := inspect(ctx, path)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(e.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(fi)
	}
	fmt.Fprintf(e.stdout, "file: %s (%s)\n", fi.Path, humanBytes(fi.Bytes))
	if len(fi.Collections) == 0 {
		fmt.Fprintln(e.stdout, "no collections")
		return nil
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "COLLECTION\tDIM\tMETRIC\tINDEX\tITEMS\tTENANTS\tPARAMETERS\tSAVED GRAPH")
	for _, c := range fi.Collections {
		index := c.Index
		if c.Index != c.InUse {
			index += " (" + c.InUse + ")"
		}
		tenants := "-"
		if c.Tenants > 0 {
			tenants = fmt.Sprintf("%d (%d items)", c.Tenants, c.TenantItems)
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%s\t%s\t%s\n", c.Name, c.Dim, c.Metric, index, c.Items, tenants, c.Params, c.SavedGraph)
	}
	return tw.Flush()
}

// inspect describes the file at path.
func inspect(ctx context.Context, path string) (*fileInfo, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, &fileError{path, err}
	}
	fr, err := cairn.Inspect(ctx, path, nil)
	if err != nil {
		return nil, &fileError{path, err}
	}
	fi := &fileInfo{Path: path, Bytes: st.Size(), Collections: []collectionInfo{}}
	for _, c := range fr.Collections {
		cfg := c.Config
		ci := collectionInfo{
			Name: c.Name, Dim: cfg.Dim, Metric: cfg.Metric.String(),
			Index: cfg.Index.String(), InUse: c.Index.String(), Items: c.Count,
			Tenants: c.Tenants, TenantItems: c.TenantItems,
			SavedGraph: c.SavedGraph.String(),
		}
		// Zero fields take hnsw's defaults: show those.
		h := cfg.HNSW
		m, efc, efs, k := or(h.M, hnsw.DefaultM), or(h.EfConstruction, hnsw.DefaultEfConstruction), or(h.EfSearch, hnsw.DefaultEfSearch), or(h.TargetK, hnsw.DefaultTargetK)
		graph := fmt.Sprintf("M=%d efConstruction=%d efSearch=%d", m, efc, efs)
		if h.TargetRecall > 0 {
			graph = fmt.Sprintf("M=%d efConstruction=%d targetRecall=%g@%d", m, efc, h.TargetRecall, k)
		}
		if h.Quantize != hnsw.QuantizeNone {
			graph += " quantize=" + h.Quantize.String()
		}
		if h.QuantizeDims > 0 {
			graph += fmt.Sprintf(" quantize-dims=%d", h.QuantizeDims)
		}
		switch cfg.Index {
		case cairn.Auto:
			ci.Params = fmt.Sprintf("threshold=%d %s", cfg.AutoThreshold, graph)
		case cairn.HNSW:
			ci.Params = graph
		}
		if cfg.TTL > 0 {
			ci.Params += " ttl=" + cfg.TTL.String()
		}
		if hp := cfg.KeepHistory; hp != nil {
			keep := "all"
			switch {
			case hp.For > 0 && hp.Versions > 0:
				keep = fmt.Sprintf("%v,%d", hp.For, hp.Versions)
			case hp.For > 0:
				keep = hp.For.String()
			case hp.Versions > 0:
				keep = fmt.Sprint(hp.Versions)
			}
			ci.Params += " history=" + keep
		}
		ci.Params = strings.TrimSpace(ci.Params)
		if ci.Params == "" {
			ci.Params = "-"
		}
		fi.Collections = append(fi.Collections, ci)
	}
	return fi, nil
}

// or returns v, or def if v is 0.
func or(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// humanBytes formats n as B, KiB, MiB or GiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	f, suffix := float64(n)/unit, "KiB"
	for _, s := range []string{"MiB", "GiB", "TiB"} {
		if f < unit {
			break
		}
		f, suffix = f/unit, s
	}
	return fmt.Sprintf("%.1f %s", f, suffix)
}
