#!/usr/bin/env bash
# Measures cairn's HNSW and hnswlib (../shared/peers/run) on the same .fvecs
# files, one after the other in this one script, ROUNDS times alternately, and
# prints both sweeps side by side with the QPS ratio at each target recall.
#
#   bench/peers.sh DIR/NAME [--ef LIST] [--m 16] [--efc 200] [--rounds 2] [--plot FILE.svg|png]
#
# With --plot, each round runs hnswlib first and then cairn, which draws its
# sweep and hnswlib's lines of that round on one recall/QPS plot (vecbench
# --peers-json); the last round's plot is kept.
#
# DIR/NAME.{base,query}.fvecs and DIR/NAME.gt.ivecs come from
#   go run ./cmd/vecbench --export DIR --clustered --sizes 100000
# Needs python3 for the join. Run it on a quiet machine: it has two cores.
set -euo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
ef=10,12,16,20,24,32,40,48,64,80,96,128,160,200,256,320,400,512,640,800
m=16; efc=200; rounds=2; plot=
while [ $# -gt 0 ]; do
	case $1 in
	--plot) plot=$2; shift 2 ;;
	--ef) ef=$2; shift 2 ;;
	--m) m=$2; shift 2 ;;
	--efc) efc=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	*) echo "unknown flag $1" >&2; exit 2 ;;
	esac
done
peers=${PEERS:-../shared/peers/run}
out=$(mktemp -d)
go build -o "$out/vecbench" ./cmd/vecbench
cairn() {
	echo "round $1: cairn" >&2
	"$out/vecbench" --sweep --quiet --data "$name.base.fvecs" --queries "$name.query.fvecs" --gt "$name.gt.ivecs" \
		--m "$m" --efc "$efc" --ef "$ef" --json "$out/cairn-$1.json" "${@:2}" > /dev/null
}
hnswlib() {
	echo "round $1: hnswlib" >&2
	"$peers" "$name" --metric ip --m "$m" --efc "$efc" --ef "$ef" --threads 2 > "$out/hnswlib-$1.jsonl"
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
python3 - "$out" "$rounds" "$name" <<'PY'
import glob, json, statistics, sys
out, rounds, name = sys.argv[1], int(sys.argv[2]), sys.argv[3]
cairn, peer = {}, {}
builds = {"cairn": [], "hnswlib": []}
mem = {}
for r in range(1, rounds + 1):
    d = json.load(open(f"{out}/cairn-{r}.json"))
    machine = d["machine"]
    for x in d["results"]:
        cairn.setdefault(x["params"]["ef"], []).append(x)
    builds["cairn"].append(x["build_s"]); mem["cairn"] = (x["index_bytes"], x["n"], x["dim"])
    for line in open(f"{out}/hnswlib-{r}.jsonl"):
        x = json.loads(line)
        peer.setdefault(x["ef"], []).append(x)
    builds["hnswlib"].append(x["build_s"]); mem["hnswlib"] = (x["index_bytes"], x["n"], x["dim"])

def agg(rows):
    return {k: statistics.median(r[k] for r in rows) for k in ("recall", "p50_us", "p95_us", "qps")}

print(f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['go']}, commit {machine['commit']}, kernels {machine.get('kernel')}")
print(f"data: {name}, M and efConstruction as given, {rounds} alternating rounds, medians over rounds\n")
print("| ef | cairn recall@10 | cairn p50 | cairn p95 | cairn QPS | hnswlib recall@10 | hnswlib p50 | hnswlib p95 | hnswlib QPS | QPS ratio |")
print("|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|")
C = {ef: agg(v) for ef, v in sorted(cairn.items())}
P = {ef: agg(v) for ef, v in sorted(peer.items())}
for ef in sorted(set(C) & set(P)):
    c, p = C[ef], P[ef]
    print(f"| {ef} | {c['recall']:.4f} | {c['p50_us']:.1f} µs | {c['p95_us']:.1f} µs | {c['qps']:,.0f} | "
          f"{p['recall']:.4f} | {p['p50_us']:.1f} µs | {p['p95_us']:.1f} µs | {p['qps']:,.0f} | {c['qps']/p['qps']:.2f}× |")
print()
for target in (0.90, 0.95, 0.99):
    def best(T):
        ok = [(v["qps"], ef, v) for ef, v in T.items() if v["recall"] >= target]
        return max(ok) if ok else None
    c, p = best(C), best(P)
    if c and p:
        print(f"- recall@10 ≥ {target:.2f}: cairn {c[0]:,.0f} QPS (ef={c[1]}, recall {c[2]['recall']:.4f}), "
              f"hnswlib {p[0]:,.0f} QPS (ef={p[1]}, recall {p[2]['recall']:.4f}): **{c[0]/p[0]:.2f}×**")
    else:
        print(f"- recall@10 ≥ {target:.2f}: cairn {'reached' if c else 'not reached'}, hnswlib {'reached' if p else 'not reached'}")
cb, pb = statistics.median(builds["cairn"]), statistics.median(builds["hnswlib"])
print(f"- build, 2 cores: cairn {cb:.2f} s, hnswlib {pb:.2f} s (cairn/hnswlib {cb/pb:.2f}×)")
for sysname, (b, n, dim) in mem.items():
    print(f"- {sysname}: index memory {b/2**20:.1f} MiB, {(b - n*dim*4)/n:.0f} bytes per vector beyond the raw float32s")
PY
rm -rf "$out"
