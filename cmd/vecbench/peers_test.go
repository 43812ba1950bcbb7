// This file tests the reading of --peers-json.

package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cairndb/cairn/vector"
)

func TestParsePeers(t *testing.T) {
	b, err := os.ReadFile("testdata/hnswlib.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ps, err := parsePeers(strings.NewReader(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 || ps[0].System != "hnswlib" || ps[0].M != 16 || ps[0].EfConstruction != 200 || ps[3].Ef != 160 {
		t.Fatalf("%+v", ps)
	}
	for _, c := range []struct{ name, in, want string }{
		{"empty", "\n\n", "no results"},
		{"not-json", "{\"system\":", "line 1"},
		{"recall", `{"system":"x","n":1,"dim":1,"k":1,"recall":1.5,"qps":1}`, "recall 1.5"},
		{"qps", "\n" + `{"system":"x","n":1,"dim":1,"k":1,"recall":0.5,"qps":0}`, "line 2: "},
		{"no-system", `{"n":1,"dim":1,"k":1,"recall":0.5,"qps":1}`, "no system"},
		{"long", strings.Repeat(" ", maxPeerLine+1), "token too long"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := parsePeers(strings.NewReader(c.in))
			if !errors.Is(err, vector.ErrCorrupt) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want ErrCorrupt mentioning %q", err, c.want)
			}
		})
	}
}

// FuzzParsePeers: any input gives results that pass check, or ErrCorrupt;
// never a panic.
func FuzzParsePeers(f *testing.F) {
	if b, err := os.ReadFile("testdata/hnswlib.jsonl"); err == nil {
		f.Add(string(b))
	}
	f.Add(`{"system":"hnswlib","n":10,"dim":2,"k":1,"recall":1,"qps":5}`)
	f.Add("{}\n[]\n")
	f.Fuzz(func(t *testing.T, in string) {
		ps, err := parsePeers(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("error %v does not wrap ErrCorrupt", err)
			}
			return
		}
		for _, p := range ps {
			if err := p.check(); err != nil {
				t.Fatalf("accepted %+v: %v", p, err)
			}
		}
	})
}
