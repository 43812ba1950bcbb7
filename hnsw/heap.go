package hnsw

// cand is a candidate of a search: a node and its distance to the query.
type cand struct {
	dist float32
	node node
}

// minHeap and maxHeap are binary heaps of candidates ordered by distance,
// with container/heap's sift logic specialised to cand so that nothing is
// boxed into an interface value. Push and Pop are O(log n), Top is O(1).
// minHeap is the paper's C (candidates to expand, closest on top); maxHeap
// is W (the ef best found so far, furthest on top, so it can be bounded).
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	j := len(s) - 1
	for j > 0 {
		i := (j - 1) / 2
		if s[i].dist <= s[j].dist {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	s = s[:n]
	*h = s
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s[r].dist < s[l].dist {
			j = r
		}
		if s[i].dist <= s[j].dist {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
	return top
}

type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	j := len(s) - 1
	for j > 0 {
		i := (j - 1) / 2
		if s[i].dist >= s[j].dist {
			break
		}
		s[i], s[j] = s[j], s[i]
		j = i
	}
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	s[0] = s[n]
	*h = s[:n]
	h.down()
	return top
}

// replaceTop replaces the furthest candidate with c, which must be closer:
// one sift instead of a push and a pop.
func (h *maxHeap) replaceTop(c cand) {
	(*h)[0] = c
	h.down()
}

// down restores the heap order from the root.
func (h *maxHeap) down() {
	s := *h
	n := len(s)
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && s[r].dist > s[l].dist {
			j = r
		}
		if s[i].dist >= s[j].dist {
			break
		}
		s[i], s[j] = s[j], s[i]
		i = j
	}
}
