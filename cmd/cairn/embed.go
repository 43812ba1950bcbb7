// embed.go holds the flags that configure an OpenAI-compatible embedder,
// shared by the commands that turn text into vectors (query, import, mcp).

package main

import (
	"flag"
	"os"
	"time"

	"github.com/cairndb/cairn"
	"github.com/cairndb/cairn/openai"
)

// embedFlags are the embedder's flags.
type embedFlags struct {
	url, model, keyEnv string
	dims, retries      int
	timeout            time.Duration
}

func (f *embedFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.url, "embed-url", "", "API root of an OpenAI-compatible embeddings endpoint (requests go to URL/embeddings), e.g. http://localhost:11434/v1")
	fs.StringVar(&f.model, "embed-model", "", "embedding model name, e.g. nomic-embed-text")
	fs.StringVar(&f.keyEnv, "embed-key-env", "OPENAI_API_KEY", "environment variable holding the API key (sent as a bearer token if set)")
	fs.IntVar(&f.dims, "embed-dims", 0, "ask the model for vectors of this length (models that can shorten them); 0 for its default")
	fs.IntVar(&f.retries, "embed-retries", 2, "retries of a failed embeddings request")
	fs.DurationVar(&f.timeout, "embed-timeout", 30*time.Second, "bound on one embeddings request")
}

// set reports whether an embedder was asked for.
func (f *embedFlags) set() bool { return f.url != "" || f.model != "" }

// embedder returns the configured embedder, or nil if none was asked for.
func (f *embedFlags) embedder() (cairn.Embedder, error) {
	if !f.set() {
		return nil, nil
	}
	if f.url == "" || f.model == "" {
		return nil, usageError("-embed-url and -embed-model go together")
	}
	if f.dims < 0 {
		return nil, usageError("-embed-dims must not be negative, got %d", f.dims)
	}
	if f.retries < 0 {
		return nil, usageError("-embed-retries must not be negative, got %d", f.retries)
	}
	if f.timeout <= 0 {
		return nil, usageError("-embed-timeout must be positive, got %v", f.timeout)
	}
	retries := f.retries
	if retries == 0 {
		retries = -1 // the Embedder reads 0 as its default
	}
	return &openai.Embedder{
		BaseURL:    f.url,
		Model:      f.model,
		APIKey:     os.Getenv(f.keyEnv),
		Dimensions: f.dims,
		MaxRetries: retries,
		Timeout:    f.timeout,
	}, nil
}
