package keyword

// This file tests the batch side of indexing: AnalyzeAll against
// Analyze, and Pin, Unpin and AddNew against AddDoc.

import (
	"reflect"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// TestAnalyzeAllIsAnalyze checks that AnalyzeAll gives each text the Doc
// Analyze gives it: texts with repeats, case, diacritics, more than 16
// distinct terms and none.
func TestAnalyzeAllIsAnalyze(t *testing.T) {
	texts := append(shortTexts(300, 5),
		"", "   ", "Élan élan ELAN naïve Naive", "a b c d e f g h i j k l m n o p q r s t u v a b c",
		strings.Repeat("x ", 100), "日本語 テキスト 日本語", "\xff\xfe bad bytes bad")
	docs := make([]Doc, len(texts))
	AnalyzeAll(texts, docs)
	for i, text := range texts {
		want := Analyze(text)
		if got := docs[i]; got.length != want.length || !reflect.DeepEqual(termsOf(got), termsOf(want)) {
			t.Fatalf("%q: AnalyzeAll %v (%d tokens), Analyze %v (%d)", text, got.terms, got.length, want.terms, want.length)
		}
	}
}

func termsOf(d Doc) []termCount {
	if len(d.terms) == 0 {
		return nil
	}
	return d.terms
}

// TestPin checks that documents added through Pin and AddNew search as
// those added by AddDoc, that a pinned term survives the removal of every
// document holding it, and that Unpin then frees it.
func TestPin(t *testing.T) {
	texts := shortTexts(500, 6)
	plain, pinned := New(), New()
	docs := make([]Doc, len(texts))
	AnalyzeAll(texts, docs)
	pinned.Pin(docs)
	for i, text := range texts {
		plain.Add(vector.ID(i+1), text)
		pinned.AddNew(vector.ID(i+1), docs[i])
	}
	for _, q := range []string{"w1", "w2 w3", "w10 w100 w1000", texts[7]} {
		terms, _ := ParseQuery(q)
		if a, b := plain.Search(terms, 20, nil), pinned.Search(terms, 20, nil); !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: AddDoc gives %v, Pin and AddNew %v", q, a, b)
		}
	}
	for _, n := range pinned.pins {
		if n != 0 {
			t.Fatalf("pins left after AddNew: %v", pinned.pins)
		}
	}
	// A document pinned but not added keeps its terms in the dictionary.
	x := New()
	x.Add(1, "rare shared")
	d := []Doc{Analyze("rare other")}
	x.Pin(d)
	x.Remove(1)
	if _, ok := x.terms["rare"]; !ok {
		t.Fatal("Remove freed a pinned term")
	}
	if _, ok := x.terms["shared"]; ok {
		t.Fatal("Remove kept an unpinned term no document holds")
	}
	x.Unpin(d)
	if len(x.terms) != 0 {
		t.Fatalf("terms left after Unpin: %v", x.terms)
	}
	// A pinned Doc added after a Remove has its terms by number.
	d = []Doc{Analyze("rare other")}
	x.Pin(d)
	x.Add(2, "rare")
	x.Remove(2)
	x.AddNew(3, d[0])
	terms, _ := ParseQuery("rare other")
	if hits := x.Search(terms, 5, nil); len(hits) != 1 || hits[0].ID != 3 {
		t.Fatalf("search after Pin, Remove, AddNew: %v", hits)
	}
}

// TestRemoveFreesSlots checks the lazy removal's bookkeeping: after
// adding and removing many documents in every order, each slot is free or
// holds a live document, no posting names a free slot, every list's live
// postings are its term's count, and an emptied index holds no term.
func TestRemoveFreesSlots(t *testing.T) {
	x := New()
	texts := shortTexts(3000, 8)
	for round := range 3 {
		for i, s := range texts {
			x.Add(vector.ID(round*10000+i+1), s)
		}
		var ids []vector.ID
		for i := range texts {
			if (i+round)%3 != 0 {
				ids = append(ids, vector.ID(round*10000+i+1))
			}
		}
		x.Remove(ids[:len(ids)/2]...)
		for _, id := range ids[len(ids)/2:] {
			x.Remove(id)
		}
		checkBooks(t, x)
	}
	for id := range x.slots {
		x.Remove(id)
	}
	checkBooks(t, x)
	if len(x.terms) != 0 || x.Len() != 0 || x.Tokens() != 0 {
		t.Fatalf("empty index holds %d terms, %d documents, %d tokens", len(x.terms), x.Len(), x.Tokens())
	}
}

func checkBooks(t *testing.T, x *Index) {
	t.Helper()
	free := map[uint32]bool{}
	for _, s := range x.freeSlot {
		free[s] = true
	}
	refs := map[uint32]uint32{}
	for num, list := range x.postings {
		live := 0
		for _, p := range list {
			if free[p.slot] {
				t.Fatalf("term %d names free slot %d", num, p.slot)
			}
			if x.docs[p.slot].dead {
				refs[p.slot]++
			} else {
				live++
			}
		}
		if int32(live) != x.df[num] {
			t.Fatalf("term %d: %d live postings, df %d", num, live, x.df[num])
		}
	}
	for slot := range x.docs {
		d := &x.docs[slot]
		if d.dead && d.refs != refs[uint32(slot)] {
			t.Fatalf("dead slot %d: refs %d, named by %d postings", slot, d.refs, refs[uint32(slot)])
		}
		if d.dead && d.refs == 0 {
			t.Fatalf("dead slot %d named by no posting is not free", slot)
		}
	}
}
