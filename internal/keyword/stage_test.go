package keyword

// This file tests the batch side of indexing: AnalyzeAll against
// Analyze, Stage, Commit and Unstage against AddDoc, and the books of
// lazy removal.

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

// TestStage checks that documents staged and committed search as those
// added by AddDoc, that staged documents are in no search and no count
// until committed, and that Unstage leaves nothing behind.
func TestStage(t *testing.T) {
	texts := shortTexts(500, 6)
	plain, staged := New(), New()
	docs := make([]Doc, len(texts))
	AnalyzeAll(texts, docs)
	ids := make([]vector.ID, len(texts))
	ptrs := make([]*Doc, len(texts))
	for i := range texts {
		ids[i], ptrs[i] = vector.ID(i+1), &docs[i]
		plain.Add(ids[i], texts[i])
	}
	staged.Add(9999, texts[3]) // one live document while the rest is staged
	staged.Stage(ids, ptrs)
	terms, _ := ParseQuery(texts[3])
	if hits := staged.Search(terms, 1000, nil, nil); len(hits) != 1 || hits[0].ID != 9999 || staged.Len() != 1 {
		t.Fatalf("staged documents are visible: %v, Len %d", hits, staged.Len())
	}
	staged.Remove(9999)
	for i := range docs {
		staged.Commit(&docs[i])
	}
	for _, q := range []string{"w1", "w2 w3", "w10 w100 w1000", texts[7]} {
		terms, _ := ParseQuery(q)
		if a, b := plain.Search(terms, 20, nil, nil), staged.Search(terms, 20, nil, nil); !reflect.DeepEqual(a, b) {
			t.Fatalf("%q: AddDoc gives %v, Stage and Commit %v", q, a, b)
		}
	}
	if plain.Len() != staged.Len() || plain.Tokens() != staged.Tokens() {
		t.Fatalf("Len %d, %d; Tokens %d, %d", plain.Len(), staged.Len(), plain.Tokens(), staged.Tokens())
	}
	checkBooks(t, staged)
	// Staged documents survive the removal of every live document holding
	// their terms, and Unstage then frees everything.
	x := New()
	x.Add(1, "rare shared")
	d := Analyze("rare other")
	x.Stage([]vector.ID{2}, []*Doc{&d})
	x.Remove(1)
	if _, ok := x.terms["rare"]; !ok {
		t.Fatal("Remove freed a term a staged document holds")
	}
	if _, ok := x.terms["shared"]; ok {
		t.Fatal("Remove kept a term no document holds")
	}
	x.Unstage([]*Doc{&d})
	checkBooks(t, x)
	if len(x.terms) != 0 || x.Len() != 0 {
		t.Fatalf("after Unstage: terms %v, Len %d", x.terms, x.Len())
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
			switch x.docs[p.slot].state {
			case docDead:
				refs[p.slot]++
			case docLive:
				live++
			}
		}
		if int32(live) != x.df[num] {
			t.Fatalf("term %d: %d live postings, df %d", num, live, x.df[num])
		}
	}
	for slot := range x.docs {
		d := &x.docs[slot]
		dead := d.state == docDead
		if dead && d.refs != refs[uint32(slot)] {
			t.Fatalf("dead slot %d: refs %d, named by %d postings", slot, d.refs, refs[uint32(slot)])
		}
		if dead && d.refs == 0 {
			t.Fatalf("dead slot %d named by no posting is not free", slot)
		}
	}
}
