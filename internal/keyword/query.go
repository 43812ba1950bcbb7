// This file holds the reading of a keyword query: plain text, never query
// syntax.
package keyword

import (
	"fmt"

	"github.com/cairndb/cairn/vector"
)

// Limits on a query, so that one call cannot ask for unbounded work.
const (
	// MaxQueryBytes is the longest query text accepted.
	MaxQueryBytes = 4096
	// MaxQueryTerms is the most distinct words a query may have.
	MaxQueryTerms = 64
)

// Errors of ParseQuery. Both wrap [vector.ErrInvalidOptions].
var (
	// ErrEmptyQuery is returned for a query with no words (empty, or only
	// punctuation and spaces).
	ErrEmptyQuery = fmt.Errorf("keyword query has no words: %w", vector.ErrInvalidOptions)
	// ErrQueryTooLong is returned for a query over MaxQueryBytes bytes or
	// MaxQueryTerms distinct words.
	ErrQueryTooLong = fmt.Errorf("keyword query too long: %w", vector.ErrInvalidOptions)
)

// ParseQuery returns the distinct words of q, in the order they first
// appear, tokenized exactly as documents are (see [Tokens]). Nothing in q
// is an operator: quotes, '*', '-', '+', '^', ':', parentheses, NEAR, AND,
// OR and NOT are punctuation or words like any other. A document matches
// if it holds any of the words.
//
// It returns an error wrapping [ErrEmptyQuery] if q has no words and
// [ErrQueryTooLong] if q is over the limits.
func ParseQuery(q string) ([]string, error) {
	if len(q) > MaxQueryBytes {
		return nil, fmt.Errorf("%w: %d bytes, at most %d", ErrQueryTooLong, len(q), MaxQueryBytes)
	}
	var terms []string
	seen := map[string]struct{}{}
	var tooMany bool
	for s := newScanner(q); s.next(); {
		if _, dup := seen[string(s.tok)]; dup {
			continue
		}
		if len(terms) == MaxQueryTerms {
			tooMany = true
			break
		}
		t := string(s.tok)
		seen[t] = struct{}{}
		terms = append(terms, t)
	}
	if tooMany {
		return nil, fmt.Errorf("%w: more than %d distinct words", ErrQueryTooLong, MaxQueryTerms)
	}
	if len(terms) == 0 {
		return nil, ErrEmptyQuery
	}
	return terms, nil
}
