// Package notifier is the front of the bot's outbound messages: it validates
// a message, splits a long text, mints job ids and enqueues one lanes job per
// message on the destination chat's lane (group = chat id in decimal), in
// one of the queues of one lanes.Store: tgjob.QueueReply for answers to a
// user's command, tgjob.QueueNotify for notifications and broadcasts, and
// tgjob.QueuePaid for the copies of paid broadcasts (Message.Paid; see
// paid.go for the halt when the bot cannot pay). Workers (package worker)
// claim them with priority to replies (bulk keeping BulkShare of a shared
// budget); the queues are Ordered, so a chat's messages arrive in enqueue
// order, and they share the per-chat budgets (Limits.StoreOptions).
//
// Edit enqueues an editMessageText of a message the bot sent (a job of kind
// tgjob.KindEdit) on the chat's lane the same way, so an edit is ordered
// with the chat's other messages and paced by the same budgets; the worker
// records the Telegram message id of every job it sends, which
// Chats().SentMessageID returns, so a later edit can target it.
//
// EditLatest is the edit of a message kept up to date in place (a game
// board): it names the message by the job id of its send (resolved by the
// worker when it sends), and coalesces in the lanes (lanes.Coalesce):
// while an edit of the message is still queued, a newer one replaces its
// content in place, so a burst of changes costs one editMessageText per
// pace slot; a message that can no longer be edited is sent afresh.
// Message.Markup carries a reply_markup (an inline keyboard) on sends and
// edits.
//
// Broadcast fans one message out to many chats and records its job ids;
// StopBroadcast removes the copies still queued (lanes Store.Cancel over
// those ids: O(copies), no scan) and counts them as cancelled; a copy in
// flight at the stop is counted sent when delivered and otherwise dropped
// (never retried nor sent later) and counted cancelled, so a stopped
// broadcast ends with Sent + Failed + Cancelled = Total; a stop
// cut short (Progress.StopFinished unset) is finished by calling it again.
//
// The notifier also keeps, under the store's hash tag (see keyspace),
// broadcast progress, broadcast job ids and idempotency keys. The chats' delivery state it
// reads and the worker writes (inactive chats that blocked the bot,
// migration aliases of groups upgraded to supergroups, sent jobs' message
// ids) is package chatstate's, reached through Chats.
//
// What the notifier enqueues is its own to define: package notifier/tgjob
// is the job payload (the worker decodes it) and notifier/tgtext holds
// Telegram's text rules (MaxTextUnits, UTF16Len).
package notifier
