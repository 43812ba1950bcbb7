package main

// This file holds the parent's model of a database: what the acknowledged
// writes of the children left in it, and the writes that were in flight
// when a child was killed, each of which must be wholly there or wholly
// absent.

import (
	"fmt"
	"strconv"
	"strings"
)

// entry is the expected state of one item.
type entry struct {
	ver int // version stored
	w   int // writer that stored it
}

// model is the expected content of a database: collection -> id -> entry.
type model map[string]map[string]entry

func (m model) clone() model {
	out := model{}
	for c, items := range m {
		cp := make(map[string]entry, len(items))
		for id, e := range items {
			cp[id] = e
		}
		out[c] = cp
	}
	return out
}

// op is one write of a child's log.
type op struct {
	w, seq int
	kind   string // add, ups, del, delwhere, restore, mk, rm, reopen
	coll   string
	ver    int      // add, ups
	ids    []string // add, ups, del, restore
	vers   []int    // restore: the version of each of ids after it, 0 for none
	group  int      // delwhere
	count  int      // delwhere: how many the child was told it removed (-1 unknown)
}

// parseLog reads a child's output: the writes acknowledged in the order
// they were acknowledged, the writes in flight (tried, never
// acknowledged), whether the child got ready, and a child's own error.
func parseLog(lines []string) (acked, pending []*op, ready bool, childErr string, err error) {
	tried := map[int]*op{}
	for _, line := range lines {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "ready":
			ready = true
		case "err":
			childErr = line
		case "try":
			o, perr := parseTry(f[1:])
			if perr != nil {
				return nil, nil, false, "", fmt.Errorf("%w: %q", perr, line)
			}
			tried[o.seq] = o
		case "ok":
			if len(f) < 3 {
				return nil, nil, false, "", fmt.Errorf("bad line %q", line)
			}
			seq, _ := strconv.Atoi(f[2])
			o := tried[seq]
			if o == nil {
				return nil, nil, false, "", fmt.Errorf("ok for untried write: %q", line)
			}
			delete(tried, seq)
			if len(f) > 3 {
				o.count, _ = strconv.Atoi(f[3])
			}
			acked = append(acked, o)
		default:
			return nil, nil, false, "", fmt.Errorf("bad line %q", line)
		}
	}
	for _, o := range tried {
		pending = append(pending, o)
	}
	return acked, pending, ready, childErr, nil
}

func parseTry(f []string) (*op, error) {
	if len(f) < 3 {
		return nil, fmt.Errorf("short try line")
	}
	w, err1 := strconv.Atoi(f[0])
	seq, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil {
		return nil, fmt.Errorf("bad writer or sequence number")
	}
	o := &op{w: w, seq: seq, kind: f[2], count: -1}
	switch o.kind {
	case "reopen":
		return o, nil
	case "mk", "rm":
		if len(f) != 4 {
			return nil, fmt.Errorf("bad %s", o.kind)
		}
		o.coll = f[3]
	case "delwhere":
		if len(f) != 5 {
			return nil, fmt.Errorf("bad delwhere")
		}
		o.coll = f[3]
		o.group, _ = strconv.Atoi(f[4])
	case "restore":
		if len(f) < 5 {
			return nil, fmt.Errorf("bad restore")
		}
		o.coll = f[3]
		for _, p := range f[4:] {
			id, v, ok := strings.Cut(p, ":")
			ver, err := strconv.Atoi(v)
			if !ok || err != nil {
				return nil, fmt.Errorf("bad restore of %q", p)
			}
			o.ids, o.vers = append(o.ids, id), append(o.vers, ver)
		}
	case "add", "ups", "del":
		if len(f) < 6 {
			return nil, fmt.Errorf("bad %s", o.kind)
		}
		o.coll = f[3]
		o.ver, _ = strconv.Atoi(f[4])
		o.ids = f[5:]
	default:
		return nil, fmt.Errorf("unknown write %q", o.kind)
	}
	return o, nil
}

// apply changes m as o does once committed. It returns an error if o
// contradicts m (an add of an id m holds, a delete of one it lacks), which
// would mean the child and the model disagree.
func (m model) apply(o *op) error {
	switch o.kind {
	case "reopen":
	case "mk":
		if _, ok := m[o.coll]; ok {
			return fmt.Errorf("create of existing collection %s", o.coll)
		}
		m[o.coll] = map[string]entry{}
	case "rm":
		delete(m, o.coll)
	case "add", "ups":
		items := m[o.coll]
		if items == nil {
			return fmt.Errorf("%s to missing collection %s", o.kind, o.coll)
		}
		for _, id := range o.ids {
			if _, ok := items[id]; ok && o.kind == "add" {
				return fmt.Errorf("add of existing id %s/%s", o.coll, id)
			}
			items[id] = entry{ver: o.ver, w: o.w}
		}
	case "del":
		items := m[o.coll]
		for _, id := range o.ids {
			if _, ok := items[id]; !ok {
				return fmt.Errorf("delete of missing id %s/%s", o.coll, id)
			}
			delete(items, id)
		}
	case "restore":
		items := m[o.coll]
		if items == nil {
			return fmt.Errorf("restore of missing collection %s", o.coll)
		}
		for i, id := range o.ids {
			if o.vers[i] == 0 {
				delete(items, id)
			} else {
				items[id] = entry{ver: o.vers[i], w: o.w}
			}
		}
	case "delwhere":
		items := m[o.coll]
		n := 0
		for id, e := range items {
			if e.w == o.w && groupOf(id) == float64(o.group) {
				delete(items, id)
				n++
			}
		}
		if o.count >= 0 && n != o.count {
			return fmt.Errorf("delete where w=%d g=%d removed %d, the model holds %d", o.w, o.group, o.count, n)
		}
	}
	return nil
}

// writes counts the item writes (and collection writes) of o, the unit of
// "acknowledged".
func (o *op) writes() int {
	switch o.kind {
	case "add", "ups", "del", "restore":
		return len(o.ids)
	case "reopen":
		return 0
	}
	return 1
}

func (o *op) String() string {
	s := fmt.Sprintf("%s %s", o.kind, o.coll)
	if len(o.ids) > 0 {
		s += fmt.Sprintf(" v%d %d ids (%s…)", o.ver, len(o.ids), o.ids[0])
	}
	return s
}
