// This file reads --peers-json: the JSON lines ../shared/peers/run,
// run-faiss and run-usearch print for hnswlib, faiss and usearch (and
// bench/peers.sh collects), one measured ef a line.

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/cairndb/cairn/vector"
)

// peerResult is one line of ../shared/peers/run (or run-faiss,
// run-usearch): a system measured at one build setting and one ef, on the
// files named by base. Index names the system's index when it has several
// ("hnsw-flat", "hnsw-sq8"; "hnsw-f32", "hnsw-i8"), empty for hnswlib.
type peerResult struct {
	System         string  `json:"system"`
	Index          string  `json:"index"`
	Base           string  `json:"base"`
	N              int     `json:"n"`
	Dim            int     `json:"dim"`
	Metric         string  `json:"metric"`
	M              int     `json:"M"`
	EfConstruction int     `json:"ef_construction"`
	BuildThreads   int     `json:"build_threads"`
	BuildS         float64 `json:"build_s"`
	IndexBytes     int64   `json:"index_bytes"`
	Ef             int     `json:"ef"`
	K              int     `json:"k"`
	Recall         float64 `json:"recall"`
	P50us          float64 `json:"p50_us"`
	P95us          float64 `json:"p95_us"`
	P99us          float64 `json:"p99_us"`
	QPS            float64 `json:"qps"`
}

// maxPeerLine bounds a line of the peers' file.
const maxPeerLine = 1 << 16

// readPeers reads the JSON lines of path.
func readPeers(path string) ([]peerResult, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--peers-json: %w", err)
	}
	defer f.Close()
	ps, err := parsePeers(f)
	if err != nil {
		return nil, fmt.Errorf("--peers-json %s: %w", path, err)
	}
	return ps, nil
}

// parsePeers decodes one peerResult a line, skipping blank lines. A line
// that is not such an object, or whose figures are out of range, is an
// error wrapping vector.ErrCorrupt that names the line.
func parsePeers(r io.Reader) ([]peerResult, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxPeerLine)
	var out []peerResult
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var p peerResult
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("line %d: %w: %v", line, vector.ErrCorrupt, err)
		}
		if err := p.check(); err != nil {
			return nil, fmt.Errorf("line %d: %w: %s", line, vector.ErrCorrupt, err)
		}
		out = append(out, p)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", vector.ErrCorrupt, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no results (want JSON lines with the fields of --json's results, as bench/peers.sh writes them)", vector.ErrCorrupt)
	}
	return out, nil
}

// check reports the first figure of p a plot cannot use.
func (p peerResult) check() error {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	switch {
	case p.System == "":
		return fmt.Errorf("no system named")
	case p.N <= 0 || p.Dim <= 0 || p.K <= 0:
		return fmt.Errorf("n = %d, dim = %d, k = %d: want positive", p.N, p.Dim, p.K)
	case !finite(p.Recall) || p.Recall < 0 || p.Recall > 1:
		return fmt.Errorf("recall %v outside 0..1", p.Recall)
	case !finite(p.QPS) || p.QPS <= 0:
		return fmt.Errorf("qps %v: want positive", p.QPS)
	case !finite(p.BuildS) || p.BuildS < 0:
		return fmt.Errorf("build_s %v: want 0 or more", p.BuildS)
	}
	return nil
}
