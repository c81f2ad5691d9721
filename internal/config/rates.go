package config

import (
	"fmt"

	"github.com/codemojex/codemojex/notifier"
)

// Rates are Telegram's limits the notifier holds every message to, and
// the reply lanes' bound: notifier.Limits (NotifierLimits).
type Rates struct {
	// GlobalRate is the bot's overall limit in messages/s (TELEGRAM_GLOBAL_RATE;
	// Telegram Bot FAQ: about 30 messages/s).
	GlobalRate int `env:"TELEGRAM_GLOBAL_RATE" envDefault:"30"`
	// ReplyRate is the budget of replies to users' updates in messages/s,
	// apart from GlobalRate, which then covers bulk messages only
	// (broadcast copies, other notifications) (TELEGRAM_REPLY_RATE,
	// 0..10000; 0: replies share GlobalRate). Telegram publishes no figure
	// for replies: the Bot FAQ's "about 30 messages per second" is for bulk
	// notifications, and grammY's "Scaling Up IV: Flood Limits" states that
	// replies to users' messages are not held to it. The default 100 is a
	// ceiling well above a popular bot's command rate: replies and bulk
	// together start at GlobalRate (safe whichever way Telegram counts
	// replies) and are probed upward while replies wait, a 429 taking a
	// raise back (notifier.Limits.ReplyPerSecond; docs/delivery.md,
	// "Probing for the reply budget").
	ReplyRate int `env:"TELEGRAM_REPLY_RATE" envDefault:"100"`
	// PaidBroadcastRate is the budget of paid broadcast copies in
	// messages/s (TELEGRAM_PAID_BROADCAST_RATE, 0..1000; 0, the default:
	// paid broadcasts off). With it set, the broadcast preview offers a
	// paid send: copies sent with allow_paid_broadcast, which Telegram
	// allows "up to 1000 messages per second, ignoring broadcasting limits
	// for a fee of 0.1 Telegram Stars per message" (Bot API, sendMessage),
	// withdrawn from the bot's balance. It needs TELEGRAM_REPLY_RATE > 0
	// (two budgets): with one shared budget, paid copies would be held to
	// TELEGRAM_GLOBAL_RATE too. A rate set below TELEGRAM_GLOBAL_RATE is
	// refused (Validate): the paid send would cost Stars and go slower than
	// the free one, a misconfiguration rather than a choice.
	PaidBroadcastRate int `env:"TELEGRAM_PAID_BROADCAST_RATE" envDefault:"0"`
	// ChatRate is the limit per private chat in messages/s (TELEGRAM_CHAT_RATE;
	// Telegram Bot FAQ: about 1 message/s).
	ChatRate int `env:"TELEGRAM_CHAT_RATE" envDefault:"1"`
	// GroupRate is the limit per group in messages/min (TELEGRAM_GROUP_RATE;
	// Telegram Bot FAQ: 20 messages/min).
	GroupRate int `env:"TELEGRAM_GROUP_RATE" envDefault:"20"`
	// ReplyLaneDepth is the most replies waiting per chat on the reply
	// queue (REPLY_LANE_DEPTH; 0: unbounded): a reply beyond it is dropped
	// and counted (notifier.Limits.ReplyLaneDepth).
	ReplyLaneDepth int `env:"REPLY_LANE_DEPTH" envDefault:"100"`
}

// Validate checks each rate's range, that paid broadcasts have a reply
// budget of their own to be apart from, and that their rate is not below
// the free bulk rate (TELEGRAM_GLOBAL_RATE). Errors: *Error.
func (r Rates) Validate() error {
	switch {
	case r.GlobalRate < 1 || r.GlobalRate > 10000:
		return &Error{Var: "TELEGRAM_GLOBAL_RATE", Want: fmt.Sprintf("messages/s for the whole bot, 1..10000 (Telegram allows about 30); got %d", r.GlobalRate)}
	case r.ReplyRate < 0 || r.ReplyRate > 10000:
		return &Error{Var: "TELEGRAM_REPLY_RATE", Want: fmt.Sprintf("messages/s of replies, apart from the bulk rate, 0..10000 (0: replies share TELEGRAM_GLOBAL_RATE); got %d", r.ReplyRate)}
	case r.PaidBroadcastRate < 0 || r.PaidBroadcastRate > 1000:
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("messages/s of paid broadcasts, 0..1000 (0: off; Telegram allows up to 1000 for 0.1 Star each); got %d", r.PaidBroadcastRate)}
	case r.PaidBroadcastRate > 0 && r.ReplyRate == 0:
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("must be 0 while TELEGRAM_REPLY_RATE=0 (paid broadcasts need two budgets: set TELEGRAM_REPLY_RATE > 0, or TELEGRAM_PAID_BROADCAST_RATE=0); got %d", r.PaidBroadcastRate)}
	case r.PaidBroadcastRate > 0 && r.PaidBroadcastRate < r.GlobalRate:
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("at least TELEGRAM_GLOBAL_RATE=%d, the free bulk rate, or 0 (off): a paid broadcast (0.1 Star a copy) "+
			"exists to go faster than a free one (Telegram allows up to 1000/s); got %d, which would charge Stars for a slower send", r.GlobalRate, r.PaidBroadcastRate)}
	case r.ChatRate < 1 || r.ChatRate > 100:
		return &Error{Var: "TELEGRAM_CHAT_RATE", Want: fmt.Sprintf("messages/s per private chat, 1..100 (Telegram allows about 1); got %d", r.ChatRate)}
	case r.GroupRate < 1 || r.GroupRate > 6000:
		return &Error{Var: "TELEGRAM_GROUP_RATE", Want: fmt.Sprintf("messages/min per group, 1..6000 (Telegram allows 20); got %d", r.GroupRate)}
	case r.ReplyLaneDepth < 0 || r.ReplyLaneDepth > 1_000_000:
		return &Error{Var: "REPLY_LANE_DEPTH", Want: fmt.Sprintf("replies waiting per chat, 0 (unbounded) to 1000000; got %d", r.ReplyLaneDepth)}
	}
	return nil
}

// ClaimRate is every budget together in messages/s (bulk + replies +
// paid): the rate a worker spreads its claims over and sizes its senders
// for (worker.Config.ClaimRate), so neither replies nor paid copies are
// held back by the claims (the paid rate is 0 when paid broadcasts are
// off; without it a paid broadcast went at the bulk + reply rate, about
// 130/s: bench -only paid).
func (r Rates) ClaimRate() int { return r.GlobalRate + r.ReplyRate + r.PaidBroadcastRate }

// NotifierLimits returns these rates as the notifier's limits, with its
// default safety margin (notifier.DefaultLimits' Slack) on every window.
func (r Rates) NotifierLimits() notifier.Limits {
	l := notifier.DefaultLimits()
	l.GlobalPerSecond, l.PrivatePerSecond, l.GroupPerMinute = r.GlobalRate, r.ChatRate, r.GroupRate
	l.ReplyPerSecond, l.PaidPerSecond, l.ReplyLaneDepth = r.ReplyRate, r.PaidBroadcastRate, r.ReplyLaneDepth
	return l
}
