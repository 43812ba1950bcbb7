#!/usr/bin/env bash
# Writes the README's samples of vecbench's output from real runs, so that
# they show what the code prints today (cmd/vecbench's TestReadmeSamples
# refuses a README whose samples no longer have the code's shape):
#
#   bench/readme-samples.sh
#
# Runs `vecbench --indexes --clustered` and `vecbench` (no flags), each as
# the README shows it, and puts each one's output, and its wall time on this
# machine, in the README's code block that starts with its command line.
# Run it on a quiet machine: the figures are what a reader will compare with.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
go build -o "$out/vecbench" ./cmd/vecbench
for args in "--indexes --clustered" ""; do
	start=$(date +%s)
	# shellcheck disable=SC2086
	"$out/vecbench" $args > "$out/run.txt"
	secs=$(($(date +%s) - start))
	printf '# wall time: %dm%02ds\n' $((secs / 60)) $((secs % 60)) >> "$out/run.txt"
	cmd="go run ./cmd/vecbench${args:+ $args}"
	echo "$cmd: ${secs}s" >&2
	python3 - "$cmd" "$out/run.txt" <<'PY'
import sys
cmd, path = sys.argv[1], sys.argv[2]
run = open(path).read()
# vecbench names itself in its command line; the README shows go run.
readme = open("README.md").read()
start = "```\n$ " + cmd + "\n"
i = readme.index(start) + len(start)
j = readme.index("```", i)
open("README.md", "w").write(readme[:i] + run + readme[j:])
PY
done
