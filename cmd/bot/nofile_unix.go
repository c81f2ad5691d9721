//go:build unix

package main

import "syscall"

// fileLimit is the process's soft limit on open file descriptors (Go has
// already raised it to the hard limit at start, on Linux since Go 1.19),
// and true; false when it cannot be read.
func fileLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return l.Cur, true
}
