package cairn

import "github.com/cairndb/cairn/vector"

// IndexForTest returns the index in use, so that benchmarks can compare a
// Query with a bare search of the very same index.
func (c *Collection) IndexForTest() vector.Index {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.idx
}
