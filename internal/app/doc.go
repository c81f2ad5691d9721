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
// # Intake: nothing lost, nothing applied twice
//
// The poller runs its own getUpdates loop (a plain HTTP call; the library's
// loop confirms a batch before its handlers have run). Each batch is first
// recorded in Valkey by one atomic script, fenced by the poller's lease
// token: updates with update_id >= the stored offset are appended to the
// inbox list and the offset advances past them. Only the next getUpdates,
// sent with that stored offset, confirms the batch to Telegram. A crash
// before the script ran loses nothing (Telegram sends the batch again); a
// crash after it loses nothing (the inbox has it), and a batch fetched twice
// is recorded once (ids below the offset are dropped).
//
// One handler loop takes the inbox head, skips it when its update_id is at
// or below the handled mark, runs it through the library's ProcessUpdate
// (bot.WithNotAsyncHandlers: synchronously), sends the replies it produced
// through the notifier, then pops it and raises the handled mark in one
// atomic script (again fenced by the lease). A move that changes a game
// first writes a journal entry for the update (the game's fingerprint
// before the move and the replies it will produce); when the update is
// handled again after a crash and the game no longer has that fingerprint,
// the move was applied already: the journalled replies are sent and the
// move is not replayed. Every message an update enqueues carries a notifier
// idempotency key derived from its update_id ("upd:<id>:<reply index>",
// "upd:<id>:progress", and "upd:<id>" for a /broadcast), so an update
// handled again after a crash between enqueueing and finishing enqueues
// nothing twice, even a reply already sent and acked. See inbox.go,
// journal.go and handle.go.
//
// # Keys
//
// Every key starts with the store's hash tag {T} (default DefaultTag), shared with
// lanes, notifier and gamestore, so every script runs on Valkey Cluster:
//
//	{T}:app:poller        string  poller lease: token, PX lease
//	{T}:app:polled        string  heartbeat: token of the poller whose getUpdates succeeded, PX 2x long-poll timeout
//	{T}:app:in:offset     string  next getUpdates offset (last recorded update_id + 1)
//	{T}:app:in:queue      list    recorded updates not yet handled: "<update_id>\n<update JSON>"
//	{T}:app:in:handled    string  highest update_id handled
//	{T}:app:j:<update_id> hash    journal of an update being handled: pre, out, bc (deleted when handled)
//	{T}:app:chats         set     every chat id that sent the bot an update (broadcast audience)
//	{T}:app:bc            hash    broadcasts whose progress message is being kept up to date
package app
