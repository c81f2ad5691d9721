package notifier

import (
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Limits are Telegram's flood limits as the bot must respect them. Source:
// Telegram Bot FAQ, "My bot is hitting limits, how do I avoid this?": no more
// than about 30 messages per second overall, one message per second in a
// private chat, 20 messages per minute in a group. A zero rate field means no
// limit. Each budget's rate (GlobalPerSecond, ReplyPerSecond, PaidPerSecond)
// is a ceiling, not a target: the store claims at the rate each budget
// learned from Telegram's 429s across several chats (lanes.LearnConfig's
// defaults: halved at once, back up a twentieth every 5 s; the worker
// lowers them, docs/delivery.md "Budgets that learn").
type Limits struct {
	// GlobalPerSecond caps the bot's messages per second, all chats
	// together; with ReplyPerSecond set, only the bulk ones (queue
	// tgjob.QueueNotify: broadcast copies and other notifications), the
	// budget Telegram's Bot FAQ puts at "about 30 messages per second".
	GlobalPerSecond int
	// ReplyPerSecond, when > 0, gives replies (queue tgjob.QueueReply) a
	// budget of their own, apart from GlobalPerSecond: a broadcast at its
	// bulk limit then never slows replies below this cap. Telegram
	// publishes no figure for replies; grammY's "Scaling Up IV: Flood
	// Limits" states that the 30/s applies to bulk notifications only, not
	// to replies to users' messages. 0 means replies share
	// GlobalPerSecond with everything else.
	//
	// Whether Telegram counts replies in its bulk window is unknown
	// (docs/delivery.md, "Budgets that learn"), so replies and bulk
	// messages together start at GlobalPerSecond, which is safe either
	// way, and the bot learns more by probing: while replies or bulk
	// messages wait with that total spent, it raises the total (by 1, 2,
	// 4... messages/s, one raise per lanes.LearnConfig.Probe) up to
	// GlobalPerSecond + ReplyPerSecond; a 429 to a send above the last
	// total that held takes it back there (the worker calls
	// lanes.Store.RevertProbe) for lanes.LearnConfig.Hold. Against one
	// window that counts replies a probe costs one or two 429s per hold;
	// against a separate reply window the total reaches its ceiling in
	// about seven probe periods.
	ReplyPerSecond int
	// PaidPerSecond, when > 0, is the budget of paid broadcast copies
	// (queue tgjob.QueuePaid, sent with allow_paid_broadcast: Telegram
	// allows up to 1,000 messages/s for 0.1 Star each). It needs
	// ReplyPerSecond > 0: with one shared GlobalPerSecond the store's global
	// rate would hold paid copies to it too. 0: the paid queue exists but
	// has no budget of its own (nothing should be enqueued there).
	PaidPerSecond int
	// PrivatePerSecond caps messages per second to one private chat
	// (chat id > 0).
	PrivatePerSecond int
	// GroupPerMinute caps messages per minute to one group, supergroup or
	// channel (chat id < 0: lanes whose group starts with "-").
	GroupPerMinute int
	// ReplyLaneDepth bounds each chat's lane of the reply queue
	// (tgjob.QueueReply, lanes QueueConfig.MaxDepth): a reply to a chat
	// that already has that many replies waiting is refused, and Notify
	// returns lanes.ErrLaneFull (wrapped), so a chat flooding the bot
	// cannot queue hours of answers (the bot's handlers then hold its
	// update back until the lane drains: backpressure onto the chat's
	// updates, nothing dropped); other chats are not affected. 0 means
	// unbounded. The notify queue (notifications, broadcast copies: one per
	// chat per broadcast, any number of broadcasts queued) is never bounded.
	ReplyLaneDepth int
	// Slack is added to every window (1 s becomes 1 s + Slack). The lanes
	// budgets already bound arrivals, not claims: a send counts from its
	// claim until one window after its latest possible arrival at Telegram
	// (its ack minus the worker's round-trip floor, lanes.Lease.Floor; the
	// ack itself for a send with no answer), so no stalled worker can put
	// more than the limit into one of Telegram's windows, given each leg of
	// a round trip takes at least half the floor (docs/delivery.md). The
	// slack only covers the millisecond rounding of the server clock.
	// Negative means 0.
	Slack time.Duration
}

// DefaultSlack is the Slack of DefaultLimits: 10 ms, for the server
// clock's millisecond rounding (lanes scores sends in whole ms). Before the
// lanes budgets counted sends until their ack, a claim-time budget needed
// 100 ms here and still let rare stalls through as 429s.
const DefaultSlack = 10 * time.Millisecond

// BulkShare is the share of the one global budget (percent, at its learned
// rate) that bulk messages (tgjob.QueueNotify: broadcast copies and other
// notifications) keep while they wait, when replies share that budget
// (ReplyPerSecond 0): replies come first, but never take more than the
// rest of it (lanes.QueueConfig.MinShare). Without it a reply load above
// the budget starves every broadcast for as long as it lasts; in chaos
// seed 7 injected 429s halved the learned budget to 7-10/s, under the
// players' replies, and a broadcast's copies waited minutes (docs/chaos.md).
const BulkShare = 20

// DefaultMaxAttempts is the attempts after which a message that keeps
// failing transiently (5xx, timeouts, dropped connections) is dead-lettered.
const DefaultMaxAttempts = 8

// DefaultLimits returns Telegram's documented limits (30 messages/s overall,
// 1 message/s per private chat, 20 messages/min per group) with
// DefaultSlack, and unbounded lanes (the program bounds its reply lanes
// with REPLY_LANE_DEPTH).
func DefaultLimits() Limits {
	return Limits{GlobalPerSecond: 30, PrivatePerSecond: 1, GroupPerMinute: 20, Slack: DefaultSlack}
}

func (l Limits) stretch(d time.Duration) time.Duration { return d + max(l.Slack, 0) }

// StoreOptions returns the lanes.Store options for these limits: the
// queues (tgjob.QueueReply, tgjob.QueuePaid with PaidPerSecond per 1 s +
// Slack as its own budget and outside the global one, tgjob.QueueNotify)
// Ordered with maxAttempts (0 means DefaultMaxAttempts),
// WithGlobalRate(GlobalPerSecond per 1 s + Slack) with BulkShare of it
// kept for tgjob.QueueNotify; with ReplyPerSecond > 0 instead a budget per
// queue (reply ReplyPerSecond, notify GlobalPerSecond, each per 1 s +
// Slack) and a global one over both, GlobalPerSecond + ReplyPerSecond,
// probed from GlobalPerSecond (lanes.WithGlobalRateStart: see
// ReplyPerSecond), BulkShare of it kept for tgjob.QueueNotify; and
// WithLanePace(PrivatePerSecond per 1 s + Slack, with a
// PaceRule for prefix "-": GroupPerMinute per 1 min + Slack). Pacing is
// per group and shared by both queues, so a chat's replies and
// notifications draw on one budget. Append WithTag and the like.
func (l Limits) StoreOptions(maxAttempts int) []lanes.Option {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	qc := lanes.QueueConfig{Ordered: true, MaxAttempts: maxAttempts}
	rc := qc
	rc.MaxDepth = max(l.ReplyLaneDepth, 0)
	pc := qc
	pc.OutsideGlobal = true // "ignoring broadcasting limits" (Bot API)
	if l.PaidPerSecond > 0 {
		pc.Rate, pc.Window = l.PaidPerSecond, l.stretch(time.Second)
	}
	opts := []lanes.Option{
		lanes.WithQueue(tgjob.QueueReply, rc),
		lanes.WithQueue(tgjob.QueuePaid, pc),
		lanes.WithQueue(tgjob.QueueNotify, qc),
	}
	switch {
	case l.ReplyPerSecond > 0 && l.GlobalPerSecond > 0:
		// A budget per queue, and one over both probed from the bulk
		// rate (see ProbedStart), each shared by every process.
		reply, bulk := rc, qc // the reply lanes keep their depth bound
		reply.Rate, reply.Window = l.ReplyPerSecond, l.stretch(time.Second)
		bulk.Rate, bulk.Window, bulk.MinShare = l.GlobalPerSecond, l.stretch(time.Second), BulkShare
		opts = []lanes.Option{lanes.WithQueue(tgjob.QueueReply, reply), lanes.WithQueue(tgjob.QueuePaid, pc), lanes.WithQueue(tgjob.QueueNotify, bulk),
			lanes.WithGlobalRate(l.GlobalPerSecond+l.ReplyPerSecond, l.stretch(time.Second)), lanes.WithGlobalRateStart(l.GlobalPerSecond)}
	case l.ReplyPerSecond > 0:
		// No bulk limit: the replies' own budget alone.
		reply := rc
		reply.Rate, reply.Window = l.ReplyPerSecond, l.stretch(time.Second)
		opts = []lanes.Option{lanes.WithQueue(tgjob.QueueReply, reply), lanes.WithQueue(tgjob.QueuePaid, pc), lanes.WithQueue(tgjob.QueueNotify, qc)}
	case l.GlobalPerSecond > 0:
		// One budget for all: replies first, bulk keeps its share.
		bulk := qc
		bulk.MinShare = BulkShare
		opts = append(opts, lanes.WithQueue(tgjob.QueueNotify, bulk), lanes.WithGlobalRate(l.GlobalPerSecond, l.stretch(time.Second)))
	}
	var private, group lanes.Pace
	if l.PrivatePerSecond > 0 {
		private = lanes.Pace{Limit: l.PrivatePerSecond, Period: l.stretch(time.Second)}
	}
	if l.GroupPerMinute > 0 {
		group = lanes.Pace{Limit: l.GroupPerMinute, Period: l.stretch(time.Minute)}
	}
	// The rule also applies when group is zero (unpaced groups while
	// private chats are paced).
	return append(opts, lanes.WithLanePace(private, lanes.PaceRule{Prefix: "-", Pace: group}))
}

// NewStore returns the lanes.Store for the bot's messages on client c:
// l.StoreOptions(maxAttempts) followed by extra (e.g. lanes.WithTag). cmd/bot
// and tests configure the store once through it.
func NewStore(c valkey.Client, l Limits, maxAttempts int, extra ...lanes.Option) (*lanes.Store, error) {
	return lanes.New(c, append(l.StoreOptions(maxAttempts), extra...)...)
}

// BudgetName is the name the program gives the send budget of queue (a
// lanes.LearnedBudget's Queue), as /metrics labels it (budget="...") and
// /lanes shows it: "global" for the store's one rate (queue ""), "bulk"
// for tgjob.QueueNotify's own, else the queue's name ("reply", "paid").
func BudgetName(queue string) string {
	switch queue {
	case "":
		return "global"
	case tgjob.QueueNotify:
		return "bulk"
	}
	return queue
}
