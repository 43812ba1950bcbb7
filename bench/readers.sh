#!/usr/bin/env bash
# Shows, with the cairn command, what RELIABILITY.md promises of reading a
# file: every reading command leaves its bytes unchanged, works while
# `cairn mcp` writes the file, and works on a read-only bind mount; a second
# writer is refused under any name of the file.
#
#   bench/readers.sh             # as root, for the bind mount
#
# It builds cairn, imports 2,000 items into a Flat, an HNSW, a QFlat and an
# Auto collection, prints the file's sha256 before and after each reading
# command, then serves the file with `cairn mcp` (embeddings from a
# stand-in server on 127.0.0.1, in python3) while it stores memories, and
# exports it meanwhile. Everything it starts it stops, by PID.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	mountpoint -q "$out/ro" 2>/dev/null && umount "$out/ro"
	rm -rf "$out"
}
trap cleanup EXIT
(cd cmd/cairn && go build -o "$out/cairn" .)
cairn() { "$out/cairn" "$@"; }
db=$out/memory.db

python3 - "$out/items.jsonl" <<'PY'
import json, random, sys
r = random.Random(7)
with open(sys.argv[1], "w") as f:
    for index in ["flat", "hnsw", "qflat", "auto"]:
        f.write(json.dumps({"collection": {"name": index, "dim": 16, "metric": "cosine", "index": index}}) + "\n")
        for i in range(500):
            f.write(json.dumps({"id": f"{index}-{i}", "text": f"note {i} about {index}",
                                "metadata": {"i": i}, "embedding": [r.gauss(0, 1) for _ in range(16)]}) + "\n")
PY
cairn import -q "$db" < "$out/items.jsonl"
sum() { sha256sum "$db" | cut -c1-16; }
echo "== reading commands (sha256 of $(basename "$db") before -> after)"
for cmd in "info" "check" "export" "query -collection hnsw -vector [$(seq -s, 1 16)] -k 3" \
	"query -collection auto -text note -mode keyword -k 3" "query -collection qflat -vector [$(seq -s, 1 16)] -filter {\"i\":{\"\$gte\":100}}"; do
	before=$(sum)
	# shellcheck disable=SC2086
	cairn $cmd "$db" > /dev/null
	printf '%-60s %s -> %s %s\n' "cairn $cmd" "$before" "$(sum)" "$([ "$before" = "$(sum)" ] && echo unchanged || echo CHANGED)"
done
echo "files beside the db after the reads: $(ls "$out" | grep -c 'memory.db-' || true)"

echo "== while cairn mcp writes"
port=$((20000 + RANDOM % 20000))
python3 - "$port" <<'PY' &
import hashlib, http.server, json, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [{"index": i, "embedding": [b / 255 - 0.5 for b in hashlib.sha256(t.encode()).digest()[:16]]}
                for i, t in enumerate(inputs)]
        out = json.dumps({"data": data, "model": body.get("model", "")}).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
    def log_message(self, *a): pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
PY
pids+=($!)
sleep 0.5
mkfifo "$out/in"
cairn mcp -db "$db" -collection mem -embed-url "http://127.0.0.1:$port/v1" -embed-model stand-in < "$out/in" > "$out/mcp.out" 2> "$out/mcp.err" &
pids+=($!)
exec 3> "$out/in"
echo '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"readers.sh","version":"0"}}}' >&3
echo '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&3
for i in $(seq 1 200); do
	echo "{\"jsonrpc\":\"2.0\",\"id\":$i,\"method\":\"tools/call\",\"params\":{\"name\":\"memory_store\",\"arguments\":{\"id\":\"m$i\",\"text\":\"memory number $i\"}}}" >&3
	if [ $((i % 50)) = 0 ]; then
		sleep 0.3
		n=$(cairn export "$db" | grep -c '"id":"m' || true)
		echo "after $i stores sent: cairn export (beside the server) sees $n memories; cairn info: $(cairn info "$db" | grep -c .) lines, exit $?"
	fi
done
echo "a second writer while the server runs: $(cairn compact "$db" 2>&1 || true)"
ln -s "$db" "$out/link.db"
echo "the same through a symlink: $(echo '{"id":"x","embedding":[1]}' | cairn import -collection mem "$out/link.db" 2>&1 || true)"
for _ in $(seq 1 300); do # the replies to all 201 requests, then EOF
	[ "$(grep -c '"id":' "$out/mcp.out" || true)" -ge 201 ] && break
	sleep 0.1
done
exec 3>&-
wait "${pids[1]}" || true
echo "replies: $(grep -c '"isError":true' "$out/mcp.out" || true) errors of $(grep -c '"id":' "$out/mcp.out" || true)"
echo "after the server exits: $(cairn export "$db" | grep -c '"id":"m') memories in the file"

if [ "$(id -u)" = 0 ]; then
	echo "== a read-only bind mount"
	mkdir "$out/ro"
	mount --bind "$out" "$out/ro" && mount -o remount,bind,ro "$out/ro"
	before=$(sha256sum "$out/ro/memory.db" | cut -c1-16)
	cairn info "$out/ro/memory.db" | sed -n 1,3p
	echo "cairn check: $(cairn check "$out/ro/memory.db" 2>&1 | tail -1)"
	echo "cairn export: $(cairn export "$out/ro/memory.db" | wc -l) lines"
	echo "sha256 $before -> $(sha256sum "$out/ro/memory.db" | cut -c1-16)"
	umount "$out/ro"
fi
