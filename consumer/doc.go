// Package consumer is the one consumer runner of lanes queues: the claim
// loop skeleton, the lease keeper, the settle retries, the drain on stop,
// the backoff and the cancellable sleep, written once. The bot's two
// consumers use it: the update handlers (internal/app: a claimed update is
// handled and marked handled) and the Bot API sender (worker: a claimed
// message is sent). Each keeps its own claim policy (how and when it
// claims, what it does with a batch) as a pluggable Source; the runner
// knows nothing of Telegram or of updates.
//
// The parts:
//
//   - Run runs Config.Loops claim loops over a Source until ctx ends: each
//     claims a batch (Source.Claim), handles it (Source.Handle: inline, or
//     on a goroutine of its own with Config.Async), backs off after a failed
//     claim (Config.Backoff, cancellable), and drains on stop: it calls Claim
//     until the Source reports ErrStopped (its claims in flight answered) and
//     joins every batch before it returns.
//   - RunBatch handles one claimed batch (the heads of one lane) in order
//     under kept leases: a job is started only while the runner is not
//     stopping and its lease is held with enough of it left; otherwise it and
//     the rest of the batch are handed back (Jobs.Rest), so a lane keeps its
//     order.
//   - Keep is the lease keeper: it extends every live lease of a batch by its
//     length every length/3 (lanes Store.Extend), tracks each lease's
//     deadline on the local clock (the send time of the last Extend that
//     succeeded plus its length: never later than the server's), and marks a
//     lease lost when an Extend proves it is (lanes.ErrStaleLease,
//     lanes.ErrNoJob).
//   - Settler retries one settlement (ack, nack, release, dead-letter, a
//     handled mark) with a fresh context per try until it lands, the lease
//     is provably lost (lanes.ErrStaleLease, lanes.ErrNoJob), the error is
//     final (lanes.ErrInvalid and the caller's own), its deadline passes or
//     ctx ends: a failed settle is handed over and retried in one place (the
//     idea of asynq's syncer), synchronously, since a lane's next job must
//     not start before its predecessor is settled.
//   - Backoff (exponential, capped, with jitter) and Sleep (a wait that ends
//     with ctx), written once: the intake's, the game store's, the worker's
//     and the handlers' retries use them.
package consumer
