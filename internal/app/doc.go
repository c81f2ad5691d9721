// Package app is the codemojex program: it wires configuration, Valkey, the
// Telegram update intake, the handlers, the notifier and the workers, and
// serves /healthz and /metrics. cmd/bot is a thin main around it, so tests
// run the whole program in-process against internal/tgemu and a real Valkey.
//
// # Roles
//
// BOT_ROLE=poller runs the update intake and the handlers; worker runs the
// notification workers only; all runs both. Any number of processes may
// share one Valkey; only one of them polls at a time: pollers compete for a
// lease in Valkey ("{T}:app:poller", SET NX PX, renewed by its token), and
// the others log "another poller is active ..., waiting" and take over when
// the lease lapses.
//
// # Intake
//
// Update intake (the getUpdates loop, the poller lease, the inbox and the
// journals, and their scripts) is package internal/intake: nothing is lost
// and nothing applied twice (see its doc). app runs it while it holds the
// lease and feeds the inbox to the handlers (handle.go): every message an
// update enqueues carries a notifier idempotency key derived from its
// update_id ("upd:<id>:<reply index>", "upd:<id>:progress", and "upd:<id>"
// for a /broadcast), so an update handled again after a crash between
// enqueueing and finishing enqueues nothing twice, even a reply already
// sent and acked. A move that changes a game first journals the game's
// fingerprint and its replies (journal.go, handlers.go).
//
// # Keys
//
// Every key starts with the store's hash tag {T} (default DefaultTag),
// shared with lanes, notifier, chatstate, gamestore and intake, so every
// script runs on Valkey Cluster. The app itself keeps three (audience.go,
// health.go);
// docs/keys.md lists every key of the program:
//
//	{T}:app:chats         set     every chat id that sent the bot an update (broadcast audience)
//	{T}:app:bc            hash    broadcasts whose progress message is being kept up to date
//	{T}:app:health        string  /healthz write probe ("1", PX 1 min)
package app
