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
//
// The sifts move a hole rather than swapping (one store a level instead of
// two, the moving candidate kept in registers) and index with unsigned
// integers checked against the length, so that the compiler proves the
// child reads in bounds: together 0.80 of the heaps' instructions in a
// query (callgrind, BenchmarkCountQueries).
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	j := uint(len(s) - 1)
	for j > 0 {
		i := (j - 1) / 2
		p := s[i]
		if p.dist <= c.dist {
			break
		}
		s[j] = p
		j = i
	}
	s[j] = c
}

func (h *minHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	s = s[:n]
	*h = s
	if n > 0 {
		i := uint(0)
		for {
			l := 2*i + 1
			if l >= uint(len(s)) {
				break
			}
			j, cj := l, s[l]
			if r := l + 1; r < uint(len(s)) && s[r].dist < cj.dist {
				j, cj = r, s[r]
			}
			if last.dist <= cj.dist {
				break
			}
			s[i] = cj
			i = j
		}
		s[i] = last
	}
	return top
}

type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	s := *h
	j := uint(len(s) - 1)
	for j > 0 {
		i := (j - 1) / 2
		p := s[i]
		if p.dist >= c.dist {
			break
		}
		s[j] = p
		j = i
	}
	s[j] = c
}

func (h *maxHeap) pop() cand {
	s := *h
	top := s[0]
	n := len(s) - 1
	last := s[n]
	*h = s[:n]
	if n > 0 {
		h.down(last)
	}
	return top
}

// replaceTop replaces the furthest candidate with c, which must be closer:
// one sift instead of a push and a pop.
func (h *maxHeap) replaceTop(c cand) {
	h.down(c)
}

// down puts c at the root, in place of the candidate there, and restores
// the heap order; the heap is not empty.
func (h *maxHeap) down(c cand) {
	s := *h
	i := uint(0)
	for {
		l := 2*i + 1
		if l >= uint(len(s)) {
			break
		}
		j, cj := l, s[l]
		if r := l + 1; r < uint(len(s)) && s[r].dist > cj.dist {
			j, cj = r, s[r]
		}
		if c.dist >= cj.dist {
			break
		}
		s[i] = cj
		i = j
	}
	s[i] = c
}
