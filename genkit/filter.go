package cairngenkit

import (
	"fmt"

	"github.com/cairndb/cairn"
)

// filterOf turns a RetrieverOptions.Filter into a cairn filter with
// cairn.FilterOf, the reader of every door.
func filterOf(f any) (*cairn.Filter, error) {
	cf, err := cairn.FilterOf(f)
	if err != nil {
		return nil, fmt.Errorf("cairngenkit: filter: %w", err)
	}
	return cf, nil
}
