//go:build race

package failuretest

// raceEnabled: the test binary runs with -race, so the bot is built with it
// too (the race-instrumented packages are then in the build cache already).
const raceEnabled = true
