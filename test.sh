#!/usr/bin/env bash
# Runs every check CI runs, over every module of the workspace (go.work):
#
#   gofmt, go vet;
#   go test -race     every package, the longest first;
# then side by side:
#   go test (plain)   the packages whose tests do less under -race (the
#                     root, hnsw, internal/keyword, cmd/vecbench: see their
#                     race_test.go), so that every test runs in full here;
#   go test -tags purego   the portable kernels in place of the assembly;
#   torture           short crash and power-loss tortures (RELIABILITY.md);
#   vecbench --quick  every report at small sizes, and both plot kinds.
#
# Each package is printed as it starts and ends, with its time; a failing
# test's output is printed in full and fails the script. About 10 minutes
# on 2 cores with a warm build cache (CONTRIBUTING.md). Needs Go 1.26 and a C
# compiler (the race detector's runtime uses cgo); modules come from the
# proxy. The last line, "packages: N passed, 0 failed", is what CI reads.
set -euo pipefail
cd "$(dirname "$0")"
t0=$SECONDS
tmp=$(mktemp -d)
# On a failure, stop the steps still running side by side (below).
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$tmp"' EXIT
step() { echo "== $1 ($((SECONDS - t0)) s in)"; }

step gofmt
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

# Every package of every module in go.work.
all=github.com/cairndb/cairn/...

step "go vet"
go vet "$all"

# go test -json through internal/testprogress: a line as each package
# starts and ends, the output of what fails.
go build -o "$tmp/testprogress" ./internal/testprogress
gotest() {
	local label=$1; shift
	go test -json -count=1 -timeout 15m "$@" | "$tmp/testprogress" -label "$label" -slow 30s | tee -a "$tmp/log"
}

# The longest packages first, so that the two run side by side and none is
# left alone at the end.
step "go test -race"
gotest race -race ./hnsw/ . ./cmd/vecbench/ ./sqlitestore/ "$all"
passed=$(grep -c '^race: ok ' "$tmp/log" || true)

# The rest side by side (each alone leaves a core idle): the tests that
# do less under -race, in full without it; the portable kernels; the
# tortures; vecbench --quick. Each prints its own lines as it goes.
step "go test (plain), go test -tags purego, torture, vecbench --quick"
pids=()
gotest plain . ./hnsw/ ./internal/keyword/ & pids+=($!)
gotest plain -run '^TestTargetReport$' ./cmd/vecbench/ & pids+=($!)
gotest purego -tags purego ./vector/... ./flat/... ./qflat/... & pids+=($!)

# Crash torture (RELIABILITY.md): children killed at random and at crash
# points, every acknowledged write checked; then power-cut images; then
# Compact killed at random and at its crash points, and power-cut images
# of it, each file checked against a listing taken before. About a minute
# and 30 s; the long runs are in RELIABILITY.md.
torture() {
	local name=$1; shift
	if ! go run "$@" > "$tmp/$name" 2>&1; then
		cat "$tmp/$name"; echo "$name: FAIL"; return 1
	fi
	tail -2 "$tmp/$name" | sed "s/^/$name: /"
}
(
	torture torture -tags cairn_crashpoint ./cmd/torture -trials 30 -kill-within 1s
	torture powerloss ./cmd/torture -powerloss -trials 8 -kill-within 1s
	torture compact -tags cairn_crashpoint ./cmd/torture -compact -compact-mb 8 -trials 6
	torture compact-powerloss ./cmd/torture -compact -powerloss -compact-mb 8 -trials 3
) & pids+=($!)

# Every report (filtered and concurrent included) and both plot kinds.
(
	go run ./cmd/vecbench --quick --quiet --plot "$tmp/quick.svg" > /dev/null
	test -s "$tmp/quick.svg" && test -s "$tmp/quick-build.svg"
	echo "vecbench --quick: ok"
) & pids+=($!)

for p in "${pids[@]}"; do
	wait "$p"
done

step done
# One closing line for CI: packages whose tests passed under -race (the
# plain and purego steps run some of them again; a failure anywhere stops
# the script above with a non-zero exit).
echo "packages: $passed passed, 0 failed"
