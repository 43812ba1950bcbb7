// This file holds the inverted index and its BM25 ranking.
package keyword

import (
	"container/heap"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/cairndb/cairn/vector"
)

// BM25's constants, as FTS5's bm25() fixes them.
const (
	k1 = 1.2
	b  = 0.75
)

// Index is an inverted index of documents (texts identified by
// vector.ID), ranked by BM25 as FTS5's bm25() ranks the rows of a
// one-column table holding the same texts: the same documents match, in the
// same order, with the same scores (negated: larger is better here).
//
// An Index is not safe for concurrent use with its writes: Add and Remove
// need the caller's exclusive lock; any number of Searches may run at once
// (under a shared lock).
type Index struct {
	terms    map[string]uint32 // a term's number
	names    []string          // by term number
	postings [][]posting       // by term number, the removed documents' among them
	df       []int32           // by term number: the documents holding it (its live postings)
	freeTerm []uint32          // numbers of terms no document has any more

	slots    map[vector.ID]uint32 // a document's slot
	docs     []doc                // by slot
	freeSlot []uint32
	tokens   int64 // of all documents

	accs sync.Pool // of *accumulator, for Search
}

// doc is one document: its id, its length in tokens and the numbers of
// its distinct terms (to remove it by). A removed document's slot stays
// taken (dead) until the last posting naming it is purged from its list:
// refs counts those postings. A staged document's postings are in their
// lists, but it is in no search and no statistic yet (Stage).
type doc struct {
	id     vector.ID
	length uint32
	terms  []uint32
	state  docState
	refs   uint32
}

type docState uint8

const (
	docLive docState = iota
	docStaged
	docDead
)

// posting says that the document in slot, of length tokens, holds a term
// tf times. The length is copied here so that scoring a posting reads
// nothing else.
type posting struct {
	slot, tf, length uint32
}

// New returns an empty index.
func New() *Index {
	return &Index{terms: map[string]uint32{}, slots: map[vector.ID]uint32{}}
}

// Len returns the number of documents.
func (x *Index) Len() int { return len(x.slots) }

// Tokens returns the number of tokens of all documents.
func (x *Index) Tokens() int64 { return x.tokens }

// Doc is a text cut into its terms, ready to enter an index: what
// [Analyze] returns, so that the tokenizing can happen before the caller
// takes the lock that [Index.AddDoc] needs. A Doc is read-only once made,
// but for [Index.Pin].
type Doc struct {
	terms  []termCount // distinct, in order of first appearance
	length uint32      // tokens
	slot   uint32      // the slot Stage gave it
	staged bool
}

// termCount is a term of a Doc and the number of times it occurs.
type termCount struct {
	term string
	tf   uint32
}

// Analyze cuts text into a Doc.
func Analyze(text string) Doc {
	// About one token in six bytes of text: one allocation, most of the
	// time.
	return analyze(newScanner(text), make([]termCount, 0, termsFor(text)))
}

// termsFor is the room Analyze makes for the terms of text.
func termsFor(text string) int { return min(len(text)/6+2, 64) }

// AnalyzeAll cuts texts into docs (docs[i] from texts[i]; an empty text
// gives an empty Doc), the terms of all in one allocation most of the
// time: Analyze for a batch.
func AnalyzeAll(texts []string, docs []Doc) {
	n := 0
	for _, t := range texts {
		if t != "" {
			n += termsFor(t)
		}
	}
	slab := make([]termCount, n)
	var s *scanner // one for the batch, its buffer reused
	for i, t := range texts {
		if t == "" {
			docs[i] = Doc{}
			continue
		}
		if s == nil {
			s = newScanner(t)
		} else {
			s.reset(t)
		}
		c := termsFor(t)
		docs[i] = analyze(s, slab[:0:c]) // a Doc with more terms grows out of the slab
		slab = slab[c:]
	}
}

