package main

// This file checks the history of the collections that keep one
// (configOf): after a kill, each id's versions must agree with the items
// (the same transactions write both), be well formed, hold every version
// an acknowledged write of the trial stored, and nothing no write stored.

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/vector"
)

// pastCheck is what the history check needs beyond the model: every
// version a write of the file's chain stored or may have stored, and
// the writes the trial acknowledged.
type pastCheck struct {
	stored history
	acked  []*op
}

// add records the versions ops stored or may have stored.
func (h history) add(ops []*op) {
	for coll, ids := range historyOf(ops) {
		if h[coll] == nil {
			h[coll] = map[string]map[int]int{}
		}
		for id, vers := range ids {
			if h[coll][id] == nil {
				h[coll][id] = map[int]int{}
			}
			for ver, w := range vers {
				h[coll][id][ver] = w
			}
		}
	}
}

// historian is a collection or tenant with a history.
type historian interface {
	History(ctx context.Context, id string) ([]cairn.Version, error)
}

// checkPast checks the history of every collection of got that keeps one.
func checkPast(ctx context.Context, v *verdict, db *cairn.DB, got map[string]observed, p *pastCheck) {
	if p == nil {
		return
	}
	ackedVers := map[string]map[string][]int{} // coll -> id -> versions acknowledged in the trial
	for _, o := range p.acked {
		if o.kind != "add" && o.kind != "ups" {
			continue
		}
		if ackedVers[o.coll] == nil {
			ackedVers[o.coll] = map[string][]int{}
		}
		for _, id := range o.ids {
			ackedVers[o.coll][id] = append(ackedVers[o.coll][id], o.ver)
		}
	}
	for name, obs := range got {
		if configOf(name).KeepHistory == nil {
			continue
		}
		c, err := target(ctx, db, name)
		if err != nil {
			v.damage("history of %s: %v", name, err)
			continue
		}
		h := c.(historian)
		ids := map[string]bool{}
		for id := range obs {
			ids[id] = true
		}
		for id := range p.stored[name] {
			ids[id] = true
		}
		for id := range ids {
			if msg := checkVersions(ctx, h, name, id, obs, p.stored, ackedVers[name][id]); msg != "" {
				v.damage("history of %s/%s: %s", name, id, msg)
			}
		}
	}
}

// checkVersions checks the history of one id; "" if it is right.
func checkVersions(ctx context.Context, h historian, coll, id string, obs observed, stored history, acked []int) string {
	vs, err := h.History(ctx, id)
	it, present := obs[id]
	if errors.Is(err, vector.ErrNotFound) {
		if present || len(acked) > 0 {
			return "none kept"
		}
		return "" // written only by a write in flight that did not happen
	}
	if err != nil {
		return err.Error()
	}
	cur := vs[0]
	switch {
	case !cur.Until.IsZero():
		return "the newest version has an end"
	case cur.Absent == present:
		return fmt.Sprintf("the newest version is absent: %v, the item is there: %v", cur.Absent, present)
	case present:
		if !slices.Equal(cur.Item.Embedding, it.Embedding) || cur.Item.Text != it.Text || !reflect.DeepEqual(cur.Item.Metadata, it.Metadata) {
			return fmt.Sprintf("the newest version (v%v) is not the item (v%v)", cur.Item.Metadata["v"], it.Metadata["v"])
		}
	}
	var seen []int
	for i, ver := range vs {
		if i > 0 && !ver.Until.Equal(vs[i-1].From) {
			return fmt.Sprintf("version %d ends at %v, the next begins at %v", i, ver.Until, vs[i-1].From)
		}
		if i > 0 && ver.Absent && vs[i-1].Absent {
			return fmt.Sprintf("versions %d and %d are both absences", i-1, i)
		}
		if ver.Absent {
			continue
		}
		if !earlier(stored, coll, ver.Item) {
			return fmt.Sprintf("version %d (v%v) is not one a write stored", i, ver.Item.Metadata["v"])
		}
		seen = append(seen, int(ver.Item.Metadata["v"].(float64)))
	}
	for _, a := range acked {
		if !slices.Contains(seen, a) {
			return fmt.Sprintf("the acknowledged v%d is missing (kept: %v)", a, seen)
		}
	}
	return ""
}
