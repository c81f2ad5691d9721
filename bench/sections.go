package main

// sections is the one place a scenario of `make bench` is registered. Each
// entry is a section of docs/benchmarks.md, numbered in this order: its
// -only name, its title, what its rows measure and how their ratios are
// formed (markdown, printed under the table), and the function that runs
// it on a flushed server and adds its rows with t.add(measure, value,
// baseline, ratio(value, baseline)) and any chart it drew with t.chart.
//
// To add a row to a scenario: one more t.add in its function, and a line
// in its about. To add a scenario: write its function, then add an entry
// here (a new -only name; about says what is measured against what, and
// which side of the ratio is which).
func sections() []section {
	return []section{
		{
			name:  "throughput",
			title: "Lanes throughput against raw commands and asynq",
			about: `Jobs/s with 50 concurrent clients (` + "`-c`" + `) on 1,000 lanes, 64-byte payloads. The baselines
are the same server's ceiling for the simplest calls: ` + "`valkey-benchmark`" + ` (or ` + "`redis-benchmark`" + `) LPUSH and
EVALSHA of ` + "`return 1`" + ` (50 clients, no pipelining), and valkey-go calling that EVALSHA from the same 50
goroutines (valkey-go pipelines concurrent calls on its connections, so its row is the Go client's own
ceiling). Ratio: lanes jobs/s divided by each baseline's requests/s. An enqueue is one script call
of a few commands; a claim+ack is one script call (the ack rides on the next claim, ` + "`ClaimRequest.Ack`" + `)
of about twenty; the full cycle runs producers and consumers at once. Every lanes row is bound by
the server's time in the scripts (section 2), not by round trips.

The asynq rows run asynq (the version in bench/go.mod) on the same server with the same clients:
its enqueue, its processing with a no-op handler at concurrency 50, and the full cycle. Ratio:
lanes jobs/s divided by asynq's. asynq's server polls every millisecond and its enqueue is one
short script, so its rows gain most from a quiet machine and move most with the load.`,
			run: benchThroughput,
		},
		{
			name:  "srvtime",
			title: "Server time per claim",
			about: `What one claim costs the server, network and client excluded: INFO commandstats' time per call of
the claim script (Max 1, 1,000 lanes with work, no ack, calls made one at a time from one client)
divided by its time per EVALSHA ` + "`return 1`" + ` measured the same way (lower is better). A claim runs about
fourteen commands (TIME, the pause and due times, the ring rotation, the lane's in-flight, limit,
park, pace and weight, the pop, the lease, the counts); the expired-lease, retry and park scans run
only once the queue's due time has passed. On a loaded machine the µs are inflated; the ratio is
what to compare.`,
			run: benchServerTime,
		},
		{
			name:  "latency",
			title: "Claim latency by lane count",
			about: `One claimer's Claim call (one job, released untimed so its lane stays non-empty), p50 and p99 over
3,000 calls after a warm-up, with 10, 10,000 and 100,000 non-empty lanes. Ratio: the p50 with n
lanes divided by the p50 with 10 lanes. The ring rotates in O(1), so a claim costs the same
whatever the number of lanes waiting: the ratios are noise around 1.`,
			run: benchClaimLatency,
		},
		{
			name:  "fairness",
			title: "A burst in one chat against a FIFO",
			about: `Chat 1 gets a burst of 1,000 messages at once, then 10 quiet chats each send a message every
250 ms for 5 s, all on one queue class, with the scaled-up limits and 16 senders. codemojex is the
real notifier, lanes and worker; the FIFO baseline is one Valkey list popped in order by a loop that
waits for the same global and per-chat budgets and hands messages to the same number of senders
(go-telegram/bot, same emulator and limits). First row: the quiet chats' latency from enqueue to
delivery, codemojex's p50 divided by the FIFO's (lower is better): the FIFO's head waits for chat
1's budget, so every quiet chat waits behind the burst, while with lanes the quiet chats are served
on the next turn of the ring. Second row: when the burst itself was fully delivered, codemojex
divided by the FIFO (the limits are the same, so about 1). The chart (log scale) shows messages
delivered per chat over time, codemojex beside the FIFO; the README shows it too.`,
			run: benchFairness,
		},
		{
			name:  "weights",
			title: "Weighted share while the global rate binds",
			about: `30 chats each have a backlog of 400 messages, the global rate (300/s) binds, and one chat has
weight 5 (set once with ` + "`Inspector.SetWeight`" + `, for every queue). Over a 6 s run (counted from 1 s after
the start), the weighted chat's delivered messages divided by the median other chat's: a weight-5 lane
is owed 5 messages per turn of the ring, so 5× is the promise. Measured twice, with a backlog of
replies and with one of notifications, each on a fresh emulator and empty queues. The worker
spreads its claims at the global rate (` + "`worker.Config.ClaimRate`" + `), so a weighted chat's ordered batch
gets its share. The chart shows each chat's count in the replies run.`,
			run: benchWeights,
		},
		{
			name:  "budget",
			title: "Telegram budget use with one and two worker processes",
			about: `300 chats with 15 messages each, delivered by one, then two, worker processes (this program
re-run as ` + "`-role worker`" + `, each its own OS process) sharing the global limit in Valkey. Delivered msg/s
(the least-squares slope of the cumulative count over the steady window, from 1 s after the first
delivery: the budget refills in steps) divided by the configured global limit (its column says "limit": a setting, not a measured run); the row also
counts the emulator's 429s (the promise: zero) and its busiest 1 s window. lanes counts a send
against the global budget from its claim until one window after it settles, plus the notifier's
slack (` + "`notifier.DefaultSlack`" + `), so a ratio just under 1 with no 429 is the goal.`,
			run: benchBudget,
		},
		{
			name:  "broadcast",
			title: "Broadcast enqueue",
			about: `` + "`notifier.Broadcast`" + ` of one message to 100,000 chats against a raw baseline: the same payloads
encoded and RPUSHed onto one list, 1,000 per command, all in one pipelined round trip. Three pairs
(broadcast, then baseline, on an emptied server); the row shows the medians, the ratio broadcast
time divided by raw time (lower is better) with the pairs' spread, and the server's time in the
enqueue script per copy (INFO commandstats). The broadcast encodes the message once, splices
each chat id in, and enqueues 5,000 chats per round trip (ten 500-job script calls); each job is
two writes (its hash and its lane's sorted set) where the baseline is one list element, so a few
times the baseline is the floor of this layout.`,
			run: benchBroadcast,
		},
		{
			name:  "memory",
			title: "Valkey memory per pending job",
			about: `10,000 pending jobs on 1,000 lanes: the sum of MEMORY USAGE (SAMPLES 0, exact) over the queue's
keys, less the 64-byte payloads, per job, divided by the same for a raw list of the same payloads
(lower is better). A pending job is its hash and its id in its lane's sorted set; per-lane and
per-queue keys are shared by the jobs. Second row: the keyspace after every job is claimed and
acked against before the enqueue; the promise is +0 keys (nothing grows without bound).`,
			run: benchMemory,
		},
		{
			name:  "intake",
			title: "Update intake",
			about: `The update intake, from recorded to handled: ` + "`go test -run '^$' -bench '^BenchmarkIntake$' -benchtime 1x ./internal/app/`" + `,
run by this program in the main module (it reports its figures with ` + "`b.ReportMetric`" + `; its own servers
come from the same PATH). Each handler process is the real bot (` + "`cmd/bot`" + `, ` + "`BOT_ROLE=handler`" + `) as an
OS process of its own, on a Valkey server of its own; 6,000 ` + "`/help`" + ` from 2,000 chats are recorded up
front and the window runs from the first update seen handled to the last. The baseline is one
process with ` + "`HANDLERS=1`" + `: a single handler loop on the same lanes queue (claim carrying the previous
ack, handle, finish). Ratios: updates/s of one process with the default ` + "`HANDLERS`" + ` divided by the
baseline's, and two such processes divided by one (a second process only helps where it brings
CPUs of its own: on a 2-CPU machine Valkey and the handlers share them); CPU per handled update
of Valkey (INFO cpu) and of the handler process (/proc), default ` + "`HANDLERS`" + ` divided by ` + "`HANDLERS=1`" + `
(lower is better). ` + "`HANDLERS=1`" + ` is bound by round-trip latency, so its rate, and every ratio over it,
moves with the machine's load. The fairness row: a 3,000-update raid from one group is recorded,
then ten private chats' ` + "`/start`" + `; the worst time from a ` + "`/start`" + `'s recording to its handling, default
` + "`HANDLERS`" + ` divided by ` + "`HANDLERS=1`" + ` (both are fair: the ring visits each chat in turn). The webhook row is a
check (every POST answered 200, each distinct update recorded once) with its latency; it has no
baseline.`,
			run: benchIntake,
		},
		{
			name:  "floods",
			title: "Floods: the intake limits and what delivered chats leave",
			about: `The intake limits (docs/floods.md) and the memory kept after delivery: ` + "`go test -run '^$' -bench '^BenchmarkFlood$' -benchtime 1x ./internal/app/`" + `,
run by this program in the main module (the real app in process, the emulator, a Valkey server of its own per part).
The flood rows are checks against the issue's goals, each judged from this run's figures in the ratio column ("met" or
"not met"); the first checks that every one of the 3,000 updates was either handled or dropped (what the bot would
do without the limits is not measured here): one user sends 3,000 ` + "`/help`" + ` in 3 s to a bot
at Telegram's own limits; bytes are the sum of MEMORY USAGE over the bot's keys. Memory at rest: 100,000 chats
(` + "`CODEMOJEX_BENCH_CHATS`" + ` to change) each send one message, every reply delivered, with stored languages: their users'
` + "`language_code`" + `s are en, ru, es, pt-BR and fa in turn (the four not English are recorded for broadcasts,
` + "`{T}:app:ulang`" + `), and every 4th chat sends ` + "`/language <code>`" + ` (a stored choice, ` + "`{T}:app:lang`" + `) where the others send
` + "`/start`" + ` (the row gives both counts, read from Valkey); then 10,000 notifications that
are never edited. The cost rows are ratios, limits on (the defaults) divided by off (` + "`FLOOD_WINDOW=0`" + `), medians of
alternating runs in the same sitting. The whole normal path (the issue's goal, within 5%): a ` + "`BOT_ROLE=poller`" + ` app and a
` + "`BOT_ROLE=handler`" + ` app (default ` + "`HANDLERS`" + `) in process on a server of their own, no worker; 6,000 ` + "`/help`" + ` from 2,000
private chats (3 each, under the limits) are injected into the emulator, fetched by getUpdates, recorded (the limits'
check rides in that call), claimed, handled, their replies enqueued and their done marks written; the window runs from
the first injection to the last done mark, and Valkey's CPU (INFO cpu, used_cpu_user + used_cpu_sys) over it is
divided by the 6,000 updates; seven runs each, and the ratio column is the median of each on run's ratio to the off
run just before it (the same moment's load), the ratio of the medians beside it; the goal (within 5%) is judged on the
pairs' median of the CPU row. The record step alone: 20,000 updates
(10 per chat) recorded in batches of 100 by ` + "`Inbox.Accept`" + ` (the record and the enqueue on the update queue, nothing
handled), seven runs each, the same ratios. The limits
add work to the record only, so the record step's ratio is theirs on that step and the whole path's is what they cost
an update end to end. On the shared 2-CPU machine the whole path's updates/s move with the load by tens of per cent
between runs (the log lists each run): its CPU per update is the steadier figure. The last row: 30 members of a group
talk among themselves, 3,000 plain messages none addressed to the bot (what a bot with privacy mode off sees), fetched by
a default app at Telegram's limits; what the bot does not act on is dropped before it is recorded (docs/floods.md), so
the check asks every message dropped, no byte added (the polling's own offset, lease, heartbeat and the senders' floors
aside) and no reply; Valkey's CPU over the window (first injection to the last message confirmed) is a figure, the
poller's and the idle loops' work included.`,
			run: benchFloods,
		},
		{
			name:  "delivery",
			title: "Delivery at Telegram's latency: senders from the budget",
			about: `The emulator answers every request after 0, 100, 300 or 1,000 ms (` + "`tgemu.WithLatency`" + `: half before
it counts the message, half after), with a global limit of 30/s and of 1,000/s (per-chat limit 100/s
so the global one binds; one message per chat, as a broadcast's copies), one and two worker processes (this program re-run as ` + "`-role worker`" + `). codemojex: the worker
sizing its senders from the budget (rate × measured hold time × 1.25 + 2, at most ` + "`worker.DefaultSenders`" + `,
1,536) and settling each answered send with its round-trip floor (the shortest round trip of the last 30 s), so
lanes counts a send from its latest possible arrival (settle − floor) until one window later; baseline:
the fixed pool of 8 senders the worker had before (` + "`Senders = MinSenders = 8`" + `), in the same run.
Delivered ÷ limit is the least-squares slope of the deliveries over three steps of the budget (one
window plus the latency each), from 1 s after the first delivery; the ratio column divides
codemojex's rate by the baseline's. The baseline's ceiling at latency L is 8 ÷ L messages/s; counting
from the arrival leaves codemojex's at about the limit whatever the latency (counted from the answer, as
before the round-trip floor, it was window ÷ (window + L): 0.91 at 100 ms, 0.77 at 300 ms, 0.50 at 1 s),
and the 429 column says the emulator's limit, counted on arrival, was never exceeded. CPU per delivered
message: the worker processes' user+system time (whole run, warm-up included) plus the server's
(INFO cpu), over every message delivered in the run (lower is better). Memory and sockets: the
worker process's VmRSS and its open sockets (Valkey's included) at the end of the window.`,
			run: benchDelivery,
		},
		{
			name:  "replies",
			title: "Replies during a broadcast: two budgets",
			about: `A 10,000-chat broadcast at the bulk limit (30/s) while 100 chats each get a reply per second (100/s), for
8 s, one worker process, the emulator enforcing 30/s for bulk, 100/s for replies (` + "`tgemu.Limits.Reply`" + `) and
1/s per chat. Reply latency from its enqueue to the emulator's acceptance, p50 and p99. A reply not delivered
by the end (the worker stopped 1 s after the last enqueue) has no latency, only the time it had waited by then: a
percentile whose rank falls among such replies is printed as that lower bound ("≥ …, not delivered by the end"), never
as a figure, and a ratio over it as the bound it allows ("≤ …"). codemojex: replies on a budget of their own (` + "`TELEGRAM_REPLY_RATE=100`" + `); baseline:
one shared budget (` + "`TELEGRAM_REPLY_RATE=0`" + `, the bot before), in the same run; the ratio divides the p99s
(lower is better).`,
			run: benchReplyDuringBroadcast,
		},
		{
			name:  "paid",
			title: "A paid broadcast at 1,000/s with replies during it",
			about: `One worker process (this program re-run as ` + "`-role worker`" + `) with ` + "`TELEGRAM_PAID_BROADCAST_RATE=1000`" + `
(` + "`notifier.Limits.PaidPerSecond`" + `), ` + "`TELEGRAM_GLOBAL_RATE=30`" + `, ` + "`TELEGRAM_REPLY_RATE=100`" + ` and 1/s per chat; a paid
broadcast to 20,000 chats enqueued with ` + "`notifier.Broadcast`" + ` (` + "`Message.Paid`" + `), as the app does, while 50 other
chats each get a reply once a second. The emulator enforces Telegram's limits (30/s bulk, 1/s per chat, 1,000/s
for sends with ` + "`allow_paid_broadcast`" + `, ` + "`tgemu.Limits.Paid`" + `; replies on a window of 130/s) and answers every
request after 300 ms (` + "`tgemu.WithLatency`" + `). First rows: the time from the start of the enqueue to the last
copy's acceptance divided by the ideal 20 s (the baseline column says "limit": 20,000 copies at the paid rate, not a
measured run; lower is better; 1 is the paid rate met exactly), with the copies
delivered, the 429s and the paid flag the emulator recorded on each message (every copy must carry it, no
reply may). Measured twice, each on a fresh emulator and an emptied server: the worker's ` + "`ClaimRate`" + ` as
` + "`internal/app`" + ` sets it (global + reply + paid rate, 1,130/s, at most 30 s), and the baseline with the paid rate
left out (130/s, as the app had it first; a run that cannot finish within 10 s is stopped and its time projected
from its copies so far: its figure and ratio then say "projection"). With each send counted from its latest possible arrival (the delivery
section), the paid budget is not capped below its rate at 300 ms. Last rows: the
replies enqueued in the first 10 s of the broadcast, enqueue to acceptance, p50 and p99 (a reply not delivered
by the run's end, 2 s after the last copy or after the 10 s, has only a lower bound, printed as such, as in the
replies section), in each run against the
same replies without a broadcast (the baseline, same worker, same 10 s); the promise is within a second. A
chat's lane is paced at 1 message per window (plus 10 ms of slack), counted from the send's latest possible
arrival, so a chat gets about 1 message/s at any latency (counted from the answer it got about 0.77/s at
300 ms, and a reply a second built a backlog); the ratio (p99 with the broadcast ÷ without) is what the
broadcast adds.`,
			run: benchPaidBroadcast,
		},
		{
			name:  "lazy",
			title: "Lazy broadcasts at audience scale: what a start costs, and delivery",
			about: `Issue 27's figures. A synthetic audience of 1,000 and of 1,000,000 chats, written straight into the
audience's buckets (` + "`chats.Keys.AudienceBucket`" + `, pipelined SADD; ids from 1,000,000,000 up, spread over the
1,024 buckets), and a 1,000-character broadcast (one part), free, started while nothing sends. Lazy, as the Send
tap starts it now: ` + "`notifier.Filler.Start`" + ` over ` + "`chats.Audience`" + ` (its record with the text once and a cursor,
and its first window of copies on the lanes: one step of ` + "`lanes.MaxCursorItems`" + ` at the bulk rate of 30/s).
Baseline, eager, as the app did before: every chat id read (` + "`chats.Audience.Chats`" + `), then
` + "`notifier.Notifier.Broadcast`" + ` (one job with the whole text per copy), at the same audiences. Each start runs
in a process of its own (this program re-run as ` + "`-role start`" + `) on an emptied server (FLUSHALL SYNC) with the scripts already
loaded (a one-chat broadcast of each kind under another tag first). Bytes per pending copy: INFO memory
` + "`used_memory`" + ` after the start less before it (the audience already written), divided by the copies planned
(the audience); the lazy figure is its record plus its window amortized over the audience, so the goal (≤ 2 B)
is judged at 1,000,000. First copy: from the start call (the child's clock just before it) to the queue's
pending count first seen above 0 (this process polls it every 1 ms on another connection: a copy on its lane,
claimable). Peak RSS: the child's VmHWM (/proc/self/status) read once the start returned: the Go runtime,
client and binary included (its rusage max RSS would not do: Linux counts in it the parent's RSS at the exec).
Ratios: lazy ÷ eager (lower is better).

Delivery: a paid broadcast of the same text to 20,000 such chats through the paid section's rig (one worker
process, this program as ` + "`-role worker -fill`" + `: the broadcast filler runs beside the worker as ` + "`internal/app`" + `
runs them; ` + "`TELEGRAM_PAID_BROADCAST_RATE=1000`" + `, ClaimRate 1,130/s; the emulator at Telegram's limits, 1,000/s
paid, answering after 300 ms), started in this process as the Send tap does, lazy then eager, three
alternating pairs, each run on a fresh emulator and a flushed server; each figure is the median of its three
runs (all listed). Delivered ÷ limit: the least-squares slope of the copies' acceptances from 1 s after the
first, over 1,000/s; ratio lazy ÷ eager. CPU per delivered copy: the worker process's user + system time
(/proc/<pid>/stat) plus Valkey's (INFO cpu; the server emptied with FLUSHALL SYNC and MEMORY PURGE before the
runs: Valkey 8 frees a plain FLUSHALL in a background thread, and freeing the eager start's 1.7 GB then counted
as the first run's), from the start call to the last copy, over the copies delivered (lower is better); the note under this section splits Valkey's time by command (INFO commandstats).
` + "`CODEMOJEX_BENCH_PROFILE=<dir>`" + ` has the first pair's worker processes write CPU profiles there
(` + "`go tool pprof -top`" + `); ` + "`CODEMOJEX_BENCH_LAZY_SIZES`" + ` sets the start rows' audiences ("0": none), ` + "`CODEMOJEX_BENCH_LAZY_PAIRS`" + ` the delivery's alternating runs (3) and ` + "`CODEMOJEX_BENCH_LAZY_DELIVERY`" + ` its modes ("lazy": that mode's runs only logged, with Valkey's calls per copy by command).`,
			run: benchLazy,
		},
		{
			name:  "chatter",
			title: "A group's conversation against the same count of commands",
			about: `Issue 28: updates the bot ignores are confirmed and dropped before they are recorded. ` + "`go test -run '^$' -bench '^BenchmarkFlood$' -benchtime 1x ./internal/app/`" + ` with
` + "`CODEMOJEX_BENCH_FLOOD_PARTS=chatter`" + `, run by this program in the main module: a default app (poller, handlers and
worker in process, ` + "`TELEGRAM_GLOBAL_RATE=30`" + `, 1/s per chat, 20/min per group) against the emulator at Telegram's
limits, on a Valkey server of its own. 30 members of one group send 3,000 messages injected at once: plain
conversation none addressed to the bot (what a bot with privacy mode off sees: text, emoji, a command for another
bot, an unknown command, a mention of someone else); baseline: the same 3,000 messages from the same members as
` + "`/help`" + `, on a fresh server and emulator in the same run (most of them dropped by the flood limits, which
record them first: what the same traffic costs when the bot acts on it). The window runs from the first injection
to the last update confirmed (ignored, handled or dropped); the baseline's replies still queued then are counted,
their sending is outside its window. Valkey CPU is INFO cpu (the server's whole time, the polling's and the idle
loops' included), the commands' time INFO commandstats' usec summed; bytes are the MEMORY USAGE of the bot's keys less
the polling's own state, and INFO used_memory's delta (which moves with the allocator and client buffers, so it can
fall). Ratios: conversation ÷ ` + "`/help`" + ` (lower is better); the goals are 3,000 dropped unrecorded, 0 B and 0 replies.`,
			run: benchChatter,
		},
		{
			name:  "learned",
			title: "Budgets that learn: a reply burst against one global window",
			about: `Issue 28 (docs/delivery.md, "Budgets that learn"). The emulator counts every send, replies included, in
one global window (` + "`tgemu.Limits.Global`" + ` at 30/s, then 50/s, ` + "`Replies: tgemu.RepliesInGlobal`" + `, no reply
window), 1/s per chat, and answers every request after 300 ms (` + "`tgemu.WithLatency`" + `). 40 chats each have 10
replies queued at once (400, ` + "`notifier.Reply`" + `); one worker process (this program as ` + "`-role worker`" + `) sends them.
codemojex: the default config (` + "`TELEGRAM_GLOBAL_RATE=30`" + `, ` + "`TELEGRAM_REPLY_RATE=100`" + ` apart, ` + "`TELEGRAM_CHAT_RATE=1`" + `,
senders from the budget up to ` + "`worker.DefaultSenders`" + `, claims at global + reply as ` + "`internal/app`" + ` sets them): replies
and bulk together start at the bulk rate, 30/s, and are raised only while replies wait with that total spent (by 1,
2, 4... per ` + "`lanes.LearnConfig.Probe`" + `, 1.5 s, up to 130/s); a 429 to a send above the last total that held takes
it back there for ` + "`LearnConfig.Hold`" + ` (` + "`lanes.WithGlobalRateStart`" + `, ` + "`Store.RevertProbe`" + `; default ` + "`lanes.LearnConfig`" + `). Baseline, same run: a fixed rate that knows the window
(` + "`TELEGRAM_REPLY_RATE=0`" + `, ` + "`TELEGRAM_GLOBAL_RATE`" + ` = the window): learning has no off switch
(` + "`lanes.WithLearning`" + `'s zero value is the defaults), so the baseline is what a user who knew the limit would
configure. Each run on a fresh emulator and a flushed server. Sends are the sendMessage requests the emulator
processed (accepted or 429); 429s per 1,000 sends over the whole run (goal ≤ 5) and those after the first 10 s from the
first send (goal 0); the budgets' learned rates at the end (` + "`Inspector.Learned`" + `: learned/configured; global is
replies and bulk together).
Delivered ÷ true limit: the 400 replies over the time from the first send to the last acceptance, divided by the
window; in brackets divided by what the burst can take at all, the true limit of this burst: 40 chats at
Telegram's 1/s each is 40/s, below the 50/s window (goal ≥ 0.9 of the bracket: at the 50/s window no sender can
reach 0.9 of the window with 40 chats). Ratio: codemojex's rate ÷ the baseline's. The last row is the other
reading: the emulator keeps replies apart from the 30/s bulk window (` + "`Replies: tgemu.RepliesApart`" + `) with a reply window
of 200/s, and 300 chats with 40 replies each keep replies waiting; it reports the time from the first send to the
end of the first 1 s window in which at least 90 replies were accepted (0.9 × the lower of the reply ceiling,
` + "`TELEGRAM_REPLY_RATE`" + `=100, and the window; goal ≤ 60 s, no 429).`,
			run: benchLearned,
		},
		{
			name:  "kill",
			title: "kill -9 with a send in flight: the resend",
			about: `Issue 28: work claimed by a process that died resumes within about 3 s, however long the lease
(docs/operations.md: every worker beats its heart and sweeps every 0.2 s, a claimer unheard for 2 s,
` + "`consumer.DefaultLivenessTTL`" + `, has its jobs put back by any live process, its send counted in the chat's pace
from its last beat, not from the recovery). Run it as the issue measured it: two busy loops beside it
(` + "`yes > /dev/null &`" + ` twice). 20 kills, each on a flushed server and
a fresh emulator at Telegram's limits: worker process A (this program as ` + "`-role worker`" + `, default lease 30 s)
claims the one message and sends it, and the emulator holds that request 60 s before processing it
(` + "`tgemu.FaultDelay`" + `: Telegram has not taken it); a second worker process B starts, and 1 s later A gets SIGKILL
(its held request is then cancelled, never processed). Figure: kill to the emulator's acceptance of the message
(B's resend), p50 and p100 over the 20 kills, with the sendMessage requests for the message in all (the held
ones included: 2 a kill means one resend each). Baseline: the 30 s lease, what a kill cost before (a setting,
not a run). The second row is the updates' side, with the real bot (` + "`cmd/bot`" + ` built from this checkout): a
` + "`BOT_ROLE=poller`" + ` process and handler process A; the emulator holds A's first answerCallbackQuery 60 s (A's
handling of a tap is in flight: the handler answers a tap itself, at most 5 s); once A's answer is held, handler B
starts, and 1 s later A gets SIGKILL. Figure: kill to the emulator's processing of B's answer to the same tap (the
update recovered from A and handled again), p50 and p100 over 20 kills; baseline ` + "`HANDLER_LEASE`" + `'s 30 s default.`,
			run: benchKill,
		},
		{
			name:  "jitter",
			title: "Delivery when Telegram's latency jitters",
			about: `Issue 28: the whole budget at real latency when it is not steady. The delivery section's rig (a
backlog of one message per chat, 1 and 2 worker processes, this program as ` + "`-role worker`" + ` with senders from the
budget up to ` + "`worker.DefaultSenders`" + `; per-chat limit 100/s so the global one binds; delivered ÷ limit the
least-squares slope over three steps of the budget from 1 s after the first delivery) at Telegram's 30/s, with
replies (` + "`notifier.Reply`" + `, reply_parameters set): sharing the one global budget (the worker's reply rate 0, the
emulator counting replies in its global window), or on a budget of their own (reply rate 30, the emulator's reply
window of 30/s apart, ` + "`tgemu.RepliesApart`" + `). The emulator answers after 0, 100, 300 or 1,000 ms, jittering
±50% (` + "`tgemu.WithJitter(0.5)`" + `: the way there and the way back each uniform within ±50% of their half, per
request); baseline: the same cell with the latency steady, run right after it. Sends are the sendMessage requests
the emulator processed over the whole run, warm-up included. Goal: ≥ 0.95 of the limit and ≤ 1 × 429 per 1,000
sends in every jittering cell; the ratio column divides the jittering rate by the steady one and judges the goal.
It also gives the bound of an ideal sender (bench/jitterbound.go, simulated, seeded): one that claims at a
perfectly regular pace with no CPU or queue in the way and, like every sender, does not know a request's way there
before the answer comes back; the highest such pace (in 0.1/s steps) whose 429s from the emulator's sliding
window stay within 1 per 1,000 (the emulator's penalty after a 429 left out, so the real bound is lower still).
Where the bound is under 0.95 the goal is out of reach of a sender at a steady pace against a strict sliding
window (the jitter of the way there alone brings 31 arrivals into some second), and a sender that bunches its
claims fills some windows fuller still. The host is the shared 2-CPU machine as it is (no
busy loops added).`,
			run: benchJitter,
		},
		{
			name:  "twobots",
			title: "Two bots on one Valkey Cluster: one broadcasts, the other's replies",
			about: `Issue 27: several bots on one cluster, each in its own slot. The real bot (` + "`cmd/bot`" + `, built by this
section with ` + "`go build`" + ` in the checkout) runs as two OS processes, bot A and bot B, each against an emulator
of its own (two tokens; Telegram's limits: 30/s bulk, 1/s per chat, 1,000/s paid, replies on a window of their
own; answering at once), on one Valkey Cluster of 3 primaries and no replicas (` + "`valkeyserver.StartClusterWith`" + `),
both with the default rates and ` + "`TELEGRAM_PAID_BROADCAST_RATE=1000`" + `. ` + "`VALKEY_KEY_TAG`" + ` is ` + "`bot-1`" + ` for A and, for B, the
first ` + "`bot-N`" + ` whose hash slot (CLUSTER KEYSLOT) a primary other than A's owns (CLUSTER NODES); the first row
checks that, and that a SCAN of every node after the run finds each tag's keys on its tag's primary only.
B's audience is 40,000 synthetic chats written straight into its audience's buckets (as the lazy section writes
them), plus its admin. A's 40 users each send ` + "`/help`" + ` every 2 s (20/s in all, far below A's limits) from
the start to the end: 10 s of warm-up (in no phase), 30 s while B idles, then while B's admin sends
` + "`/broadcast`" + ` with a 1,000-character text and taps 💫 Send paid (40,001 paid copies: about 40 s at 1,000/s),
then, 2 s after B's last copy, 15 s while B idles again. Reply latency: a ` + "`/help`" + ` injected into A's emulator
to A's reply accepted by it (the k-th ` + "`/help`" + ` of a chat paired with the chat's k-th reply; a chat with more
replies than ` + "`/help`" + ` fails the run), counted in the phase it was sent in: B broadcasting (its first paid
copy to its last) against B idle (both idle phases together; the preview and tap, and the settle, count in
neither). Ratio: p99 while B broadcasts ÷ p99 while B idles (lower is better), the p50s' beside it; the goal,
within 1.2×, is "unaffected" with room for a shared host's noise: the row prints each idle phase's p99, which
shows how far it moves with no broadcast at all. Valkey CPU per primary: INFO cpu (used_cpu_sys +
used_cpu_user) of each node, read at the phases' edges, per second of wall time, with the commands each ran per
second (INFO commandstats, the scripts' own commands included); ratio broadcast ÷ idle, and each primary's share
of what the cluster's CPU grew by during the broadcast: the goal is that the broadcast lands on B's primary
(≥ 90% of the growth there; the other two rows show what moved elsewhere: their commands per second, and
their CPU, which also moves with how busy the host's CPUs are). The broadcast's row is its delivered rate (the least-squares slope of the copies'
acceptances from 1 s after the first) over the paid limit. The notes give the host's busy share and each bot
process's CPU in both phases (the two bots, the two emulators in this process and the three nodes share the
host's CPUs, so A's latency carries what B's broadcast costs the machine as well as the cluster), and A's worst
reply in each 5 s of the run.`,
			run: benchTwoBots,
		},
		{
			name:  "languages",
			title: "What the players' languages cost the handlers",
			about: `Issue 29's measured row: handler CPU per update with localization vs without (goal: within 5%). Every text
a player sees comes from the catalog (go-i18n), English's too, so "without" is measured two ways. End to end:
` + "`go test -run '^$' -bench '^BenchmarkHandlerLanguages$' -benchtime 1x ./internal/app/`" + `, run by this program in the main
module: the real bot (` + "`cmd/bot`" + `, ` + "`BOT_ROLE=handler`" + `, default ` + "`HANDLERS`" + `) as an OS process of its own on a Valkey server of
its own, no worker; 2,000 private chats each play a game (` + "`/play`" + `, three typed guesses, each answered and the board
re-rendered, ` + "`/top`" + `), 10,000 updates recorded up front, the window from the first update seen handled to the last.
The baseline's players have ` + "`language_code`" + ` en and no choice (English texts, nothing recorded); the measured side's
have ru and fa by turns, half of them a stored ` + "`/language`" + ` choice of the other language (the choice is read in every
update's pipeline anyway; a non-English code is recorded for broadcasts by the process's first update of each
user; Persian numbers are written in its digits). Runs alternate, English then localized, five pairs; the ratio
is the median of each pair's ratio (lower is better), the ratio of the medians beside it; the handler process's
CPU is /proc's (10 ms ticks: about 0.3% of a run). In process: ` + "`BenchmarkGuessTexts`" + ` (internal/gameui, 20,000
iterations a run, five rounds of the four variants in turn, each variant's median) renders what a typed guess renders (its answer and the board) from package game's English
(no catalog: the bot before localization) and from the catalog in English, Russian and Persian; the difference
over the English run's handler CPU per update is the catalog's share (a guess renders the most of the game's
updates, so over this mix it is an upper bound).`,
			run: benchLanguages,
		},
	}
}

// sectionNames are the -only names, in order.
func sectionNames() []string {
	var names []string
	for _, s := range sections() {
		names = append(names, s.name)
	}
	return names
}
