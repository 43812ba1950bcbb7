#!/usr/bin/env bash
# Measures cairn's HNSW and its peers, hnswlib (../shared/peers/run), faiss
# (run-faiss: IndexHNSWFlat and IndexHNSWSQ 8-bit) and usearch (run-usearch:
# f32 and i8), on the same .fvecs files, one after the other in this one
# script, ROUNDS times alternately, and prints cairn's sweep beside each
# peer's with the QPS ratio cairn ÷ peer at each target recall, then build
# time and index memory of all of them.
#
#   bench/peers.sh DIR/NAME [--peers hnswlib,faiss,usearch] [--metric cosine|dot|l2] [--ef LIST] [--m 16] [--efc 200] [--rounds 2] [--plot FILE.svg|png] [--quantize int8|binary [--quantize-dims N]]
#
# --peers picks the peers (default all three); each round runs cairn and
# then each of them in that order (with --plot, the peers first).
#
# With --quantize int8 (or binary: 1-bit codes; --quantize-dims N: codes of
# the first N components only), cairn's sweep also walks its graph on the codes
# (vecbench --sweep --quantize int8: the same graph, each ef float32 then
# int8), and its rows get tables of their own against each peer, with the
# int8 recall's difference from cairn's float32 at each ef.
#
# Every system searches under the same metric: --metric, else the one named
# in DIR/NAME.metric (which vecbench --export writes), else cosine. The
# peers' harnesses know inner product and L2 only, so for cosine they get a
# copy of the vectors normalised to unit length (skipped when they already
# are) and --metric ip; dot is ip on the vectors as they are; l2 is l2
# (usearch's i8 is then skipped: it is meant for normalised vectors).
#
# Index memory: each peer's is its process's resident-memory growth across
# the build; cairn's three figures are the Go heap's growth (vecbench's
# "memory"), what the store and the graph count in what they hold
# ("counted") and the resident-memory growth measured as the peers' is
# ("RSS"), which the ratios use.
#
# With --plot, each round runs the peers first and then cairn, which draws
# its sweep and the peers' lines of that round on one recall/QPS plot
# (vecbench --peers-json); the last round's plot is kept.
#
# DIR/NAME.{base,query}.fvecs, DIR/NAME.gt.ivecs and DIR/NAME.metric come from
#   go run ./cmd/vecbench --export DIR --clustered --sizes 100000
#   go run ./cmd/vecbench --export DIR --data FILE.hdf5     (an ann-benchmarks file)
# or from bench/data/*.sh. Needs python3 for the join (and numpy to normalise
# for cosine). Run it on a quiet machine: it has two cores. PEERS_DIR names
# the folder of the harnesses (default ../shared/peers); PEERS, hnswlib's
# alone.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
ef=10,12,16,20,24,32,40,48,64,80,96,128,160,200,256,320,400,512,640,800
m=16; efc=200; rounds=2; plot=; metric=; quantize=; qdims=; peerlist=hnswlib,faiss,usearch
while [ $# -gt 0 ]; do
	case $1 in
	--peers) peerlist=$2; shift 2 ;;
	--quantize) quantize=$2; shift 2 ;;
	--quantize-dims) qdims=$2; shift 2 ;;
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
'' | int8 | binary) ;;
*) echo "--quantize $quantize: want int8 or binary" >&2; exit 2 ;;
esac
[ -z "$qdims" ] || [ -n "$quantize" ] || { echo "--quantize-dims needs --quantize" >&2; exit 2; }
peerdir=${PEERS_DIR:-../shared/peers}
IFS=, read -r -a peers <<< "$peerlist"
for p in "${peers[@]}"; do
	case $p in
	hnswlib | faiss | usearch) ;;
	*) echo "--peers: unknown peer $p (want hnswlib, faiss, usearch)" >&2; exit 2 ;;
	esac
