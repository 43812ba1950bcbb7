#!/usr/bin/env bash
# Measures what paging the store's vectors (sqlitestore's PageVectorsIn)
# saves and costs an HNSW index, beside hnswlib's memory on the same file:
# bench/pagedram builds the index in a SQLite file (walked on int8 codes,
# and on float32), then each round runs hnswlib (../shared/peers/run) and
# then, each in a process of its own, the int8 and float32 indexes with
# their vectors in memory and paged, and prints a summary: resident
# memory against hnswlib's, recall and latency per ef.
#
#   bench/pagedram.sh DIR/NAME [--rounds 2] [--ef LIST] [--m 16] [--efc 200] [--codes int8|binary]
#
# --codes binary measures the walk on 1-bit codes (hnsw.QuantizeBinary) in
# place of int8 ones.
#
# DIR/NAME.{base,query}.fvecs, .gt.ivecs and .metric as for bench/peers.sh.
# The pages go to PAGES_DIR (default a directory under /tmp), which must be
# on a disk, not a tmpfs. Run it on a quiet machine.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
rounds=2; ef=10,16,24,32,48,64,96,128,200; m=16; efc=200; codes=int8
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift 2 ;;
	--ef) ef=$2; shift 2 ;;
	--m) m=$2; shift 2 ;;
	--efc) efc=$2; shift 2 ;;
	--codes) codes=$2; shift 2 ;;
	*) echo "unknown flag $1" >&2; exit 2 ;;
	esac
done
metric=$(tr -d '[:space:]' < "$name.metric")
peermetric=ip # hnswlib's memory does not depend on the metric; l2 is l2
[ "$metric" = l2 ] && peermetric=l2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
pages=${PAGES_DIR:-$out/pages}
mkdir -p "$pages"
go build -o "$out/pagedram" ./bench/pagedram
db=$out/index.cairn
case $codes in int8 | binary) ;; *) echo "--codes $codes: want int8 or binary" >&2; exit 2 ;; esac
for q in $codes none; do
	"$out/pagedram" build -quantize $q -data "$name" -db "$db" -m "$m" -efc "$efc" >&2
done
query() { # query QUANTIZE PAGED(0|1) OUTFILE
	local q=$1 p=$2 f=$3 flags=()
	[ "$p" = 1 ] && flags=(-pages "$pages")
	"$out/pagedram" query -quantize "$q" -data "$name" -db "$db" -ef "$ef" "${flags[@]}" > "$f"
}
for r in $(seq "$rounds"); do
	echo "round $r: hnswlib" >&2
	"${PEERS:-../shared/peers/run}" "$name" --metric $peermetric --m "$m" --efc "$efc" --ef "$ef" --threads 2 > "$out/hnswlib-$r.jsonl"
	for q in $codes none; do
		for p in 0 1; do
			echo "round $r: cairn $q paged=$p" >&2
			query $q $p "$out/cairn-$q-$p-$r.jsonl"
		done
	done
done
python3 - "$out" "$rounds" "$peermetric" "$codes" <<'PY'
import json, os, statistics, sys
out, rounds, peermetric, codes = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
def lines(f):
    return [json.loads(l) for l in open(f)] if os.path.exists(f) else []
hn = [lines(f"{out}/hnswlib-{r}.jsonl") for r in range(1, rounds + 1)]
hbytes = statistics.median(l[0]["index_bytes"] for l in hn)
print(f"hnswlib index memory (RSS growth across its build, median of {rounds}): {hbytes/2**20:.1f} MiB\n")
print("| index | vectors | resident after load, paged out (anon) | ÷ hnswlib | peak during the load | file pages after the queries |")
print("|---|---|--:|--:|--:|--:|")
for q in (codes, "none"):
    for p in (0, 1):
        runs = [lines(f"{out}/cairn-{q}-{p}-{r}.jsonl") for r in range(1, rounds + 1)]
        anon = statistics.median(next(l for l in run if l["phase"] == "paged out")["rss_anon"] for run in runs)
        fil = statistics.median(run[-1]["rss_file"] for run in runs)
        peak = statistics.median(run[0]["peak_rss"] for run in runs)
        print(f"| {'float32' if q == 'none' else q} | {'paged' if p else 'in memory'} | {anon/2**20:.1f} MiB | {anon/hbytes:.2f}× | {peak/2**20:.1f} MiB | {fil/2**20:.1f} MiB |")
print()
efs = [l["ef"] for l in lines(f"{out}/cairn-{codes}-0-1.jsonl") if l["phase"] == "warm"]
def at(q, p, phase, ef, key):
    vals = [l[key] for r in range(1, rounds + 1) for l in lines(f"{out}/cairn-{q}-{p}-{r}.jsonl") if l["phase"] == phase and l["ef"] == ef]
    return statistics.median(vals)
print(f"| ef | recall f32 | recall {codes} | {codes} p50 µs in memory | paged warm | ÷ | paged cold | f32 p50 µs in memory | paged warm | ÷ | hnswlib p50 µs |")
print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
for ef in efs:
    h = statistics.median(l["p50_us"] for run in hn for l in run if l["ef"] == ef)
    r32, r8 = at("none", 0, "warm", ef, "recall"), at(codes, 0, "warm", ef, "recall")
    i0, i1, ic = at(codes, 0, "warm", ef, "p50_us"), at(codes, 1, "warm", ef, "p50_us"), at(codes, 1, "cold", ef, "p50_us")
    f0, f1 = at("none", 0, "warm", ef, "p50_us"), at("none", 1, "warm", ef, "p50_us")
    print(f"| {ef} | {r32:.4f} | {r8:.4f} | {i0:.1f} | {i1:.1f} | {i1/i0:.2f} | {ic:.0f} | {f0:.1f} | {f1:.1f} | {f1/f0:.2f} | {h:.1f} |")
if peermetric == "ip":
    print("\nhnswlib searched by inner product on the vectors as stored: its memory is the same as under cosine, its latencies are not of the same search (bench/peers.sh compares speed).")
PY
