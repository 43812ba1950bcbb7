package main

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// readmeSamples are the runs whose output the README shows, each with the
// flags of a tiny run of the same report.
var readmeSamples = []struct{ command, tiny string }{
	{"go run ./cmd/vecbench --indexes --clustered", "--indexes --clustered --sizes 300"},
	{"go run ./cmd/vecbench", "--sizes 300"},
}

// TestReadmeSamples refuses a stale README: each sample of vecbench's output
// there (written by bench/readme-samples.sh from a real run) must have the
// shape the code prints today — the same lines of machine and command, the
// same titles and table headers, and the same kinds of rows, numbers aside.
func TestReadmeSamples(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range readmeSamples {
		sample, ok := readmeSample(string(readme), s.command)
		if !ok {
			t.Errorf("README.md has no sample of %q", s.command)
			continue
		}
		out, errOut, err := runArgs(t, context.Background(), tiny(t.TempDir(), strings.Fields(s.tiny)...)...)
		if err != nil {
			t.Fatalf("%s: %v\n%s", s.tiny, err, errOut)
		}
		got, want := shape(sample), shape(out)
		if !slices.Equal(got, want) {
			t.Errorf("README.md's sample of %q is stale: run bench/readme-samples.sh\nits shape:\n%s\nthe code's:\n%s",
				s.command, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

// readmeSample returns the output in the README's code block that starts
// with "$ " and the command.
func readmeSample(readme, command string) (string, bool) {
	_, after, ok := strings.Cut(readme, "```\n$ "+command+"\n")
	if !ok {
		return "", false
	}
	block, _, ok := strings.Cut(after, "```")
	return block, ok
}

var (
	number = regexp.MustCompile(`[0-9][0-9,.]*( ?(µs|ms|s|KiB|MiB|GiB|min))?`)
	spaces = regexp.MustCompile(` +`)
)

// shape reduces a report to what does not depend on the run: each line
// with its numbers masked, the first words of the machine and command
// lines, in order, each distinct line once.
func shape(report string) []string {
	var lines []string
	for line := range strings.SplitSeq(report, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "", strings.HasPrefix(line, "#") && strings.Contains(line, "wall time"):
			continue
		case strings.HasPrefix(line, "machine: "), strings.HasPrefix(line, "command: "):
			line, _, _ = strings.Cut(line, " ")
		default:
			line = spaces.ReplaceAllString(number.ReplaceAllString(line, "#"), " ")
			line = strings.ReplaceAll(line, "-d#", "") // generated names carry the dimension when it is not 768
		}
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return lines
}
