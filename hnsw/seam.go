package hnsw

// This file fills in internal/hnswseam: what this package offers the
// root package alone.

import (
	"context"

	"github.com/cairndb/cairn/internal/hnswseam"
)

func init() {
	hnswseam.CalibratePaced = func(ctx context.Context, ix any) error {
		_, err := ix.(*Index).calibrateNow(ctx, nil, true)
		return err
	}
	hnswseam.SetBuild = func(ix any, workers int, progress func(done, total int)) {
		ix.(*Index).setBuild(workers, progress)
	}
}
