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
	// Margin stretches every window by this fraction (0.05: a 1 s window
	// becomes 1.05 s), so jitter between claiming a job (when lanes counts
	// it, on the Valkey clock) and the request reaching Telegram (when
	// Telegram counts it) cannot put two requests closer than the limit. A
	// private chat at 1/s is then paced at one message per 1.05 s; 50 ms is
	// far above the claim-to-send jitter on one host and costs 5% of
	// throughput. Negative values are treated as 0.
	Margin float64
}

// DefaultMargin is the Margin of DefaultLimits.
const DefaultMargin = 0.05

// DefaultMaxAttempts is the attempts after which a message that keeps
// failing transiently (5xx, timeouts, dropped connections) is dead-lettered.
const DefaultMaxAttempts = 8

// DefaultLimits returns Telegram's documented limits (30 messages/s overall,
// 1 message/s per private chat, 20 messages/min per group) with
// DefaultMargin.
func DefaultLimits() Limits {
	return Limits{GlobalPerSecond: 30, PrivatePerSecond: 1, GroupPerMinute: 20, Margin: DefaultMargin}
}

func (l Limits) stretch(d time.Duration) time.Duration {
	if l.Margin <= 0 {
		return d
	}
	return time.Duration(float64(d) * (1 + l.Margin))
}

// StoreOptions returns the lanes.Store options for these limits: both
// queues (tgjob.QueueReply, tgjob.QueueNotify) Ordered with maxAttempts (0
// means DefaultMaxAttempts), WithGlobalRate(GlobalPerSecond per 1 s +
// margin), and WithLanePace(PrivatePerSecond per 1 s + margin, with a
// PaceRule for prefix "-": GroupPerMinute per 1 min + margin). Pacing is
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
