#!/usr/bin/env bash
# Measures cairn's HNSW and hnswlib (../shared/peers/run) on the same .fvecs
# files, one after the other in this one script, ROUNDS times alternately, and
# prints both sweeps side by side with the QPS ratio at each target recall.
#
#   bench/peers.sh DIR/NAME [--metric cosine|dot|l2] [--ef LIST] [--m 16] [--efc 200] [--rounds 2] [--plot FILE.svg|png] [--quantize int8]
#
# With --quantize int8, cairn's sweep also walks its graph on int8 codes
# (vecbench --sweep --quantize int8: the same graph, each ef float32 then
# int8), and a second table compares those rows with hnswlib, with the
# int8 recall's difference from cairn's float32 at each ef.
#
# Both systems search under the same metric: --metric, else the one named in
# DIR/NAME.metric (which vecbench --export writes), else cosine. hnswlib's
# harness knows inner product and L2 only, so for cosine it gets a copy of the
# vectors normalised to unit length (skipped when they already are) and
# --metric ip; dot is ip on the vectors as they are; l2 is l2.
#
# With --plot, each round runs hnswlib first and then cairn, which draws its
# sweep and hnswlib's lines of that round on one recall/QPS plot (vecbench
# --peers-json); the last round's plot is kept.
#
# DIR/NAME.{base,query}.fvecs, DIR/NAME.gt.ivecs and DIR/NAME.metric come from
#   go run ./cmd/vecbench --export DIR --clustered --sizes 100000
#   go run ./cmd/vecbench --export DIR --data FILE.hdf5     (an ann-benchmarks file)
# or from bench/data/*.sh. Needs python3 for the join (and numpy to normalise
# for cosine). Run it on a quiet machine: it has two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
ef=10,12,16,20,24,32,40,48,64,80,96,128,160,200,256,320,400,512,640,800
m=16; efc=200; rounds=2; plot=; metric=; quantize=
while [ $# -gt 0 ]; do
	case $1 in
	--quantize) quantize=$2; shift 2 ;;
	--metric) metric=$2; shift 2 ;;
	--plot) plot=$2; shift 2 ;;
	--ef) ef=$2; shift 2 ;;
	--m) m=$2; shift 2 ;;
	--efc) efc=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "unknown flag $1" >&2; exit 2 ;;
	esac
done
if [ -z "$metric" ] && [ -s "$name.metric" ]; then
	metric=$(tr -d '[:space:]' < "$name.metric")
fi
if [ -z "$metric" ]; then
	metric=cosine
	echo "no --metric and no $name.metric: assuming cosine" >&2
fi
case $metric in
cosine | dot | l2) ;;
*) echo "--metric $metric: want cosine, dot or l2" >&2; exit 2 ;;
esac
case $quantize in
'' | int8) ;;
*) echo "--quantize $quantize: want int8" >&2; exit 2 ;;
esac
peers=${PEERS:-../shared/peers/run}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/vecbench" ./cmd/vecbench
# What hnswlib reads: the same files, or for cosine a unit-length copy.
peername=$name; peermetric=ip
case $metric in
l2) peermetric=l2 ;;
cosine)
	if ! /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
		(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-numpy) >&2
	fi
	peername=$out/unit/$(basename "$name")
	mkdir -p "$out/unit"
	ln -s "$(realpath "$name.gt.ivecs")" "$peername.gt.ivecs"
	/usr/bin/python3 - "$name" "$peername" <<'PY'
import os, sys
import numpy as np
src, dst = sys.argv[1], sys.argv[2]
for part in ("base", "query"):
    raw = np.fromfile(f"{src}.{part}.fvecs", dtype=np.float32)
    d = raw[:1].view(np.int32)[0]
    rec = raw.reshape(-1, d + 1)
    norms = np.linalg.norm(rec[:, 1:].astype(np.float64), axis=1)
    if np.abs(norms - 1).max() < 1e-4:
        os.symlink(os.path.realpath(f"{src}.{part}.fvecs"), f"{dst}.{part}.fvecs")
        continue
    rec[:, 1:] /= norms[:, None].astype(np.float32)
    rec.tofile(f"{dst}.{part}.fvecs")
    print(f"hnswlib gets {part} normalised to unit length (norms were {norms.min():.3g}..{norms.max():.3g})", file=sys.stderr)
PY
	;;
