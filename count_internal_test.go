package cairn

// This file holds helpers for the calls that fail once a collection is
// closed, for tests that do not close it.

import "testing"

// mustCount returns c.Count(), failing the test on an error.
func mustCount(t testing.TB, c *Collection) int {
	t.Helper()
	n, err := c.Count()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mustInfo returns c.Info(), failing the test on an error.
func mustInfo(t testing.TB, c *Collection) CollectionInfo {
	t.Helper()
	info, err := c.Info()
	if err != nil {
		t.Fatal(err)
	}
	return info
}
