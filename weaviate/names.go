// This file holds how cairn's names become Weaviate's: collection names
// become class names, metadata keys property names, and ids UUIDs.

package weaviate

import (
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cairndb/cairn/vector"
)

// classPrefix starts the class of every collection this package creates;
// Collections lists only those.
const classPrefix = "Cairn_"

// Property names of the fields every object carries. Metadata properties
// start with "m_", so they never collide with these.
const (
	propID   = "cairn_id"   // the caller's id
	propText = "cairn_text" // the item's text
	propMeta = "cairn_md"   // all metadata as JSON, what reads return
)

// maxName bounds an encoded name: Weaviate allows 231 characters in a
// property name and 255 in a class name.
const maxName = 230

// encode spells s with the characters Weaviate allows in names, keeping
// it reversible and free of case (Weaviate compares names without case):
// a–z and 0–9 stay, every other byte becomes _ and two hex digits.
func encode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "_%02x", c)
	}
	return b.String()
}

// decode reverses encode.
func decode(s string) (string, bool) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			b.WriteByte(s[i])
			continue
		}
		if i+3 > len(s) {
			return "", false
		}
		v, err := hex.DecodeString(s[i+1 : i+3])
		if err != nil {
			return "", false
		}
		b.WriteByte(v[0])
		i += 2
	}
	return b.String(), true
}

// className returns the class of collection name.
func className(name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("%w: collection name %q is not valid UTF-8", vector.ErrInvalidOptions, name)
	}
	c := classPrefix + encode(name)
	if len(c) > maxName {
		return "", fmt.Errorf("%w: collection name %q is too long for Weaviate", vector.ErrInvalidOptions, name)
	}
	return c, nil
}

// collectionName reverses className; ok is false for a class this package
// did not create.
func collectionName(class string) (string, bool) {
	rest, ok := strings.CutPrefix(class, classPrefix)
	if !ok {
		return "", false
	}
	return decode(rest)
}

// propName returns the property of metadata key k.
func propName(k string) (string, error) {
	p := "m_" + encode(k)
	if len(p) > maxName {
		return "", fmt.Errorf("%w: metadata key %q is too long for Weaviate", vector.ErrInvalidOptions, k)
	}
	return p, nil
}

// itemNamespace is the UUIDv5 namespace of item ids.
var itemNamespace = [16]byte{0x6b, 0x1f, 0x3c, 0x8e, 0x2a, 0x55, 0x4f, 0x0d, 0x9c, 0x41, 0x7e, 0x23, 0xa8, 0x90, 0x5b, 0x12}

// itemUUID is the UUIDv5 (RFC 9562, SHA-1) of an item id, in the
// collection's class: the same id names the same object on every client.
func itemUUID(class, id string) string {
	h := sha1.New()
	h.Write(itemNamespace[:])
	h.Write([]byte(class))
	h.Write([]byte{0})
	h.Write([]byte(id))
	var u [16]byte
	copy(u[:], h.Sum(nil))
	u[6] = u[6]&0x0f | 0x50 // version 5
	u[8] = u[8]&0x3f | 0x80 // RFC 9562 variant
	return formatUUID(u)
}

// vectorUUID is the UUID of numeric id v of a vector.Index: a UUIDv8
// (RFC 9562's custom layout) holding v itself, so that a search's results
// give back their ids without a property. Bytes 0–5 are a fixed tag, the
// version and variant bits sit where RFC 9562 puts them, and the 64 bits
// of v fill the rest.
func vectorUUID(v vector.ID) string {
	var u [16]byte
	copy(u[:6], "cairn\x00")
	x := uint64(v)
	u[6] = 0x80 | byte(x>>60)&0x0f // version 8, bits 63–60
	u[7] = byte(x >> 52)           // bits 59–52
	u[8] = 0x80 | byte(x>>46)&0x3f // variant, bits 51–46
	binary.BigEndian.PutUint64(u[8:16], x&(1<<46-1)|uint64(u[8])<<56)
	return formatUUID(u)
}

// vectorID reverses vectorUUID.
func vectorID(s string) (vector.ID, bool) {
	u, ok := parseUUID(s)
	if !ok || string(u[:6]) != "cairn\x00" || u[6]&0xf0 != 0x80 || u[8]&0xc0 != 0x80 {
		return 0, false
	}
	lo := binary.BigEndian.Uint64(u[8:16]) & (1<<46 - 1)
	x := uint64(u[6]&0x0f)<<60 | uint64(u[7])<<52 | uint64(u[8]&0x3f)<<46 | lo
	return vector.ID(x), true
}

func formatUUID(u [16]byte) string {
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

func parseUUID(s string) ([16]byte, bool) {
	var u [16]byte
	if len(s) != 36 || s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return u, false
	}
	h := s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:]
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, false
	}
	return u, true
}