// analyze cuts the text s scans into a Doc whose terms are appended to
// terms.
func analyze(s *scanner, terms []termCount) Doc {
	d := Doc{terms: terms}
	var at map[string]int // term → index, once there are many terms
	// The first terms are looked up by a scan, their hashes compared
	// before their bytes.
	var hs [16]uint32
	for s.next() {
		tok := s.tok
		d.length++
		i := -1
		var h uint32
		if at != nil {
			if j, ok := at[string(tok)]; ok {
				i = j
			}
		} else {
			h = 2166136261 // FNV-1a
			for _, c := range tok {
				h = (h ^ uint32(c)) * 16777619
			}
			for j := range d.terms {
				if hs[j] == h && d.terms[j].term == string(tok) {
					i = j
					break
				}
			}
		}
		if i >= 0 {
			d.terms[i].tf++
			continue
		}
		// A token spelled as in the text (lower case ASCII, say) shares
		// the text's bytes; a term new to the index is cloned (newTerm).
		t := s.from
		if t != string(tok) {
			t = string(tok)
		}
		d.terms = append(d.terms, termCount{t, 1})
		if at == nil && len(d.terms) <= len(hs) {
			hs[len(d.terms)-1] = h
		}
		if at != nil {
			at[t] = len(d.terms) - 1
		} else if len(d.terms) == 16 {
			at = make(map[string]int, 32)
			for j, tc := range d.terms {
				at[tc.term] = j
			}
		}
	}
	return d
}

// Add indexes text as the document id, replacing the document id had.
// Every call adds a document, even one whose text has no tokens: like a
// row of FTS5, it counts in the number of documents BM25 weighs terms by.
func (x *Index) Add(id vector.ID, text string) { x.AddDoc(id, Analyze(text)) }

// Stage enters docs, as the documents ids (new to the index), into the
// index's lists without making them visible: no search finds them and
// they count in no statistic until [Index.Commit], or [Index.Unstage]
// drops them. It does the work of adding (the dictionary's lookups, the
// postings' appends) at another moment than the one that makes the
// documents visible, which is then a few counts per term. It needs the
// exclusive lock, as AddDoc does; a Doc is staged once.
func (x *Index) Stage(ids []vector.ID, docs []*Doc) {
	n := 0
	for _, d := range docs {
		n += len(d.terms)
	}
	slab := make([]uint32, n) // one allocation for the batch
	for i, d := range docs {
		nums := slab[:len(d.terms):len(d.terms)]
		slab = slab[len(d.terms):]
		slot := x.newSlot()
		for j, tc := range d.terms {
			num, ok := x.terms[tc.term]
			if !ok {
				num = x.newTerm(tc.term)
			}
			nums[j] = num
			x.postings[num] = append(x.postings[num], posting{slot: slot, tf: tc.tf, length: d.length})
		}
		x.docs[slot] = doc{id: ids[i], length: d.length, terms: nums, state: docStaged}
		d.slot, d.staged = slot, true
	}
}

// Commit makes a staged Doc a document of the index, as AddNew would.
func (x *Index) Commit(d *Doc) {
	if !d.staged {
		return
	}
	dd := &x.docs[d.slot]
	dd.state = docLive
	x.slots[dd.id] = d.slot
	x.tokens += int64(dd.length)
	for _, num := range dd.terms {
		x.df[num]++
	}
	d.staged = false
}

// Unstage drops staged docs that will not be committed.
func (x *Index) Unstage(docs []*Doc) {
	for _, d := range docs {
		if !d.staged {
			continue
		}
		d.staged = false
		dd := &x.docs[d.slot]
		terms := dd.terms
		dd.state, dd.refs, dd.terms = docDead, uint32(len(terms)), nil
		if dd.refs == 0 {
			x.freeSlotNum(d.slot)
		}
		for _, t := range terms {
			if live, n := int(x.df[t]), len(x.postings[t]); live == 0 || 2*live < n {
				x.purge(t)
			}
		}
	}
}

// Staged reports whether d is staged.
func (d *Doc) Staged() bool { return d.staged }

// newSlot returns a free slot.
func (x *Index) newSlot() uint32 {
	if n := len(x.freeSlot); n > 0 {
		slot := x.freeSlot[n-1]
		x.freeSlot = x.freeSlot[:n-1]
		return slot
	}
	x.docs = append(x.docs, doc{})
	return uint32(len(x.docs) - 1)
}

