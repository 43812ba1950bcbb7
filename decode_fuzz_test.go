package cairn

import (
	"errors"
	"reflect"
	"testing"

	"github.com/cairndb/cairn/vector"
)

// Fuzz targets for the decoders of what a file holds besides vectors: an
// item's metadata and a collection's settings. Bad bytes must give
// ErrCorrupt, never a panic, and what decodes must survive a round trip.

func FuzzDecodeMetadata(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"a":1}`, `{"a":"x","b":true,"c":-2.5e10}`, `{"b":1,"a":2}`,
		`{"a":null}`, `{"a":[1]}`, `{"a":{"b":1}}`, `[1]`, `{"a":1,"a":2}`,
		`{"\u00e9":"\ud83d\ude00"}`, "{\"k\":\"\xff\"}", `{"a":1e400}`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		md, err := decodeMetadata(b)
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("decodeMetadata(%q) = %v, want an error wrapping ErrCorrupt", b, err)
			}
			return
		}
		enc, err := encodeMetadata(md)
		if err != nil {
			t.Fatalf("decoded metadata %v does not encode: %v", md.toMap(), err)
		}
		again, err := decodeMetadata(enc)
		if err != nil {
			t.Fatalf("re-encoded metadata %q does not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(md.toMap(), again.toMap()) {
			t.Fatalf("round trip changed the metadata: %v → %q → %v", md.toMap(), enc, again.toMap())
		}
	})
}

func FuzzDecodeSettings(f *testing.F) {
	for _, s := range []string{
		``, `{}`, `{"index":"hnsw"}`, `{"index":"flat","auto_threshold":5}`, `{"index":"bogus"}`,
		`{"index":"auto","hnsw":{"m":16,"ef_construction":200}}`, `{"hnsw":{"m":-1}}`, `null`, `[`,
		`{"index":"flat","ttl":"24h0m0s"}`, `{"index":"hnsw","hnsw":{"quantize":"int8"}}`, `{"hnsw":{"quantize":"none"}}`, `{"hnsw":{"quantize":"int4"}}`, `{"ttl":"-1s"}`, `{"ttl":"soon"}`, `{"ttl":"1.5h"}`,
	} {
		f.Add([]byte(s), 8, uint8(vector.Cosine))
	}
	f.Fuzz(func(t *testing.T, b []byte, dim int, metric uint8) {
		m := vector.Metric(metric)
		if dim <= 0 || dim > 1<<16 || !m.Valid() {
			return // the catalogue checks these before the settings are read
		}
		cfg, err := decodeSettings(dim, m, b)
		if err != nil {
			if !errors.Is(err, vector.ErrCorrupt) {
				t.Fatalf("decodeSettings(%q) = %v, want an error wrapping ErrCorrupt", b, err)
			}
			return
		}
		enc, err := encodeSettings(cfg)
		if err != nil {
			t.Fatalf("decoded settings do not encode: %v", err)
		}
		again, err := decodeSettings(dim, m, enc)
		if err != nil {
			t.Fatalf("re-encoded settings %q do not decode: %v", enc, err)
		}
		if !reflect.DeepEqual(cfg, again) {
			t.Fatalf("round trip changed the settings: %+v → %q → %+v", cfg, enc, again)
		}
	})
}
