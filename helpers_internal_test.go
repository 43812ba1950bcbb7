package cairn

// This file holds helpers for the calls that fail once a collection is
// closed, for tests that do not close it; the external tests (package
// cairn_test) call them as cairn.MustCount and cairn.MustInfo.

import "testing"

// mustCount returns c.Count, failing the test on an error.
func mustCount(t testing.TB, c *Collection) int {
	t.Helper()
	n, err := c.Count(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// mustInfo returns c.Info, failing the test on an error.
func mustInfo(t testing.TB, c *Collection) CollectionInfo {
	t.Helper()
	info, err := c.Info(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return info
}

// MustCount is mustCount, for the external tests.
func MustCount(t testing.TB, c *Collection) int {
	t.Helper()
	return mustCount(t, c)
}

// MustInfo is mustInfo, for the external tests.
func MustInfo(t testing.TB, c *Collection) CollectionInfo {
	t.Helper()
	return mustInfo(t, c)
}
