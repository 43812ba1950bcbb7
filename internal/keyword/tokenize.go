// Package keyword is a full-text index over short texts, ranked by BM25,
// whose words and scores are those of SQLite's FTS5 with its default
// tokenizer (unicode61, remove_diacritics=1) and its bm25() function
// (k1 = 1.2, b = 0.75). It lets a collection kept in memory and one kept in
// a SQLite file rank keyword matches the same way, from one implementation.
//
// This file holds the tokenizer: how text is cut into words and how each
// word is folded.
package keyword

import (
	"cmp"
	"slices"
)

// MaxTokenBytes is the longest token kept: longer ones are cut to this
// many bytes, as FTS5 does (FTS5_MAX_TOKEN_SIZE).
const MaxTokenBytes = 32768

// Tokens returns the words of text in order, each folded to lower case
// with diacritics removed, exactly as FTS5's unicode61 tokenizer with its
// default options produces them:
//
//   - A token character is an ASCII letter or digit, or a non-ASCII code
//     point of general category L*, N* or Co, by the Unicode tables SQLite
//     was built with (see tables.go). Everything else separates tokens,
//     except that a combining diacritic inside a word continues it.
//   - Each character is folded to lower case (simple case folding, BMP and
//     Deseret only) and, in the BMP, stripped of its diacritic; a diacritic
//     mark folds to nothing. Code points from 1<<20 on (and the values past
//     U+10FFFF that broken UTF-8 can encode) are all of one class.
//   - Bytes that are not valid UTF-8 are read the way SQLite reads them: a
//     stray continuation byte is the code point of the same value, an
//     overlong form, surrogate or U+FFFE/U+FFFF is U+FFFD.
//   - A token longer than MaxTokenBytes is cut to that many bytes.
//
// Tokens never panics, whatever the bytes of text.
func Tokens(text string) []string {
	var out []string
	for s := newScanner(text); s.next(); {
		out = append(out, string(s.tok))
	}
	return out
}

// scanner reads the tokens of a text one by one:
//
//	for s := newScanner(text); s.next(); { use s.tok, s.from }
//
// tok is the token, folded, in a buffer the next call reuses; from is the
// part of the text it was read from.
type scanner struct {
	text string
	i    int
	tok  []byte
	from string
}

func newScanner(text string) *scanner {
	return &scanner{text: text, tok: make([]byte, 0, 64)}
}

// reset makes s scan text, keeping its buffer.
func (s *scanner) reset(text string) {
	s.text, s.i, s.tok, s.from = text, 0, s.tok[:0], ""
}

// next reads the next token, or reports false at the end of the text.
func (s *scanner) next() bool {
	text, i := s.text, s.i
	out := s.tok[:0]
	for i < len(text) {
		// Skip separators, up to the first token character.
		start := i
		c := text[i]
		if c < 0x80 {
			if !asciiToken[c] {
				i++
				continue
			}
		} else {
			r, n := decode(text[i:])
			i += n
			if classOf(r) != classToken {
				continue
			}
			start = i - n
			out = appendFolded(out, r)
		}
		// Take token characters (and diacritics), folding them in.
		for i < len(text) {
			c := text[i]
			if c < 0x80 {
				if !asciiToken[c] {
					break
				}
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				out = append(out, c)
				i++
				continue
			}
			r, n := decode(text[i:])
			if classOf(r) == classSeparator {
				break // the next call skips it
			}
			i += n
			out = appendFolded(out, r)
		}
		if len(out) > MaxTokenBytes {
			out = out[:MaxTokenBytes]
		}
		s.i, s.tok, s.from = i, out, text[start:i]
		return true
	}
	s.i, s.tok = i, out
	return false
}

// asciiToken reports which ASCII bytes are token characters: letters and
// digits.
var asciiToken = func() (t [128]bool) {
	for c := range t {
		t[c] = '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
	}
	return t
}()

// decode reads one code point from the start of s, which begins with a
// byte ≥ 0x80, the way SQLite's READ_UTF8 does, and returns it with the
// number of bytes it took. A lead byte takes every continuation byte that
// follows it, however many; the value is computed in 32 bits, so it may be
// beyond U+10FFFF.
func decode(s string) (uint32, int) {
	c := uint32(s[0])
	n := 1
	if c >= 0xc0 {
		c = uint32(leadBits(byte(c)))
		for n < len(s) && s[n]&0xc0 == 0x80 {
			c = c<<6 + uint32(s[n]&0x3f)
			n++
		}
		if c < 0x80 || c&0xfffff800 == 0xd800 || c&0xfffffffe == 0xfffe {
			c = 0xfffd
		}
	}
	return c, n
}

// leadBits returns the payload bits of a UTF-8 lead byte b ≥ 0xc0 as
// SQLite takes them: the bits after the length prefix, for prefixes up to
// six bytes long (0xfe and 0xff carry none).
func leadBits(b byte) byte {
	switch {
	case b < 0xe0:
		return b & 0x1f
	case b < 0xf0:
		return b & 0x0f
	case b < 0xf8:
		return b & 0x07
	case b < 0xfc:
		return b & 0x03
	case b < 0xfe:
		return b & 0x01
	}
	return 0
}

// class is what the tokenizer does with a non-ASCII code point.
type class uint8

const (
	classSeparator class = iota // ends a token
	classToken                  // starts or continues a token
	classMark                   // continues a token, never starts one
)

// tableEnd is where the tables end: SQLite's category lookup gives every
// value from it on the same class, classBeyond.
const tableEnd = 1 << 20

// classOf returns the class of a code point ≥ 0x80.
func classOf(c uint32) class {
	if c >= tableEnd {
		return classBeyond
	}
	i, found := slices.BinarySearchFunc(classRanges, c, func(e classRange, c uint32) int {
		switch {
		case e.hi < c:
			return -1
		case e.lo > c:
			return 1
		}
		return 0
	})
	if !found {
		return classSeparator
	}
	return classRanges[i].class
}

// fold returns what a token character c ≥ 0x80 becomes in a token: its
// lower-case form without its diacritic, or 0 for nothing (a diacritic
// mark).
func fold(c uint32) uint32 {
	i, found := slices.BinarySearchFunc(foldPairs, c, func(p foldPair, c uint32) int { return cmp.Compare(p.from, c) })
	if !found {
		return c
	}
	return foldPairs[i].to
}

// appendFolded appends the folded form of c (≥ 0x80) to out, encoded as
// SQLite's WRITE_UTF8 does (which, past U+1FFFFF, drops the high bits).
func appendFolded(out []byte, c uint32) []byte {
	c = fold(c)
	switch {
	case c == 0:
		return out
	case c < 0x80:
		return append(out, byte(c))
	case c < 0x800:
		return append(out, 0xc0|byte(c>>6&0x1f), 0x80|byte(c&0x3f))
	case c < 0x10000:
		return append(out, 0xe0|byte(c>>12&0x0f), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
	}
	return append(out, 0xf0|byte(c>>18&0x07), 0x80|byte(c>>12&0x3f), 0x80|byte(c>>6&0x3f), 0x80|byte(c&0x3f))
}

// classRange gives the class of the code points lo..hi; code points ≥ 0x80
// in no range are separators.
type classRange struct {
	lo, hi uint32
	class  class
}

// foldPair says that the token character from becomes to in a token (0:
// nothing); characters in no pair stay as they are.
type foldPair struct {
	from, to uint32
}