// AddDoc is [Index.Add] for a text already analyzed.
func (x *Index) AddDoc(id vector.ID, d Doc) {
	if _, ok := x.slots[id]; ok {
		x.Remove(id)
	}
	x.AddNew(id, d)
}

// AddNew is [Index.AddDoc] for an id the index does not hold, which it
// does not check.
func (x *Index) AddNew(id vector.ID, d Doc) {
	slot := x.newSlot()
	x.slots[id] = slot
	nums := make([]uint32, len(d.terms))
	for i, tc := range d.terms {
		num, ok := x.terms[tc.term]
		if !ok {
			num = x.newTerm(tc.term)
		}
		nums[i] = num
	}
	for i, num := range nums {
		x.postings[num] = append(x.postings[num], posting{slot: slot, tf: d.terms[i].tf, length: d.length})
		x.df[num]++
	}
	x.tokens += int64(d.length)
	x.docs[slot] = doc{id: id, length: d.length, terms: nums}
}

// newTerm gives term a number and an empty posting list.
func (x *Index) newTerm(term string) uint32 {
	var num uint32
	if n := len(x.freeTerm); n > 0 {
		num = x.freeTerm[n-1]
		x.freeTerm = x.freeTerm[:n-1]
	} else {
		num = uint32(len(x.postings))
		x.postings = append(x.postings, nil)
		x.names = append(x.names, "")
		x.df = append(x.df, 0)
	}
	term = strings.Clone(term) // not to keep a document's text alive
	x.terms[term] = num
	x.names[num] = term
	return num
}

// Remove takes documents out of the index; ids it does not hold are
// ignored. A removed document's postings stay in their lists, skipped by
// Search, until a list is more than half such (or holds no document any
// more): then one pass purges it. So a removal costs the number of its
// terms, and a list's purges cost in all about one pass per removal of
// half of it, however large the list (a word most documents hold).
func (x *Index) Remove(ids ...vector.ID) {
	for _, id := range ids {
		slot, ok := x.slots[id]
		if !ok {
			continue
		}
		delete(x.slots, id)
		d := &x.docs[slot]
		x.tokens -= int64(d.length)
		d.state, d.refs = docDead, uint32(len(d.terms))
		terms := d.terms
		d.terms = nil
		if d.refs == 0 {
			x.freeSlotNum(slot)
		}
		for _, t := range terms {
			x.df[t]--
			if live, n := int(x.df[t]), len(x.postings[t]); live == 0 || 2*live < n {
				x.purge(t)
			}
		}
	}
}

// purge drops the postings of removed documents from the list of term t,
// frees the slots no list names any more, and the term if no document
// holds it (staged documents included).
func (x *Index) purge(t uint32) {
	list := x.postings[t]
	keep := list[:0]
	for _, p := range list {
		d := &x.docs[p.slot]
		if d.state != docDead {
			keep = append(keep, p)
			continue
		}
		if d.refs--; d.refs == 0 {
			x.freeSlotNum(p.slot)
		}
	}
	clear(list[len(keep):])
	x.postings[t] = keep
	if len(keep) == 0 {
		x.freeTermNum(t)
	}
}

// freeSlotNum frees a dead slot no posting names.
func (x *Index) freeSlotNum(slot uint32) {
	x.docs[slot] = doc{}
	x.freeSlot = append(x.freeSlot, slot)
}

// freeTermNum frees the number of a term no document holds.
func (x *Index) freeTermNum(t uint32) {
	delete(x.terms, x.names[t])
	x.postings[t], x.names[t] = nil, ""
	x.freeTerm = append(x.freeTerm, t)
}

// Hit is one document a search found, with its BM25 score (FTS5's bm25()
// negated: larger is better).
type Hit struct {
	ID    vector.ID
	Score float64
}

// accumulator holds a search's running scores, by slot.
type accumulator struct {
	score   []float64
	touched []uint32
}

