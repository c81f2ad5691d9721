// Package handling is the update handler of the consumer runner: HANDLERS
// claim loops (consumer.Run) over the update queue (internal/intake's
// Inbox), each claiming a batch of one chat's recorded updates (in
// update_id order: one chat's updates are handled one at a time, in order,
// and different chats concurrently), running each through the update mux
// (internal/update), queueing the replies of its Outcome through the
// notifier (keyed by Outcome.Key: an update handled again after a crash
// enqueues nothing twice), running its after-hooks, and settling it:
//
//   - finished: marked handled (intake MarkHandled, which forgets the
//     notifier keys it used), its job acked by the loop's next claim
//     (intake ClaimAndAck: one round trip and one script per update fewer
//     than an ack of its own);
//   - handled before (the lane's handled mark): skipped, counted as a
//     duplicate;
//   - a panic (update.Recover's PanicError): retried after retryBase
//     doubled per attempt (at most retryMax), dead-lettered after the
//     queue's MaxAttempts with the panic as its reason;
//   - an infrastructure failure (Valkey, the notifier): released without
//     using an attempt, and the loop backs off (intake.ErrorBackoff);
//   - malformed (does not decode): dead-lettered at once.
//
// Settlements are retried with fresh contexts for at most a lease's length
// (consumer.Settler), and stopping does not cut them. At a stop the batches
// in progress finish (each update within min(Drain, Lease/2)), the updates
// not started are released and the acks still pending are settled, before
// Run returns.
//
// Metrics (NewMetrics): codemojex_updates_handled_total{result},
// codemojex_updates_duplicate_total, codemojex_handler_duration_seconds,
// codemojex_update_handled_after_seconds,
// codemojex_updates_dead_lettered_total, codemojex_handler_panics_total
// (counted by Recover's hook) and codemojex_replies_refused_total.
package handling
