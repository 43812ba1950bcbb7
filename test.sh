#!/usr/bin/env bash
# Runs every check CI runs, over every module of the workspace (go.work):
# formatting, vet, the whole test suite under the race detector, and a quick
# vecbench smoke run. Needs only Go 1.26 (and a C compiler for the race
# detector's runtime); modules come from the proxy.
set -euo pipefail
cd "$(dirname "$0")"

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# Every package of every module in go.work.
all=github.com/cairndb/cairn/...

echo "== go vet"
go vet "$all"

echo "== go test -race"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
go test -race -count=1 -timeout 15m "$all" 2>&1 | tee "$log"
passed=$(grep -c '^ok ' "$log" || true)

echo "== go test (purego kernels)"
go test -count=1 -tags purego ./vector/... ./flat/... ./qflat/...

# Crash torture (RELIABILITY.md): children killed at random and at crash
# points, every acknowledged write checked; then power-cut images. About a
# minute each; the long runs are in RELIABILITY.md.
torture() {
	if ! go run "$@" > "$log" 2>&1; then
		cat "$log"; exit 1
	fi
	tail -2 "$log"
}
echo "== torture (short)"
torture -tags cairn_crashpoint ./cmd/torture -trials 30 -kill-within 1s
echo "== torture -powerloss (short)"
torture ./cmd/torture -powerloss -trials 8 -kill-within 1s

echo "== vecbench --quick"
# Every report (filtered and concurrent included) and both plot kinds.
plots=$(mktemp -d)
trap 'rm -f "$log"; rm -rf "$plots"' EXIT
go run ./cmd/vecbench --quick --quiet --plot "$plots/quick.svg" > /dev/null
test -s "$plots/quick.svg" && test -s "$plots/quick-build.svg"
echo "vecbench --quick: ok"

# One closing line for CI: packages whose tests passed (a failure stops the
# script above with a non-zero exit).
echo "packages: $passed passed, 0 failed"
