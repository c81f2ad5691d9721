// Package failuretest holds codemojex's failure tests: a worker
// process killed with SIGKILL in the middle of a burst, Valkey restarted or
// its scripts flushed in the middle of a burst, two worker processes sharing
// one global limit, a Valkey outage under the whole bot, the bot or a
// handler process killed mid-handling, the handler that started a lazy
// broadcast to 50,000 chats and then the worker sending it killed mid-way,
// and (on a cluster) the bot's primary
// killed or failed over to its replica mid-burst. They drive the real
// program (cmd/bot, built once per test binary) as OS processes against a
// real throwaway Valkey (internal/valkeytest: a standalone server, or with
// VALKEYTEST_MODE=cluster three primaries with one replica each) and the
// Telegram Bot API emulator (internal/tgemu), and count what every chat
// received: lost messages (must be none) and duplicates (at most the jobs
// in flight when the failure hit).
//
// The package has no non-test code.
package failuretest
