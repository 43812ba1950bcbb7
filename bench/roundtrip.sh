#!/usr/bin/env bash
# Measures cairn import and export at full size, and checks that
# export | import | export gives back the same bytes:
#
#   bench/roundtrip.sh [N [DIM [INDEX]]]     # default 100000 768 auto
#
# It generates N items (text, metadata, a random DIM-dimensional embedding)
# as JSON lines, imports them into a new file, exports it, imports the
# export into another file and exports that, printing the wall time and
# peak RSS of each step (GNU time). INDEX (auto, flat or hnsw) is the
# collection's index: with auto, past 20,000 items the import also builds
# and saves an HNSW graph. Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}; dim=${2:-768}; index=${3:-auto}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
(cd cmd/cairn && go build -o "$out/cairn" .)
cat > "$out/gen.go" <<'GEN'
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
)

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	dim, _ := strconv.Atoi(os.Args[2])
	w := bufio.NewWriter(os.Stdout)
	defer w.Flush()
	fmt.Fprintf(w, `{"collection":{"name":"items","dim":%d,"metric":"cosine","index":%q}}`+"\n", dim, os.Args[3])
	r := rand.New(rand.NewPCG(1, 2))
	enc := json.NewEncoder(w)
	v := make([]float32, dim)
	for i := range n {
		for j := range v {
			v[j] = float32(r.NormFloat64())
		}
		enc.Encode(map[string]any{
			"id": fmt.Sprintf("item-%07d", i), "text": fmt.Sprintf("item %d of topic %d", i, i%100),
			"metadata": map[string]any{"topic": i % 100, "even": i%2 == 0}, "embedding": v,
		})
	}
}
GEN
GOWORK=off go run "$out/gen.go" "$n" "$dim" "$index" > "$out/gen.jsonl"
echo "generated $n items of $dim dimensions: $(du -h "$out/gen.jsonl" | cut -f1)"
step() {
	local name=$1; shift
	/usr/bin/time -f "$name: %e s, peak RSS %M KiB" "$@"
}
step "import" "$out/cairn" import -q "$out/a.db" < "$out/gen.jsonl"
echo "file: $(du -h "$out/a.db" | cut -f1)"
step "export" "$out/cairn" export "$out/a.db" > "$out/a.jsonl"
step "import of the export" "$out/cairn" import -q "$out/b.db" < "$out/a.jsonl"
step "export of the copy" "$out/cairn" export "$out/b.db" > "$out/b.jsonl"
if cmp -s "$out/a.jsonl" "$out/b.jsonl"; then
	echo "round trip: identical, $(wc -l < "$out/a.jsonl") lines, $(du -h "$out/a.jsonl" | cut -f1)"
else
	echo "round trip: the exports differ" >&2
	exit 1
fi