// Search returns the k best documents holding any of terms (tokens, as
// [ParseQuery] returns them), best first, ties by id; only documents for
// which allow returns true, if allow is not nil. A document's score is
// the sum, over the terms it holds, of
//
//	idf · tf·(k1+1) / (tf + k1·(1 − b + b·len/avglen))
//
// where idf = ln((N − n + 0.5)/(n + 0.5)) (at least 1e-6), N is the number
// of documents, n the number holding the term, tf the term's count in the
// document, len the document's length in tokens and avglen the mean
// length: FTS5's bm25() with k1 = 1.2 and b = 0.75, summed in the same
// order, so the scores are the same to the last bit or two. Terms are
// expected distinct: a repeated term counts twice, as in FTS5.
//
// The documents of unseen count in no statistic (N, n, avglen), as if
// they had been removed, and allow must refuse them: they are those the
// caller's reader no longer sees but that are still in the index.
func (x *Index) Search(terms []string, k int, allow func(vector.ID) bool, unseen []vector.ID) []Hit {
	if k <= 0 || len(x.slots) == 0 {
		return nil
	}
	var nums []uint32
	for _, term := range terms {
		if num, ok := x.terms[term]; ok && x.df[num] > 0 {
			nums = append(nums, num) // the others add nothing to any score
		}
	}
	nDocs, tokens, dfs := x.stats(nums, unseen)
	if nDocs == 0 {
		return nil
	}
	avg := float64(tokens) / nDocs
	var lists [][]posting
	var idfs []float64
	for i, num := range nums {
		n := dfs[i]
		if n == 0 {
			continue
		}
		idf := math.Log((nDocs - n + 0.5) / (n + 0.5))
		if idf <= 0 {
			idf = 1e-6
		}
		lists, idfs = append(lists, x.postings[num]), append(idfs, idf)
	}
	score := func(idf float64, p posting) float64 {
		tf, d := float64(p.tf), float64(p.length)
		return idf * (tf * (k1 + 1) / (tf + k1*(1-b+b*d/avg)))
	}
	top := make(hitHeap, 0, min(k, x.Len())) // k may be far more than it holds
	offer := func(h Hit) {
		if allow != nil && !allow(h.ID) {
			return
		}
		switch {
		case len(top) < k:
			heap.Push(&top, h)
		case better(h, top[0]):
			top[0] = h
			heap.Fix(&top, 0)
		}
	}
	switch len(lists) {
	case 0:
	case 1:
		// One term: a posting's score is the document's, no summing.
		for _, p := range lists[0] {
			if d := &x.docs[p.slot]; d.state == docLive {
				offer(Hit{ID: d.id, Score: score(idfs[0], p)})
			}
		}
	default:
		acc, _ := x.accs.Get().(*accumulator)
		if acc == nil {
			acc = &accumulator{}
		}
		if len(acc.score) < len(x.docs) {
			acc.score = make([]float64, len(x.docs))
		}
		for i, list := range lists {
			for _, p := range list {
				if x.docs[p.slot].state != docLive {
					continue
				}
				s := &acc.score[p.slot]
				if *s == 0 {
					acc.touched = append(acc.touched, p.slot)
				}
				*s += score(idfs[i], p)
			}
		}
		for _, slot := range acc.touched {
			offer(Hit{ID: x.docs[slot].id, Score: acc.score[slot]})
			acc.score[slot] = 0
		}
		acc.touched = acc.touched[:0]
		x.accs.Put(acc)
	}
	out := make([]Hit, len(top))
	for i := len(top) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&top).(Hit)
	}
	return out
}

// stats returns BM25's statistics without the documents of unseen: the
// number of documents, their tokens, and the number holding each of the
// terms nums.
func (x *Index) stats(nums []uint32, unseen []vector.ID) (nDocs float64, tokens int64, dfs []float64) {
	n, tokens := len(x.slots), x.tokens
	dfs = make([]float64, len(nums))
	for i, num := range nums {
		dfs[i] = float64(x.df[num])
	}
	for _, id := range unseen {
		slot, ok := x.slots[id]
		if !ok {
			continue // no text
		}
		d := &x.docs[slot]
		n--
		tokens -= int64(d.length)
		for i, num := range nums {
			if slices.Contains(d.terms, num) {
				dfs[i]--
			}
		}
	}
	return float64(n), tokens, dfs
}

// better reports whether a ranks before b: a higher score, or the same
// score and a smaller id.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.ID < b.ID
}

// hitHeap is a min-heap of hits, the worst on top.
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