done
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/vecbench" ./cmd/vecbench
# What the peers read: the same files, or for cosine a unit-length copy.
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
    print(f"the peers get {part} normalised to unit length (norms were {norms.min():.3g}..{norms.max():.3g})", file=sys.stderr)
PY
	;;
esac
cairn() {
	echo "round $1: cairn" >&2
	"$out/vecbench" --sweep --quiet --data "$name.base.fvecs" --queries "$name.query.fvecs" --gt "$name.gt.ivecs" \
		--metric "$metric" --m "$m" --efc "$efc" --ef "$ef" ${quantize:+--quantize "$quantize"} ${qdims:+--quantize-dims "$qdims"} --json "$out/cairn-$1.json" "${@:2}" > /dev/null
}
peer() { # peer NAME ROUND
	echo "round $2: $1" >&2
	local cmd
	case $1 in
	hnswlib) cmd=${PEERS:-$peerdir/run} ;;
	faiss) cmd=$peerdir/run-faiss ;;
	usearch) cmd=$peerdir/run-usearch ;;
	esac
	"$cmd" "$peername" --metric "$peermetric" --m "$m" --efc "$efc" --ef "$ef" --threads 2 > "$out/peer-$1-$2.jsonl"
}
for r in $(seq "$rounds"); do
	if [ -n "$plot" ]; then
		for p in "${peers[@]}"; do peer "$p" "$r"; done
		cat "$out"/peer-*-"$r".jsonl > "$out/peers-$r.jsonl"
		cairn "$r" --plot "$plot" --peers-json "$out/peers-$r.jsonl"
	else
		cairn "$r"
		for p in "${peers[@]}"; do peer "$p" "$r"; done
	fi
done
python3 - "$out" "$rounds" "$name" "$metric" "$peermetric" "$peerlist" <<'PY'
import json, statistics, sys
out, rounds, name, metric, peermetric, peerlist = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6].split(",")
cairn = {}      # walk ("" or "int8") -> ef -> rows over rounds
peer = {}       # label -> ef -> rows over rounds
builds = {}     # label -> round -> build seconds
mem = {}        # label -> last round's memory figures
for r in range(1, rounds + 1):
    d = json.load(open(f"{out}/cairn-{r}.json"))
    machine = d["machine"]
    for x in d["results"]:
        walk = x["params"].get("quantize", "")
        cairn.setdefault(walk, {}).setdefault(x["params"]["ef"], []).append(x)
        label = "cairn " + walk if walk else "cairn"
        builds.setdefault(label, {})[r] = x["build_s"]
        mem[label] = x
    for p in peerlist:
        for line in open(f"{out}/peer-{p}-{r}.jsonl"):
            x = json.loads(line)
            label = x["system"] + (" " + x["index"] if x.get("index") else "")
            rows = peer.setdefault(label, {}).setdefault(x["ef"], [])
            if len(rows) < r:
                rows.append(x)
            builds.setdefault(label, {})[r] = x["build_s"]
            mem[label] = x

def agg(rows):
    return {k: statistics.median(r[k] for r in rows) for k in ("recall", "p50_us", "p95_us", "qps")}

def best(T, target):
    ok = [(v["qps"], ef, v) for ef, v in T.items() if v["recall"] >= target]
    return max(ok) if ok else None

print(f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['go']}, commit {machine['commit']}, kernels {machine.get('kernel')}")
print(f"data: {name}, metric {metric} (peers: {peermetric}{', unit-length copy' if metric == 'cosine' else ''}), M and efConstruction as given, "
      f"{rounds} alternating rounds, medians over rounds; peers: {', '.join(peer)}\n")
