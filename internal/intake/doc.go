// Package intake is the Telegram update intake of the program: the
// getUpdates loop (Poller, with its own raw getUpdates Client), the poller
// lease (Lease), and the durable inbox with its journals (Inbox), and their
// Lua scripts (lua/*.lua). Every Valkey command of the intake is a method
// of Inbox or Lease; keys.go builds its keys. Nothing lost, nothing applied
// twice:
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
// update_id is not monotonic: Telegram picks a new starting id after a week
// without updates, and a local Bot API server has its own id space. A
// server ignores an offset more than 10 beyond its next update_id and
// answers from the head of its queue. When a batch lies entirely (and more
// than 10) below the offset sent and the same head is handed out again,
// the intake re-bases, once, in the same atomic script: it appends a marker
// "rebase\n<E>" and the batch, and sets the offset past the batch. The
// handler pops the marker atomically with resetting the handled mark, so
// the lower ids are not taken for duplicates, and the notifier keys of
// updates after re-base E read "upd:<E>.<id>". The same batch handed out
// twice in a row with nothing new backs off (0.5 s doubling to 30 s) and
// logs why: no poll loop spins.
//
// Polling mode deletes a webhook left set (getWebhookInfo, then
// deleteWebhook without drop_pending_updates, logging the URL), at start
// and when a getUpdates 409 says a webhook is active again.
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
// journal.go and the program's handle.go (internal/app).
package intake
