// importstage.go holds what an import into an existing file does to be
// all or nothing (see import.go): the spool the checked stream waits in
// before anything is written, and the undo records that take out what was
// written if a later write fails.

package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/cairndb/cairn"
)

// event is a collection start in the spool: it applies before the
// spooled item at.
type event struct {
	at   int
	t    *target
	line int
}

// spooled is an item in the spool.
type spooled struct {
	Line int `json:"line"`
	jsonItem
}

// undoRecord undoes one written batch of a collection or tenant the
// import did not create.
type undoRecord struct {
	Collection string     `json:"c"`
	Tenant     string     `json:"t,omitempty"`
	Delete     []string   `json:"del,omitempty"` // ids the batch added
	Put        []jsonItem `json:"put,omitempty"` // items the batch replaced, as they were
}

// undoOf returns what undoes writing items to the current collection or
// tenant: the ids it adds are deleted, and with -upsert the items it
// replaces are put back.
func (im *importer) undoOf(items []cairn.Item) (*undoRecord, error) {
	u := &undoRecord{Collection: im.cur.name, Tenant: im.cur.tenant}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	if !im.upsert {
		u.Delete = ids
		return u, nil
	}
	// The items replaced, with their embeddings as written (Get gives
	// the stored form: unit length under Cosine).
	replaced := map[string]bool{}
	for o, err := range im.dst.Items(im.ctx, &cairn.ItemsOptions{IDs: ids, Embeddings: true}) {
		if err != nil {
			return nil, err
		}
		replaced[o.ID] = true
		u.Put = append(u.Put, jsonItem{ID: o.ID, Text: o.Text, Metadata: o.Metadata, Embedding: o.Embedding,
			CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, ExpiresAt: o.ExpiresAt})
	}
	for _, id := range ids {
		if !replaced[id] {
			u.Delete = append(u.Delete, id)
		}
	}
	return u, nil
}

// openSpool creates the spool beside the file and removes its name, so
// that nothing is left behind even by a crash (where the system allows
// removing an open file; elsewhere, run removes it at the end).
func (im *importer) openSpool() error {
	var rnd [8]byte
	rand.Read(rnd[:])
	f, err := os.OpenFile(beside(im.path, ".import-"+hex.EncodeToString(rnd[:])+".spool"), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("spool: %w", err)
	}
	im.spool = &spool{f: f}
	if os.Remove(f.Name()) != nil {
		im.spoolName = f.Name()
	}
	return nil
}

// spoolLine appends v to the spool as one line.
func (im *importer) spoolLine(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return im.spool.append(append(b, '\n'))
}

// spoolItems appends checked items to the spool.
func (im *importer) spoolItems(items []cairn.Item, lines []int) error {
	if im.spool == nil {
		if err := im.openSpool(); err != nil {
			return err
		}
	}
	for i, it := range items {
		s := spooled{Line: lines[i], jsonItem: jsonItem{ID: it.ID, Text: it.Text, Metadata: it.Metadata, Embedding: it.Embedding,
			CreatedAt: it.CreatedAt, UpdatedAt: it.UpdatedAt, ExpiresAt: it.ExpiresAt}}
		if err := im.spoolLine(s); err != nil {
			return fmt.Errorf("line %d: spool: %w", lines[i], err)
		}
	}
	im.spooled += len(items)
	return nil
}

// appendUndo appends an undo record (JSON, from undoLine) to the spool.
// The record is in the spool even if an error says the spool's file
// could not take it: undo reads it all the same.
func (im *importer) appendUndo(line []byte) error {
	im.undoOffs = append(im.undoOffs, im.spool.size())
	return im.spool.append(line)
}

// undoLine is u as a line of the spool.
func undoLine(u *undoRecord) ([]byte, error) {
	b, err := json.Marshal(u)
	return append(b, '\n'), err
}

// writeSpool writes the spooled stream (mode staged), starting each
// collection where the stream did.
func (im *importer) writeSpool() error {
	var r *bufio.Reader
	if im.spool != nil {
		r = bufio.NewReaderSize(io.NewSectionReader(im.spool, 0, im.spool.size()), 1<<20)
	}
	ev := im.events
	var items []cairn.Item
	var lines []int
	flush := func() error {
		if len(items) == 0 {
			return nil
		}
		err := im.write(items, lines)
		items, lines = items[:0], lines[:0]
		return err
	}
	for i := 0; i <= im.spooled; i++ {
		for len(ev) > 0 && ev[0].at == i {
			if err := flush(); err != nil {
				return err
			}
			im.cur = ev[0].t
			if err := im.start(im.cur); err != nil {
				return wrapLine(ev[0].line, err)
			}
			ev = ev[1:]
		}
		if i == im.spooled {
			break
		}
		if err := im.ctx.Err(); err != nil {
			return err
		}
		b, err := r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		var s spooled
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		items = append(items, cairn.Item{ID: s.ID, Text: s.Text, Metadata: s.Metadata, Embedding: s.Embedding,
			CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt, ExpiresAt: s.ExpiresAt})
		lines = append(lines, s.Line)
		if len(items) >= im.batchSize {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	return flush()
}

// undo takes out what this import wrote (mode staged): its transactions
// into collections and tenants that were there before, the latest first,
// then the tenants and collections it created, the latest first. It goes
// on after ctx ends: an interrupt is one of the failures it undoes.
func (im *importer) undo() error {
	ctx := context.WithoutCancel(im.ctx)
	for i := len(im.undoOffs) - 1; i >= 0; i-- {
		end := im.spool.size()
		if i+1 < len(im.undoOffs) {
			end = im.undoOffs[i+1]
		}
		b := make([]byte, end-im.undoOffs[i])
		if _, err := im.spool.ReadAt(b, im.undoOffs[i]); err != nil {
			return err
		}
		var u undoRecord
		if err := json.Unmarshal(b, &u); err != nil {
			return err
		}
		c, err := im.db.Collection(ctx, u.Collection)
		if err != nil {
			return err
		}
		var d itemWriter = c
		if u.Tenant != "" {
			if d, err = c.Tenant(ctx, u.Tenant); err != nil {
				return err
			}
		}
		if _, err := d.DeleteIfExists(ctx, u.Delete...); err != nil {
			return err
		}
		now := time.Now()
		var put []cairn.Item
		for _, o := range u.Put {
			if !o.ExpiresAt.IsZero() && !o.ExpiresAt.After(now) {
				continue // it would have expired by now
			}
			put = append(put, cairn.Item{ID: o.ID, Text: o.Text, Metadata: o.Metadata, Embedding: o.Embedding,
				CreatedAt: o.CreatedAt, UpdatedAt: o.UpdatedAt, ExpiresAt: o.ExpiresAt})
		}
		if err := d.Upsert(ctx, put...); err != nil {
			return err
		}
	}
	for i := len(im.created) - 1; i >= 0; i-- {
		s := im.created[i]
		if s.tenant == "" {
			if err := im.db.DeleteCollection(ctx, s.coll); err != nil {
				return err
			}
			continue
		}
		c, err := im.db.Collection(ctx, s.coll)
		if err == nil {
			err = c.DeleteTenant(ctx, s.tenant)
		}
		if err != nil {
			return err
		}
	}
	return nil
}
