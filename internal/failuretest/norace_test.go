//go:build !race

package failuretest

const raceEnabled = false
