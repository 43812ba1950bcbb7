// This file tests that a collection header carries the HNSW quantization
// through export and import.

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/hnsw"
)

func TestHeaderQuantize(t *testing.T) {
	l, err := decodeLine([]byte(`{"collection":{"name":"q","dim":4,"index":"hnsw","hnsw":{"m":8,"quantize":"int8"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := l.Collection.config()
	if err != nil || cfg.HNSW.Quantize != hnsw.QuantizeInt8 || cfg.HNSW.M != 8 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	b, err := json.Marshal(header("q", cfg))
	if err != nil || !strings.Contains(string(b), `"hnsw":{"m":8,"quantize":"int8"}`) {
		t.Fatalf("header %s, %v", b, err)
	}
	b, _ = json.Marshal(header("f", cairn.CollectionConfig{Dim: 4, Index: cairn.HNSW}))
	if strings.Contains(string(b), "quantize") {
		t.Errorf("header without quantization: %s", b)
	}
	if _, err := decodeLine([]byte(`{"collection":{"name":"q","dim":4,"hnsw":{"quantize":"int4"}}}`)); err == nil {
		t.Error("an unknown quantization was accepted")
	}
	l, err = decodeLine([]byte(`{"collection":{"name":"q","dim":4,"index":"hnsw","hnsw":{"quantize":"binary","quantize_dims":3}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if cfg, err = l.Collection.config(); err != nil || cfg.HNSW.Quantize != hnsw.QuantizeBinary || cfg.HNSW.QuantizeDims != 3 {
		t.Fatalf("config %+v, %v", cfg, err)
	}
	if b, _ = json.Marshal(header("q", cfg)); !strings.Contains(string(b), `"hnsw":{"quantize":"binary","quantize_dims":3}`) {
		t.Fatalf("header %s", b)
	}
	l, err = decodeLine([]byte(`{"collection":{"name":"q","dim":4,"index":"hnsw","hnsw":{"quantize":"int8","quantize_dims":5}}}`))
	if err == nil {
		_, err = l.Collection.config()
	}
	if err == nil {
		t.Error("quantize_dims past dim was accepted")
	}
}
