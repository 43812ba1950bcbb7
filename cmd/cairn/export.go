// export.go holds "cairn export", which writes a file's items as JSON
// lines (see jsonl.go); import.go reads them back.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"iter"

	"github.com/cairndb/cairn"
)

func cmdExport(ctx context.Context, e *env, args []string) error {
	fs := newFlags(e, "export", "FILE [-collection NAME]")
	coll := fs.String("collection", "", "export only this collection (default: all)")
	path, err := parseFile(fs, args)
	if err != nil {
		return err
	}
	db, err := openDB(ctx, path, false, nil)
	if err != nil {
		return err
	}
	var names []string
	if *coll != "" {
		names = []string{*coll}
	} else {
		infos, err := db.Collections(ctx)
		if err != nil {
			return closeDB(path, db, &fileError{path, err})
		}
		for _, in := range infos {
			names = append(names, in.Name)
		}
	}
	w := bufio.NewWriterSize(e.stdout, 1<<20)
	for _, name := range names {
		if err := exportCollection(ctx, db, name, w); err != nil {
			return closeDB(path, db, &fileError{path, err})
		}
	}
	if err := w.Flush(); err != nil {
		return closeDB(path, db, fmt.Errorf("cairn: export: writing: %w", err))
	}
	return closeDB(path, db, nil)
}

// exportCollection writes the header line of the collection name and its
// items, one at a time, in the order they were added; then, for each of
// its tenants, the header with the tenant's name and the tenant's items.
func exportCollection(ctx context.Context, db *cairn.DB, name string, w *bufio.Writer) error {
	c, err := db.Collection(ctx, name)
	if err != nil {
		return err
	}
	if err := exportItems(ctx, c, name, "", w); err != nil {
		return err
	}
	tenants, err := c.Tenants(ctx)
	if err != nil {
		return err
	}
	for _, tn := range tenants {
		t, err := c.Tenant(ctx, tn)
		if err != nil {
			return err
		}
		if err := exportItems(ctx, t, name, tn, w); err != nil {
			return err
		}
	}
	return nil
}

// exportItems writes a header line and the items of src: the collection
// name, or its tenant if tenant is not empty.
func exportItems(ctx context.Context, src interface {
	Config() cairn.CollectionConfig
	Items(context.Context, *cairn.ItemsOptions) iter.Seq2[cairn.Item, error]
}, name, tenant string, w *bufio.Writer) error {
	enc := json.NewEncoder(w)
	h := header(name, src.Config())
	l := line{Collection: &h}
	if tenant != "" {
		l.Tenant = &tenant
	}
	if err := enc.Encode(l); err != nil {
		return err
	}
	for it, err := range src.Items(ctx, &cairn.ItemsOptions{Embeddings: true}) {
		if err != nil {
			return err
		}
		ji := jsonItem{ID: it.ID, Text: it.Text, Metadata: it.Metadata, Embedding: it.Embedding,
			CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, ExpiresAt: it.ExpiresAt}
		if err := enc.Encode(ji); err != nil {
			return fmt.Errorf("collection %q, tenant %q, item %q: %w", name, tenant, it.ID, err)
		}
	}
	return nil
}

// MarshalJSON writes a header line as {"collection":{...}} (with
// "tenant" for a tenant's) and an item line as the item alone.
func (l line) MarshalJSON() ([]byte, error) {
	if l.Collection != nil {
		return json.Marshal(struct {
			Collection *jsonCollection `json:"collection"`
			Tenant     *string         `json:"tenant,omitempty"`
		}{l.Collection, l.Tenant})
	}
	return json.Marshal(l.jsonItem)
}
