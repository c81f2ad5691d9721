package notifier

import (
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/tgjob"
	"github.com/codemojex/codemojex/lanes"
)

// Limits are Telegram's flood limits as the bot must respect them. Source:
// Telegram Bot FAQ, "My bot is hitting limits, how do I avoid this?": no more
// than about 30 messages per second overall, one message per second in a
// private chat, 20 messages per minute in a group. A zero rate field means no
// limit.
type Limits struct {
	// GlobalPerSecond caps the bot's messages per second, all chats together.
	GlobalPerSecond int
	// PrivatePerSecond caps messages per second to one private chat
	// (chat id > 0).
	PrivatePerSecond int
	// GroupPerMinute caps messages per minute to one group, supergroup or
	// channel (chat id < 0: lanes whose group starts with "-").
	GroupPerMinute int
	// Slack is added to every window (1 s becomes 1 s + Slack), so that
	// jitter between claiming a job (when lanes counts it, on the Valkey
	// clock) and the request reaching Telegram (when Telegram counts it)
	// cannot put more messages in one of Telegram's windows than the
	// limit. The jitter is an absolute time (a slow HTTP round trip, a GC
	// pause, a re-dialled connection), so the slack is a duration, not a
	// fraction: it costs little on a 1-minute group window. Negative means
	// 0.
	Slack time.Duration
}

// DefaultSlack is the Slack of DefaultLimits: 100 ms. A private chat is
// then paced at one message per 1.1 s (0.91/s), the bot at 30 per 1.1 s
// (27/s) and a group at 20 per 60.1 s. Measured on a loaded 2-core host
// with the race detector: the claim-to-arrival delay usually varies by up
// to ~80 ms, so 50 ms (a 1.05 s window) regularly let the emulator count 31
// messages in a second at 30/s; rare stalls of ~300 ms still exceed 100 ms.
// No slack can bound a stall; the worker handles the resulting 429 (the
// chat is parked for retry_after, nothing is lost).
const DefaultSlack = 100 * time.Millisecond

// DefaultMaxAttempts is the attempts after which a message that keeps
// failing transiently (5xx, timeouts, dropped connections) is dead-lettered.
const DefaultMaxAttempts = 8

// DefaultLimits returns Telegram's documented limits (30 messages/s overall,
// 1 message/s per private chat, 20 messages/min per group) with
// DefaultSlack.
func DefaultLimits() Limits {
	return Limits{GlobalPerSecond: 30, PrivatePerSecond: 1, GroupPerMinute: 20, Slack: DefaultSlack}
}

func (l Limits) stretch(d time.Duration) time.Duration { return d + max(l.Slack, 0) }

// StoreOptions returns the lanes.Store options for these limits: both
// queues (tgjob.QueueReply, tgjob.QueueNotify) Ordered with maxAttempts (0
// means DefaultMaxAttempts), WithGlobalRate(GlobalPerSecond per 1 s +
// Slack), and WithLanePace(PrivatePerSecond per 1 s + Slack, with a
// PaceRule for prefix "-": GroupPerMinute per 1 min + Slack). Pacing is
// per group and shared by both queues, so a chat's replies and
// notifications draw on one budget. Append WithTag and the like.
func (l Limits) StoreOptions(maxAttempts int) []lanes.Option {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	qc := lanes.QueueConfig{Ordered: true, MaxAttempts: maxAttempts}
	opts := []lanes.Option{
		lanes.WithQueue(tgjob.QueueReply, qc),
		lanes.WithQueue(tgjob.QueueNotify, qc),
	}
	if l.GlobalPerSecond > 0 {
		opts = append(opts, lanes.WithGlobalRate(l.GlobalPerSecond, l.stretch(time.Second)))
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
