// Package worker delivers the bot's messages: it claims jobs from the
// queues of a notifier's lanes.Store (tgjob.QueueReply, then
// tgjob.QueuePaid, whose jobs alone are sent with allow_paid_broadcast and
// which it skips while halted because the bot cannot pay, then
// tgjob.QueueNotify: priority, bulk keeping notifier.BulkShare of a shared
// budget), sends each with the Bot API's sendMessage (package tgapi)
// (editMessageText for a job of kind tgjob.KindEdit) and settles it in the
// store. After a successful sendMessage it records the
// message id Telegram gave the job (chatstate.Store.RecordMessageID), so a
// later edit can target it (chatstate.Store.SentMessageID), and acks the
// job: the record goes first when the store takes it at once (the lane's
// next job, claimable at the ack, may be an edit of this message), but a
// failing record never holds the ack back: it is retried after the ack.
// At a high ClaimRate the acks of many senders share calls (lanes
// Store.AckAll, up to ClaimRate × 16 ms of them, an ack waiting at most
// 16 ms, its wait added to its floor so its budgets count it as an
// immediate ack; acks.go); up to 62/s each is its own call.
//
// Concurrency: one claim loop feeds the senders, with up to
// ClaimRate × the claim's round trip × 2 claims in flight (1 to 8: 1 at
// the bulk rate, a few at 1,000/s; see Run). How many
// batches are sent at once follows the budget, not a constant (Little's
// law): ClaimRate × the measured time one message holds its sender (the Bot
// API round trip and the settle) × 1.25 + 2, at least Config.MinSenders and
// at most Config.Senders (the cap that bounds goroutines and connections,
// DefaultSenders 1,536, MaxSenders 4,096): so a bot 300 ms away from
// Telegram keeps about 14 sends in flight at 30/s and about 377 at
// 1,000/s, and the number follows
// Telegram's latency as it changes. A claim returns heads of one lane, or
// of several at a high rate (one batch per lane, each on a sender of its
// own); a lane's batch is sent one after another, and a failure releases the rest, so with
// Ordered queues a chat's messages arrive in enqueue order with any number
// of senders and workers (a chat's own rate is therefore at most one
// message per round trip). The transport (tgapi's own connections, or
// Config.HTTPClient) keeps its connections alive (Senders+2 idle), each
// send written and read by its sender; an HTTPClient on NewTransport
// speaks HTTP/2 where the server offers it.
//
// Error table (one decision per row; sources: Telegram Bot API
// "Making requests" / ResponseParameters, Bot FAQ on limits; decided by the
// fields of *tgapi.Error, the 400 rows by tgapi's one table of
// descriptions, tgapi.Kind):
//
//   - 429 Too Many Requests: Park the chat's lane in both queues for exactly
//     parameters.retry_after seconds (Config.DefaultRetryAfter, 5 s, when
//     the reply has no parameters) and Release the job (no attempt used);
//     other lanes keep flowing. A 429 is treated as a global signal only
//     when Config.GlobalFloodChats (3) distinct chats answered 429 within
//     Config.GlobalFloodWindow (1 s): then the whole store is paused for the
//     shortest retry_after among them, and the budget of each queue whose
//     jobs got those 429s is halved at once if it binds (lanes
//     Store.LowerBudget: its last window counts at least half its rate;
//     the configured rate is a ceiling, the learned rate climbs back while
//     Telegram stops pushing back; docs/delivery.md, "Budgets that learn";
//     metric codemojex_worker_budget_decreases_total). A chat's own 429s
//     lower nothing. Rationale: every lane is paced below
//     Telegram's per-chat limits, so one chat's 429 is that chat's problem,
//     while 429s across several chats at once mean the bot-wide limit was
//     hit. (The worker only calls sendMessage and editMessageText, both
//     always tied to one chat, so there is no chat-less 429.)
//   - 403 Forbidden (bot blocked, user deactivated, bot kicked): mark the
//     chat inactive (chatstate), dead-letter the chat's pending jobs in both
//     queues (DeadLane, while the lease still holds the lane; a broadcast
//     copy swept is counted failed "forbidden" in its progress by the
//     sweep's own script), then the job and the rest of the batch, with the
//     reason; no retry.
//   - 400 chat not found, 400 message is too long, any other 400:
//     dead-letter, no retry.
//   - 400 that says the bot cannot pay (IsCannotPay) for a job of the
//     paid queue: halt the paid queue (notifier.HaltPaid) and Release the
//     job (no attempt used); the copies not sent stay until the admin
//     continues free (notifier.ContinueFree) or stops the broadcast. On
//     any other queue it is an ordinary 400.
//   - Edits (editMessageText, sent with the job's reply_markup) follow the
//     same table, with more 400 rows: "message is not modified" (the
//     message shows that text and keyboard already) counts as success and
//     is acked; "message to edit not found" dead-letters with reason "edit
//     not found", "message can't be edited" (a group message older than
//     48 h) with reason "cannot edit", except for an edit with Fresh
//     (notifier.EditLatest, a game board): that one is sent as a new
//     message (same text and keyboard, silent) whose id is recorded under
//     the edit's Ref, so later edits target the new message
//     (codemojex_worker_edits_sent_fresh_total). An edit naming its message
//     by Ref (the send's job id) looks the id up when it is sent; unknown,
//     it is sent afresh (Fresh) or dead-lettered "edit not found".
//   - 400 can't parse entities: resend at once as plain text (no
//     parse_mode); if that fails too, the new error decides (another parse
//     error dead-letters with reason "parse entities").
//   - 400 with parameters.migrate_to_chat_id: hold (Park) the old lane in
//     both queues, Release the job (and the rest of the batch), record the
//     alias old -> new (chatstate), MoveLane old -> new in both queues (jobs
//     in mint order, weight, limits), lift the hold: the messages are
//     delivered to the new chat, in order.
//   - 401 Unauthorized (token revoked or wrong): Release, and Pause the
//     whole store for Config.UnauthorizedPause: nothing can be sent.
//   - 5xx, non-JSON replies, timeouts, dropped connections, 404 and anything
//     else: Nack with exponential backoff and jitter (BackoffBase *
//     2^attempts, capped at BackoffMax, ±20%); the queue dead-letters the
//     job after its MaxAttempts (progress reason "max attempts"). A copy
//     whose lease expired MaxAttempts times (its workers died or froze)
//     is dead-lettered inside a claim and counted there (progress reason
//     "lease expired").
//   - A payload (or lane) that cannot be decoded: dead-letter with reason
//     "malformed job".
//
// Delivery is at least once: a send whose reply is lost (a dropped
// connection, or a timeout, after the request was written: the outcome is
// unknown, Telegram may have delivered it) is retried once and may arrive
// twice; a second unknown outcome dead-letters the job with reason
// "unknown outcome" rather than risk a third copy.
//
// Settling outlives the send: once a job's fate is known (delivered,
// failed, park for retry_after, dead), every settling call (Ack, Nack,
// Release, Park, Dead, and the message-id record) gets a
// fresh context of its own and is retried with backoff (50 ms doubling to
// 1 s) until it succeeds or the lease is provably lost (lanes.ErrStaleLease
// or ErrNoJob: the fencing token no longer holds the job), bounded by
// Config.SettleFor (2 min) so nothing retries forever; the lease keeps
// being extended meanwhile. So a store stall (a BUSY script, a failover)
// shorter than the lease never makes a delivered message be sent again, and
// a send cut by SendTimeout is settled at once instead of waiting for its
// lease. Once shutdown begins, settling is also bounded by the drain
// deadline (ShutdownGrace + 2 s): a job still unsettled then (the store is
// unreachable) keeps its lease until it expires and is claimed again, so
// it may be sent twice (at-least-once), and a shutdown never hangs.
//
// A delivered message whose ack proves its lease lost (lanes.ErrStaleLease:
// the lease expired during a store stall longer than it, or the worker was
// taken for dead, and a claim took the job back) is still settled as
// delivered (lanes Store.AckLost, with the same tally: a broadcast copy
// counted sent once): waiting again on its lane, the job is acked and
// never sent again, so a broadcast's Stop no longer counts it cancelled;
// held by another claimer, it is marked delivered, that claimer's send
// already under way is the one duplicate, and however that lease ends the
// copy is counted sent, never cancelled nor failed. Only a delivery whose
// settling never reached the store (unreachable for SettleFor, or past the
// drain deadline) leaves the job to its lease's end: it is sent again
// (at-least-once) and counted by that send's ack.
//
// Secrets: the bot token never appears in a log line, a returned error or a
// dead-letter reason: every error goes through one Redactor (package
// redact) before it is logged, returned or stored, the logger is
// wrapped by Redactor.Handler, and the library's error and debug handlers
// are replaced.
//
// Metrics (Config.Registerer): codemojex_worker_sent_total{queue},
// codemojex_worker_edited_total{queue},
// codemojex_worker_dead_lettered_total{reason},
// codemojex_worker_retried_total, codemojex_worker_too_many_requests_total{queue},
// codemojex_worker_global_pauses_total,
// codemojex_worker_send_duration_seconds{method} (Bot API round trips),
// codemojex_worker_claim_duration_seconds, codemojex_worker_in_flight
// (jobs claimed, not settled), codemojex_worker_sends_in_flight (Bot API
// calls awaiting their answer), codemojex_worker_senders (batches sent at
// once now), codemojex_worker_rtt_floor_seconds (the round-trip floor the
// last answered send was settled with: the smaller of this process's own
// and the store's, the smallest any live worker published; lanes counts a
// send from its settle minus it, its latest possible arrival),
// codemojex_worker_rtt_floor_own_seconds (this process's own floor, which
// it publishes),
// codemojex_worker_unknown_outcome_total (sends written but not answered),
// codemojex_worker_settle_retries_total (settling calls retried),
// codemojex_worker_edits_sent_fresh_total (edits sent as a new message).
package worker