P = {label: {ef: agg(v) for ef, v in sorted(efs.items())} for label, efs in peer.items()}
C = {walk: {ef: agg(v) for ef, v in sorted(efs.items())} for walk, efs in cairn.items()}
F = C.get("", {})
targets = (0.90, 0.95, 0.99)
for walk in sorted(C):
    label = "cairn" if not walk else f"cairn {walk}"
    for plabel, PT in P.items():
        CT = C[walk]
        if walk:
            print(f"### {label} (the same graph walking {walk} codes; Δ = its recall@10 minus cairn float32's at the same ef) and {plabel}\n")
        else:
            print(f"### {label} and {plabel}\n")
        print(f"| ef | {label} recall@10 |{' Δ recall |' if walk else ''} {label} p50 | {label} p95 | {label} QPS | {plabel} recall@10 | {plabel} p50 | {plabel} p95 | {plabel} QPS | QPS ratio |")
        print("|--:|--:|" + ("--:|" if walk else "") + "--:|--:|--:|--:|--:|--:|--:|--:|")
        for ef in sorted(set(CT) & set(PT)):
            c, p = CT[ef], PT[ef]
            delta = f" {c['recall'] - F[ef]['recall']:+.4f} |" if walk and ef in F else (" – |" if walk else "")
            print(f"| {ef} | {c['recall']:.4f} |{delta} {c['p50_us']:.1f} µs | {c['p95_us']:.1f} µs | {c['qps']:,.0f} | "
                  f"{p['recall']:.4f} | {p['p50_us']:.1f} µs | {p['p95_us']:.1f} µs | {p['qps']:,.0f} | {c['qps']/p['qps']:.2f}× |")
        print()

print("### QPS at a target recall@10 (the fastest ef reaching it; ratio = cairn ÷ peer)\n")
cols = [("cairn" if not w else f"cairn {w}", C[w]) for w in sorted(C)]
hdr = ["system"]
for target in targets:
    hdr += [f"≥ {target:.2f}: QPS (ef)"] + [f"{l} ÷ it" for l, _ in cols[:1]] + [f"{l} ÷ it" for l, _ in cols[1:]]
print("| " + " | ".join(hdr) + " |")
print("|---|" + "--:|" * (len(hdr) - 1))
def fmt(b):
    return f"{b[0]:,.0f} ({b[1]})" if b else "not reached"
for l, T in cols:
    cells = [l]
    for target in targets:
        cells += [fmt(best(T, target))] + ["–"] * len(cols)
    print("| " + " | ".join(cells) + " |")
for pl, PT in P.items():
    cells = [pl]
    for target in targets:
        pb = best(PT, target)
        cells.append(fmt(pb))
        for _, T in cols:
            c = best(T, target)
            cells.append(f"**{c[0]/pb[0]:.2f}×**" if c and pb else "–")
    print("| " + " | ".join(cells) + " |")
print()

cb = statistics.median(builds["cairn"].values())
print("### Build (2 cores) and index memory (last round)\n")
print("| system | build | cairn ÷ it | index memory | bytes/vector beyond the raw float32s (cairn: heap / counted / RSS) | cairn ÷ it (RSS) |")
print("|---|--:|--:|--:|--:|--:|")
crss = mem["cairn"].get("rss_bytes") or mem["cairn"]["index_bytes"]
for label, x in mem.items():
    n, dim = x["n"], x["dim"]
    b = statistics.median(builds[label].values())
    if label.startswith("cairn"):
        heap, counted, rss = x["index_bytes"], x.get("accounted_bytes", 0), x.get("rss_bytes", 0)
        figs = f"heap {heap/2**20:.1f} MiB, counted {counted/2**20:.1f} MiB" + (f", RSS {rss/2**20:.1f} MiB" if rss else "")
        beyond = f"{(heap - n*dim*4)/n:.0f} / {(counted - n*dim*4)/n:.0f}" + (f" / {(rss - n*dim*4)/n:.0f}" if rss else "")
        print(f"| {label} | {b:.2f} s | – | {figs} | {beyond} | – |")
    else:
        ib = x["index_bytes"]
        print(f"| {label} | {b:.2f} s | {cb/b:.2f}× | RSS {ib/2**20:.1f} MiB | {(ib - n*dim*4)/n:.0f} | {crss/ib:.2f}× |")
PY
