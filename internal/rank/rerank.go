// This file holds the check of a reranker's answer.
package rank

import (
	"errors"
	"fmt"
)

// ErrBadRerank is returned when a reranker's answer is not an order of the
// candidates it was given: an id it was not given, or one id twice.
var ErrBadRerank = errors.New("reranker returned an id it was not given, or an id twice")

// Order turns a reranker's answer, the ids of candidates in their new
// order, into indices of given (the candidates' ids as the reranker got
// them). The answer may leave candidates out: they are dropped. It returns
// an error wrapping [ErrBadRerank] if the answer names an id not in given
// or one id twice; given must hold distinct ids.
func Order(given, answer []string) ([]int, error) {
	at := make(map[string]int, len(given))
	for i, id := range given {
		at[id] = i
	}
	out := make([]int, len(answer))
	seen := make([]bool, len(given))
	for k, id := range answer {
		i, ok := at[id]
		if !ok {
			return nil, fmt.Errorf("%w: %q (answer %d) is not a candidate", ErrBadRerank, id, k)
		}
		if seen[i] {
			return nil, fmt.Errorf("%w: %q twice", ErrBadRerank, id)
		}
		seen[i] = true
		out[k] = i
	}
	return out, nil
}
