// Package intake is the Telegram update intake of the program: the
// getUpdates loop (Poller, calling the Bot API through tgapi.Client),
// the poller lease (Lease), and the durable record of updates (Inbox): the
// update queue, a lanes queue (QueueName) with one lane per chat, and the
// offset, epochs, handled marks and journals beside it, and their Lua
// scripts (lua/*.lua). Every Valkey command of the intake is a method of
// Inbox or Lease; keys.go builds its keys. Nothing lost, nothing applied
// twice:
//
// Recording. The poller runs its own getUpdates loop (a plain HTTP call;
// the library's loop confirms a batch before its handlers have run). Each
// batch's updates with update_id >= the stored offset are first put on the
// update queue, each as a job on its chat's lane (LaneOf) whose id is
// derived from the update (JobID: the epoch and the update_id), then the
// offset is moved past them by a script fenced by the poller's lease. Only
// the next getUpdates, sent with that stored offset, confirms the batch to
// Telegram. A crash before the enqueue loses nothing (Telegram sends the
// batch again); a crash between the enqueue and the offset loses nothing
// and applies nothing twice: the batch fetched again maps to the same job
// ids (a job that still waits or runs is not added twice) and an update
// handled in between is skipped by its lane's handled mark. A webhook
// (Accept) records the same way, without offset or lease, so any number of
// processes can receive; Telegram's resends of an update_id are recorded
// once the same way. Webhook deliveries may come out of update_id order,
// so an update below its lane's handled mark is skipped only when its id
// is in the lane's bounded set of recently finished ids or at or below
// the lane's floor (Handled, done.lua): a late older update is handled
// after the newer one. Updates fetched by getUpdates come in order, so
// their lanes keep no such set (Claimed.InOrder): the mark alone says
// what is finished. An update the bot does not act on (a group's chatter,
// a service message, an edit: the program's classifier, Inbox.WithFilter)
// is confirmed with its batch and dropped before anything is written for
// it: it costs no key, no lane and no intake limit.
//
// Handling. Any number of handlers in any number of processes claim the
// queue with lanes' weighted rotation (Claim). The queue is ordered: a
// chat's lane is not served again while one of its updates is being
// handled, so a chat's updates are handled one at a time, in update_id
// order, while other chats' run concurrently, and a chat's weight (lanes
// keeps weights per store, on the program's hash tag) is its share of the
// handlers as of the senders. A handler first checks the lane's handled
// mark (Handled), runs the update, and then raises the mark (MarkHandled:
// done.lua) and acks the job: the program's handlers ack it with their
// next claim, in the same atomic call (ClaimAndAck); Finish does both at
// once. A handler that dies holds
// its update until its lease expires; another handler then handles it
// again: a move that changes a game first writes a journal entry for the
// update (the game's fingerprint before the move and the replies it will
// produce), and when the update is handled again and the game no longer
// has that fingerprint, the move was applied already: the journalled
// replies are sent and the move is not replayed. Every message an update
// enqueues carries a notifier idempotency key derived from its update_id
// ("upd:<id>:<reply index>", "upd:<id>:progress", and "upd:<id>" for a
// /broadcast), so an update handled again enqueues nothing twice, even a
// reply already sent and acked. An update that fails (its handler
// panicked, Valkey failed) is retried after a back-off with its lane parked
// behind it (Retry), and after DefaultMaxAttempts it is dead-lettered with
// the reason, so a poison update holds its chat for a few seconds, never
// forever. The queue's store has no Telegram rate limit or pace
// (StoreOptions): those budgets are for sends.
//
// update_id is not monotonic: Telegram picks a new starting id after a week
// without updates, and a local Bot API server has its own id space. A
// server ignores an offset more than 10 beyond its next update_id and
// answers from the head of its queue. When a batch lies entirely (and more
// than 10) below the offset sent and the same head is handed out again,
// the intake re-bases, once: rebase.lua begins epoch E (resumed, not
// repeated, after a crash), the batch is enqueued in epoch E (its job ids
// sort after every earlier epoch's on the same lane, and handled marks
// compare the epoch first, so the lower ids are not taken for duplicates),
// and the offset is set past the batch. The notifier keys of updates of
// epoch E read "upd:<E>.<id>". The same batch handed out twice in a row
// with nothing new backs off (0.5 s doubling to 30 s) and logs why: no poll
// loop spins.
//
// Polling mode deletes a webhook left set (getWebhookInfo, then
// deleteWebhook without drop_pending_updates, logging the URL), at start
// and when a getUpdates 409 says a webhook is active again. Webhook mode
// (the program's TELEGRAM_WEBHOOK_URL) calls setWebhook instead
// (tgapi.Client.SetWebhook). See inbox.go, journal.go, and the program's
// internal/handling (the handlers) and internal/webhook.
package intake
