//go:build race

package testkit

// RaceEnabled: the test binary runs with -race, so the bot is built with it
// too (the race-instrumented packages are then in the build cache already).
const RaceEnabled = true
