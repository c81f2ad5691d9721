// Package lanes is codemojex's fair, weighted, leased lane queue on Valkey.
// It knows nothing of Telegram: a lane is any group id (codemojex uses the
// chat id), a payload is bytes.
//
// # API: Store and Inspector
//
// A Store is the send path, and every method of it acts on jobs: Enqueue
// puts one job or many on lanes, with options for a dedupe key with a TTL
// (Dedupe: a caller that may run twice enqueues once), coalescing by name
// (Coalesce: a newer payload replaces the pending job in place, latest
// wins) and a stop key (Unless: a fan-out called off mid-way), and one
// EnqueueResult saying what happened to the items; Claim hands out leased
// jobs; Ack, Extend, Release, Nack and Dead settle one lease (AckAll acks
// several in one call); NewWaiter
// blocks an idle claimer until work may be claimable; Cancel removes
// waiting jobs by id (the copies of a fan-out called off: O(ids), in
// atomic chunks, never a scan; see "Cancelling jobs"). Tag names the
// keyspace (for the dedupe and stop keys) and Inspector returns the
// store's Inspector.
//
// An Inspector (Store.Inspector, or NewInspector for a process that only
// administers) holds every operation on a whole lane or queue: weights
// (SetWeight, Weight, Weights), lane limits and pace (SetLaneLimit,
// SetLanePace), parks and the global pause (Park, ResumeLane, Pause,
// Resume), an operator's pause of one queue or one lane in every queue
// (PauseQueue, ResumeQueue, PausedQueues; PauseGroup, ResumeGroup,
// PausedGroups), draining a lane (MoveLane, DeadLane), the dead-letter set
// (DeadLetters, RequeueDead, PurgeDead) and Stats. It shares the store's
// client, keyspace and options, so it costs nothing to get one.
//
// The split is by what a call acts on, not by who calls it. A claimer that
// learns something about a whole lane while it holds a job of it (a 429's
// retry_after, a 403 from a chat that blocked the bot, a group migrated to
// a supergroup) uses the Inspector for it: codemojex's worker holds its
// store and the store's Inspector, and parks the lane (Park, before it
// Releases the job), dead-letters the lane (DeadLane, while its lease still
// holds an ordered lane, then DeadLetters with the returned ids) or moves it
// (MoveLane, then ResumeLane). Those calls are as atomic and as cheap as
// the Store's; only their target differs, so the Store's surface stays the
// few calls a claim loop needs (see Example).
//
// # Model
//
// A queue holds lanes. A lane is a Valkey sorted set of job ids written at
// score 0 ("ZADD lane 0 id"). Job ids are branded ULIDs ("job_" + 26
// characters, see JobID), so byte order is mint order and a lane is FIFO
// with no second index. The payload is stored once, in the job's hash.
//
// The ring is a Valkey list of the lanes that are ready to be served: a lane
// is in the ring, exactly once, while it has pending jobs, is not parked and
// has concurrency headroom. Claim (wclaim) is one atomic script: it rotates
// the ring once ("LMOVE ring ring LEFT RIGHT") and serves that lane
//
//	K = min(weight, lane depth, glimit headroom, max, global budget, lane pace budget)
//
// heads ("ZPOPMIN lane K"), each under a lease whose deadline is the
// server's TIME plus the lease length (never the client's clock). A lane
// that becomes empty, saturated, or out of pace budget leaves the ring from
// its tail in O(1) (it was just rotated there). So a burst in one lane
// cannot starve the others: each ready lane is visited once per turn of the
// ring; and while a global rate binds, a lane of weight w gets about w times
// the share of a lane of weight 1. A claim may serve several lanes
// (ClaimRequest.Lanes): it then rotates on after each lane it served, each
// lane served exactly as a call of its own would, so one round trip and one
// script's fixed work (pause, due times, budgets) serve many one-message
// lanes (a broadcast's).
//
// # Weight, glimit and ordering
//
//   - Weight (1..1000, default 1) is how many jobs one turn of the ring may
//     hand out from a lane: the lane's share. It belongs to the group, not
//     to a queue: one store-wide hash, set once (Inspector.SetWeight), read
//     by every queue's claim, so a group's lane has the same weight in every
//     queue, including queues added later; weights apply within each queue
//     (a claim serves its queues in priority order). A turn cut short by the
//     claimer's max, the global budget or the lane's in-flight limit is
//     finished before the ring moves on (the lane stays at, or rejoins, the
//     ring's head, owing the rest), so the share holds while the global rate
//     binds and the budget refills one job at a time. A turn cut short by
//     the lane's pace keeps the rest too: parked until its next pace token,
//     the lane then rejoins the ring's head, so a weight raises a paced
//     lane's share as well, never beyond its pace.
//   - glimit (QueueConfig.LaneLimit, per lane Inspector.SetLaneLimit) caps the lane's
//     jobs in flight at once; a lane at its glimit leaves the ring and
//     rejoins when a job settles. K never exceeds the headroom.
//   - Ordered queues (QueueConfig.Ordered) serve a lane only while none of
//     its jobs are in flight: one turn hands one claimer up to K = min(weight,
//     glimit, ...) consecutive jobs, and the lane is not served again until
//     they have all settled. The claimer must process a batch in order and
//     Release the rest when one fails. This keeps one chat's messages in
//     order with any number of workers; weight then means "messages per turn"
//     rather than parallelism, and glimit only caps the batch.
//   - A retry (Nack with a delay) on an ordered queue puts the job back on its
//     lane at its place and parks the whole lane for the delay, so later jobs
//     cannot overtake it. On an unordered queue the job waits alone in the
//     delayed set.
//
// # Leases
//
// Each claimed job carries a lease token (the job's claim count). Ack,
// Extend, Release, Nack and Dead with a token that no longer holds the job
// (its lease expired, it was reclaimed and maybe claimed again) return
// ErrStaleLease and change nothing. Expired leases are reclaimed by server
// time inside Claim, a bounded number per call: the job returns to its lane
// at its place, in-flight drops exactly once, attempts + 1, and past
// MaxAttempts the job is dead-lettered with reason "lease expired". Each
// queue keeps a due time (at or before its earliest lease deadline, retry
// and park end), which a claim reads together with the pause in one
// command: the reclaim and promotion scans run only once it has passed.
//
// A job whose work was done under a lease since lost (a message delivered
// during a stall longer than its lease) is settled by what is known with
// AckLost: waiting again, it is acked at once; held by another claimer, it
// is marked delivered, and any end of that lease but an ack drops it,
// counted in the tally the mark stored (see LostAck); so it is counted
// once, never as cancelled nor failed, and never handed out again.
//
// A caller that counts settled jobs in its own keys (a fan-out's progress)
// passes Counting to Ack, Nack, Dead or DeadUntried: its SettleTally is
// kept in the settling call itself, so no crash between the two leaves a
// job settled but uncounted. For the dead-letterings no caller settles (a
// DeadLane sweep, a lease expired past MaxAttempts inside a Claim), a job
// carries a DeadTally from its enqueue (CountDead), which the
// dead-lettering script counts it in.
//
// A claimer that finished its jobs acks them in its next Claim
// (ClaimRequest.Ack): the acks and the claim are one atomic call and one
// round trip. Many claimers' acks at once (a process with many senders)
// go in one AckAll: one call, each ack with its own tally, what they share
// (the server's time, the send logs' expiries, the due times, the
// wake-ups) done once.
//
// # Delivery control
//
// WithGlobalRate caps the jobs all claimers of the store together take in
// any window (a sliding window on the server clock), however many processes
// claim. Budgets bound arrivals, not just claims: a send counts from its
// claim c (while in flight) until one window after its latest possible
// arrival, max(c, r - F), where r is its settle (ack, release, nack,
// dead-letter or lease expiry) and F the round-trip floor the claimer passes
// with the settle (Lease.Floor: the shortest request-to-answer time it
// recently saw; 0 for a lease expiry). The receiver got the request before
// the claimer got the answer it settles on, so with F = 0 no window of the
// receiver's holds more than the limit however long the network or the
// claimer took. With F > 0 the send left the receiver's count at r minus its
// answer's return leg, and a send claimed later arrives its forward leg after
// its claim: when each leg takes at least F/2 (an assumption about the
// receiver's network, exact for codemojex's emulator while its latency
// holds or rises, as it holds half its latency before counting a request
// and half after), a claim allowed at
// t >= max(c, r - F) + window arrives at least one window after this send
// did, so the limit holds; claimers at different distances from the receiver
// must share the assumption (each leg at least half of every claimer's
// floor): Store.ShareFloor publishes a claimer's floor and answers the
// smallest any live claimer published, the floor each should settle with. A wrong guess (a sudden drop in latency, an asymmetric route) lets
// the sends then settling count early: the receiver's rate error, honoured
// by the claimer, is its cost. What F buys: with a steady round trip a send
// holds its budget for about one window, where counting from r held it for
// a window plus the round trip (at most window ÷ (window + round trip) of
// the limit used). Pace and a queue's own budget count the same way. WithLanePace paces each lane (with rules by group
// prefix and per-lane overrides); pace state is shared by every queue of the
// store, so a chat's replies and notifications draw on one budget. A lane out
// of pace budget is parked until its next token; Inspector.Park parks a
// lane for a 429's retry_after (no cap); Inspector.Pause stops every queue. Parked lanes leave the
// ring and come back when due, promoted inside the claim script, a bounded
// number per call, so claims never scan parked lanes.
//
// A configured rate (WithGlobalRate, QueueConfig.Rate) is a ceiling, not a
// target: Store.LowerBudget halves a budget at once when the receiver shows
// a limit across every lane (codemojex: 429s from several chats) while the
// budget binds (its last window counts at least half its rate), and the
// budget climbs back a step at a time while nothing lowers it (additive
// increase, multiplicative decrease; LearnConfig, WithLearning). The learned
// rates live in Valkey ({T}:s:learned), so every claimer claims at
// min(configured, learned) (one HMGET per claim) and a restarted one starts
// from them; Inspector.Learned reads them with why and when they last went
// down.
//
// WithoutSendLimits is for a store whose jobs are not sends but that shares
// a tag with one (to share its weights): its claims ignore every pace,
// per-lane overrides included, and the global pause.
//
// A ClaimRequest names several queues in priority order: codemojex claims
// ["reply", "notify"], so a reply to a user's command is served before any
// broadcast, while both share the global and per-chat budgets; a queue's
// QueueConfig.MinShare keeps it that share of the global budget while it
// has work, so a later queue is never starved by an earlier one.
//
// When nothing is claimable, Claim says when to look again (RetryIn), and a
// Waiter blocks until a lane joins a ring (Pub/Sub), so idle workers do not
// poll.
//
// # Cancelling jobs
//
// Store.Cancel takes job ids (the caller keeps the ids it enqueued, e.g. a
// broadcast's copies) and, 500 per atomic script call, removes those still
// waiting: off their lane (or out of an unordered queue's delayed set), job
// hash deleted, pending count exact. A job in flight stays its claimer's
// but is marked cancelled: an ack settles it as delivered (it was sent),
// and any other end of its lease (a release, a retry, a dead-lettering,
// its expiry, its claimer found dead) drops it instead of queueing it again,
// so nothing a Cancel named is claimed after it returns. Dead letters
// stay. An optional Tally counter is incremented in the same call, and by
// each later drop of a marked job in the dropping call, so a caller's
// count of cancelled jobs cannot drift. A lane emptied this way keeps its ring slot until a claim
// rotates onto it and drops it in O(1), as after DeadLane, so a cancel
// never walks the ring.
//
// # Keys and cost
//
// Every key of a store starts with its hash tag ("{cm}" by default), so every
// script's keys share one slot and the scripts run on Valkey Cluster. See
// keys.go for the layout. Each script is atomic and costs O(K log n) per
// call plus bounded maintenance, independent of how many lanes exist. When
// lanes drain and their jobs are acked, the keyspace returns to its baseline:
// only non-default weights (and overrides) remain; send logs expire by
// themselves.
//
// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// each prefixed with the helpers of lua/common.lua it calls (scriptsrc.go),
// and run by EVALSHA with a fallback to EVAL on NOSCRIPT, so a server
// restart or SCRIPT FLUSH is invisible to callers.
package lanes
