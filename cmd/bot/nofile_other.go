//go:build !unix

package main

// fileLimit reports no limit where the process cannot read one.
func fileLimit() (uint64, bool) { return 0, false }
