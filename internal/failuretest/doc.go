// Package failuretest holds codemojex's failure tests: a worker
// process killed with SIGKILL in the middle of a burst, Valkey restarted or
// its scripts flushed in the middle of a burst, two worker processes sharing
// one global limit, and a Valkey outage under the whole bot. They drive the
// real program (cmd/bot, built once per test binary) as OS processes against
// a real throwaway Valkey/Redis (internal/valkeytest) and the Telegram Bot
// API emulator (internal/tgemu), and count what every chat received: lost
// messages (must be none) and duplicates (at most the jobs in flight when
// the failure hit).
//
// The package has no non-test code.
package failuretest
