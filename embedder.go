package cairn

import (
	"context"
	"errors"
)

// ErrNoEmbedder is returned when a call needs text turned into a vector (an
// [Item] without an embedding, or [Collection.QueryText]) and the store was
// opened without an [Embedder].
var ErrNoEmbedder = errors.New("cairn: no embedder configured (set Options.Embedder)")

// ErrWrongNumberOfVectors is wrapped by the error of a call whose
// [Embedder] returned another number of vectors than it was given texts.
var ErrWrongNumberOfVectors = errors.New("cairn: the embedder returned a wrong number of vectors")

// Embedder turns texts into embeddings, one vector per text, in order.
// Implementations must be safe for concurrent use: a store calls Embed from
// whichever goroutine adds or queries by text. Embed should honour ctx.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// EmbedderFunc adapts an ordinary function to an [Embedder].
//
// It is as safe for concurrent use as the function is.
type EmbedderFunc func(ctx context.Context, texts []string) ([][]float32, error)

// Embed returns f(ctx, texts).
func (f EmbedderFunc) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return f(ctx, texts)
}
