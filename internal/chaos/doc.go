// Package chaos is codemojex's chaos run with a checker (issue 31): the
// real bot (cmd/bot, built once) in split roles (a poller, or with
// CHAOS_INTAKE=webhook a webhook receiver the emulator POSTs updates to
// and resends what it did not answer 2xx; two handlers, two workers, and
// a worker of one sender serving the operator console) on Valkey with a
// replica, reached through a TCP proxy
// (github.com/Shopify/toxiproxy/v2 as a library), or with
// CHAOS_STORE=cluster on a Valkey Cluster of three primaries with a
// replica each, reached directly (the seed's Valkey restarts and failovers
// become a kill -9 and a CLUSTER FAILOVER of the bot's slot's primary, its
// network faults and READONLY are left out: forCluster), and the Bot API
// emulator (internal/tgemu) with Telegram's limits scaled as in the
// failure tests; a load of players (groups playing by typing, private
// chats playing by tapping, /start rushes, a flooding user, an admin who
// changes a weight and starts a free broadcast to a known audience, then
// a paid one, allow_paid_broadcast, to the same chats; an operator reading
// the console's Broadcasts and Queues pages); and
// faults drawn from a seed (math/rand/v2), overlapping: kill -9, SIGTERM
// and SIGSTOP past the lease of any bot process (each restarted), Valkey
// restarted and failed over to its replica, busy with a long script
// (BUSY) or over maxmemory under noeviction (OOM), the network between the
// bot and Valkey cut or slowed, Telegram answering 5xx, its HTML 502 page,
// 429 with retry_after, holding a send, or slowing to 1 s.
//
// Once the faults stop and the system settles (a bounded wait), a checker
// goes over the whole history: every update the emulator saw confirmed is
// answered (lost = 0); duplicates are counted against the sends in flight
// at the faults; replies in each group come in the order of their updates,
// and each guess's reply carries its attempt number (applied once); every
// copy of either broadcast reaches its chat once (a paid one sent paid) or
// is dead-lettered, and each broadcast's final progress and the
// emulator's paid count are what the emulator received, and what the
// console shows once settled; the console answered every request but
// while a fault held its process or Valkey; the queues are drained, no lease
// left, no bot process died on its own. The run prints its seed, the
// faults with their times and the figures; a failed check names the
// command that reproduces it (make chaos SEED=... DURATION=...).
//
// The run lives in the package's tests (it starts processes through
// internal/testkit, which imports testing): make chaos runs TestChaos with
// SEED and DURATION, make test runs TestChaos60sFixedSeed; docs/chaos.md
// has the table of runs (TestDocsTableIsTheRecord). The package has no
// non-test code.
package chaos
