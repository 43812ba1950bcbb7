package langchaingo_test

import (
	"os"
	"strings"
	"testing"
)

// TestReadme keeps the repository README's langchaingo code block the
// same as the body of ExampleStore, which the tests compile and run.
func TestReadme(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "This is its `ExampleStore`:")
	if !ok {
		t.Fatal("README.md has no langchaingo example")
	}
	_, block, ok := strings.Cut(after, "```go\n")
	if !ok {
		t.Fatal("README.md's langchaingo example has no Go code block")
	}
	block, _, _ = strings.Cut(block, "```")
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	_, body, ok := strings.Cut(string(src), "func ExampleStore() {\n")
	if !ok {
		t.Fatal("example_test.go has no func ExampleStore")
	}
	body, _, _ = strings.Cut(body, "\n}\n")
	if got, want := normalize(block), normalize(body); got != want {
		t.Errorf("README and ExampleStore differ:\nREADME:\n%s\nExample:\n%s", got, want)
	}
}

func normalize(s string) string {
	var out []string
	for line := range strings.SplitSeq(s, "\n") {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}