esac
cairn() {
	echo "round $1: cairn" >&2
	"$out/vecbench" --sweep --quiet --data "$name.base.fvecs" --queries "$name.query.fvecs" --gt "$name.gt.ivecs" \
		--metric "$metric" --m "$m" --efc "$efc" --ef "$ef" ${quantize:+--quantize "$quantize"} --json "$out/cairn-$1.json" "${@:2}" > /dev/null
}
hnswlib() {
	echo "round $1: hnswlib" >&2
	"$peers" "$peername" --metric "$peermetric" --m "$m" --efc "$efc" --ef "$ef" --threads 2 > "$out/hnswlib-$1.jsonl"
}
for r in $(seq "$rounds"); do
	if [ -n "$plot" ]; then
		hnswlib "$r"
		cairn "$r" --plot "$plot" --peers-json "$out/hnswlib-$r.jsonl"
	else
		cairn "$r"
		hnswlib "$r"
	fi
done
python3 - "$out" "$rounds" "$name" "$metric" "$peermetric" <<'PY'
import glob, json, statistics, sys
out, rounds, name, metric, peermetric = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
cairn, peer = {}, {}
builds = {"cairn": [], "hnswlib": []}
mem = {}
for r in range(1, rounds + 1):
    d = json.load(open(f"{out}/cairn-{r}.json"))
    machine = d["machine"]
    for x in d["results"]:
        walk = x["params"].get("quantize", "")
        cairn.setdefault(walk, {}).setdefault(x["params"]["ef"], []).append(x)
        if walk:
            mem["cairn " + walk] = (x["index_bytes"], x["n"], x["dim"])
        else:
            fx = x
    builds["cairn"].append(fx["build_s"]); mem["cairn"] = (fx["index_bytes"], fx["n"], fx["dim"])
    for line in open(f"{out}/hnswlib-{r}.jsonl"):
        x = json.loads(line)
        peer.setdefault(x["ef"], []).append(x)
    builds["hnswlib"].append(x["build_s"]); mem["hnswlib"] = (x["index_bytes"], x["n"], x["dim"])

def agg(rows):
    return {k: statistics.median(r[k] for r in rows) for k in ("recall", "p50_us", "p95_us", "qps")}

print(f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['go']}, commit {machine['commit']}, kernels {machine.get('kernel')}")
print(f"data: {name}, metric {metric} (hnswlib: {peermetric}{', unit-length copy' if metric == 'cosine' else ''}), M and efConstruction as given, {rounds} alternating rounds, medians over rounds\n")
P = {ef: agg(v) for ef, v in sorted(peer.items())}
F = {ef: agg(v) for ef, v in sorted(cairn.get("", {}).items())}
for walk in sorted(cairn):
    C = {ef: agg(v) for ef, v in sorted(cairn[walk].items())}
    label = "cairn" if not walk else f"cairn {walk}"
    if walk:
        print(f"\n### cairn walking {walk} codes (the same graph; Δ = its recall@10 minus cairn float32's at the same ef)\n")
    print(f"| ef | {label} recall@10 |{' Δ recall |' if walk else ''} {label} p50 | {label} p95 | {label} QPS | hnswlib recall@10 | hnswlib p50 | hnswlib p95 | hnswlib QPS | QPS ratio |")
    print("|--:|--:|" + ("--:|" if walk else "") + "--:|--:|--:|--:|--:|--:|--:|--:|")
    for ef in sorted(set(C) & set(P)):
        c, p = C[ef], P[ef]
        delta = f" {c['recall'] - F[ef]['recall']:+.4f} |" if walk and ef in F else (" – |" if walk else "")
        print(f"| {ef} | {c['recall']:.4f} |{delta} {c['p50_us']:.1f} µs | {c['p95_us']:.1f} µs | {c['qps']:,.0f} | "
              f"{p['recall']:.4f} | {p['p50_us']:.1f} µs | {p['p95_us']:.1f} µs | {p['qps']:,.0f} | {c['qps']/p['qps']:.2f}× |")
    print()
    for target in (0.90, 0.95, 0.99):
        def best(T):
            ok = [(v["qps"], ef, v) for ef, v in T.items() if v["recall"] >= target]
            return max(ok) if ok else None
        c, p = best(C), best(P)
        if c and p:
            print(f"- recall@10 ≥ {target:.2f}: {label} {c[0]:,.0f} QPS (ef={c[1]}, recall {c[2]['recall']:.4f}), "
                  f"hnswlib {p[0]:,.0f} QPS (ef={p[1]}, recall {p[2]['recall']:.4f}): **{c[0]/p[0]:.2f}×**")
        else:
            print(f"- recall@10 ≥ {target:.2f}: {label} {'reached' if c else 'not reached'}, hnswlib {'reached' if p else 'not reached'}")
cb, pb = statistics.median(builds["cairn"]), statistics.median(builds["hnswlib"])
print(f"- build, 2 cores: cairn {cb:.2f} s, hnswlib {pb:.2f} s (cairn/hnswlib {cb/pb:.2f}×)")
for sysname, (b, n, dim) in mem.items():
    print(f"- {sysname}: index memory {b/2**20:.1f} MiB, {(b - n*dim*4)/n:.0f} bytes per vector beyond the raw float32s")
PY
