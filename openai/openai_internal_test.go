package openai

import (
	"errors"
	"testing"
)

// FuzzDecodeEmbeddings checks that any response body either decodes to
// exactly n non-empty vectors or gives ErrBadResponse, never a panic.
func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"data":[{"index":1,"embedding":[1,2]},{"index":0,"embedding":[3,4]}]}`), 2)
	f.Add([]byte(`{"data":[{"embedding":[1]}]}`), 1)
	f.Add([]byte(`{"data":[{"index":-1,"embedding":[1]}]}`), 1)
	f.Add([]byte(`{"data":null}`), 0)
	f.Add([]byte(`[]`), 3)
	f.Add([]byte(`{"data":[{"embedding":[1,null]}]}`), 1)
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		if n < 0 || n > 64 {
			return
		}
		vs, err := decodeEmbeddings(body, n)
		if err != nil {
			if !errors.Is(err, ErrBadResponse) {
				t.Fatalf("error %v does not wrap ErrBadResponse", err)
			}
			return
		}
		if len(vs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vs), n)
		}
		for i, v := range vs {
			if len(v) == 0 {
				t.Fatalf("vector %d is empty", i)
			}
		}
	})
}
