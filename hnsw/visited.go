package hnsw

// visited is the set of nodes a search has seen: one tag per node, and a
// node counts as visited when its tag equals the current generation. It is
// reset by bumping the generation, not by clearing, so a search costs
// nothing for the nodes it never touches (hnswlib's visited_list_pool).
// Tags are uint16 to keep the array small in cache; it is cleared once every
// 65,535 resets.
type visited struct {
	tags []uint16
	gen  uint16
}

// reset empties v and makes room for n nodes.
func (v *visited) reset(n int) {
	if len(v.tags) < n {
		v.tags = make([]uint16, n+n/4)
		v.gen = 0
	}
	v.gen++
	if v.gen == 0 {
		clear(v.tags)
		v.gen = 1
	}
}

// visit marks n visited and reports whether it already was.
func (v *visited) visit(n node) bool {
	if v.tags[n] == v.gen {
		return true
	}
	v.tags[n] = v.gen
	return false
}

// count returns the number of nodes visited since the last reset. It reads
// every tag: for measurements, not for the search itself.
func (v *visited) count() int {
	n := 0
	for _, t := range v.tags {
		if t == v.gen {
			n++
		}
	}
	return n
}
