package cairn

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/cairndb/cairn/sqlitestore"
	"github.com/cairndb/cairn/vector"
)

// GraphState says whether a collection's saved HNSW graph can be loaded
// as it is, or will be rebuilt from the items when the collection is
// next loaded. It is a plain value.
type GraphState uint8

const (
	// GraphNone: the collection is searched exactly (Flat, or Auto below
	// its threshold) and needs no graph.
	GraphNone GraphState = iota
	// GraphCurrent: a saved graph matches the items.
	GraphCurrent
	// GraphMissing: no graph is saved; it will be built.
	GraphMissing
	// GraphStale: the items changed after the graph was saved (the
	// program stopped before [DB.Close]); it will be rebuilt.
	GraphStale
	// GraphDamaged: the saved graph fails its checksum; it will be
	// rebuilt.
	GraphDamaged
)

// String returns "none", "current", "missing", "stale" or "damaged".
func (s GraphState) String() string {
	switch s {
	case GraphNone:
		return "none"
	case GraphCurrent:
		return "current"
	case GraphMissing:
		return "missing"
	case GraphStale:
		return "stale"
	case GraphDamaged:
		return "damaged"
	}
	return fmt.Sprintf("GraphState(%d)", uint8(s))
}

// FileCollection describes a collection as it is stored in a file: a
// plain value, owned by the caller.
type FileCollection struct {
	CollectionInfo
	// SavedGraph is the state of the saved HNSW graph.
	SavedGraph GraphState
	// Tenants is the number of the collection's tenants, and TenantItems
	// the number of items they hold together (not in Count).
	Tenants, TenantItems int
}

// FileInfo describes what a cairn file holds: a plain value, owned by
// the caller.
type FileInfo struct {
	Collections []FileCollection // sorted by name
}

// Inspect describes the cairn file at path without opening it as a [DB]:
// each collection's configuration, size, the index it will use and the
// state of its saved graph. Like [Check], it opens the file read-only:
// it changes no byte of it, works beside the file's writer and does not
// create it (a missing file is an error wrapping [os.ErrNotExist]). It
// reads every vector. Only o.SQLite is used.
func Inspect(ctx context.Context, path string, o *Options) (*FileInfo, error) {
	sdb, err := openExisting(ctx, path, o, true)
	if err != nil {
		return nil, fmt.Errorf("cairn: inspect: %w", err)
	}
	defer sdb.Close()
	infos, err := sdb.Collections(ctx)
	if err != nil {
		return nil, fmt.Errorf("cairn: inspect: %w", err)
	}
	out := &FileInfo{Collections: make([]FileCollection, 0, len(infos))}
	for _, in := range infos {
		cfg, err := decodeSettings(in.Dim, in.Metric, in.Settings)
		if err != nil {
			return nil, fmt.Errorf("cairn: inspect %q: %w", in.Name, err)
		}
		fc := FileCollection{CollectionInfo: CollectionInfo{Name: in.Name, Config: cfg, Count: in.Len, Index: cfg.initialKind(in.Len)}}
		c, err := sdb.Collection(ctx, in.Name)
		if err == nil {
			fc.Tenants, fc.TenantItems, err = c.TenantCount(ctx)
		}
		if err != nil {
			return nil, fmt.Errorf("cairn: inspect %q: %w", in.Name, err)
		}
		if fc.Index == HNSW && in.Len > 0 {
			fc.SavedGraph = graphState(c.LoadIndex(ctx, graphName, discard{}))
		}
		out.Collections = append(out.Collections, fc)
	}
	return out, nil
}

// openExisting opens the sqlitestore file at path, which must exist:
// read-only, beside its writer if it has one, if readOnly is set.
func openExisting(ctx context.Context, path string, o *Options, readOnly bool) (*sqlitestore.DB, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	so := sqliteOptions(o)
	if so == nil {
		so = &sqlitestore.Options{}
	}
	so.ReadOnly = so.ReadOnly || readOnly
	return sqlitestore.Open(ctx, path, so)
}

// graphState classifies the error of a LoadIndex.
func graphState(err error) GraphState {
	switch {
	case err == nil:
		return GraphCurrent
	case errors.Is(err, vector.ErrNotFound):
		return GraphMissing
	case errors.Is(err, sqlitestore.ErrStaleIndex):
		return GraphStale
	}
	return GraphDamaged
}

// discard is an io.ReaderFrom that reads and drops everything.
type discard struct{}

func (discard) ReadFrom(r io.Reader) (int64, error) { return io.Copy(io.Discard, r) }
