//go:build !race

package testkit

// RaceEnabled: the test binary runs without -race.
const RaceEnabled = false
