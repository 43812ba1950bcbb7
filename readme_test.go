package cairn_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeQuickstart keeps the README honest: its quickstart must be the
// body of Example, which the test suite compiles and runs.
func TestReadmeQuickstart(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Quickstart")
	if !ok {
		t.Fatal("README.md has no Quickstart section")
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatal("README.md's Quickstart has no Go code block")
	}
	block, _, _ = strings.Cut(block, "```")

	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func Example() {\n")
	if !ok {
		t.Fatal("example_test.go has no func Example")
	}
	body, _, _ = strings.Cut(body, "\n}\n")

	if got, want := normalize(block), normalize(body); got != want {
		t.Errorf("README quickstart and Example differ:\nREADME:\n%s\nExample:\n%s", got, want)
	}
}

// normalize drops indentation and blank lines.
func normalize(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
