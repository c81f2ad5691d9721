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
	// queue (REPLY_LANE_DEPTH; 0: unbounded): an update whose reply finds
	// its chat's lane full waits and is handled again once the lane drains
	// (counted; notifier.Limits.ReplyLaneDepth, internal/handling).
	ReplyLaneDepth int `env:"REPLY_LANE_DEPTH" envDefault:"100"`
}

// Validate checks each rate's range, that paid broadcasts have a reply
// budget of their own to be apart from, and that their rate is not below
// the free bulk rate (TELEGRAM_GLOBAL_RATE). Errors: *Error.
func (r Rates) Validate() error {
	if err := checkWholeNumbers(r.wholeNumbers()); err != nil {
		return err
	}
	switch {
	case r.PaidBroadcastRate > 0 && r.ReplyRate == 0:
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("must be 0 while TELEGRAM_REPLY_RATE=0 (paid broadcasts need two budgets: set TELEGRAM_REPLY_RATE > 0, or TELEGRAM_PAID_BROADCAST_RATE=0); got %d", r.PaidBroadcastRate)}
	case r.PaidBroadcastRate > 0 && r.PaidBroadcastRate < r.GlobalRate:
		return &Error{Var: "TELEGRAM_PAID_BROADCAST_RATE", Want: fmt.Sprintf("at least TELEGRAM_GLOBAL_RATE=%d, the free bulk rate, or 0 (off): a paid broadcast (0.1 Star a copy) "+
			"exists to go faster than a free one (Telegram allows up to 1000/s); got %d, which would charge Stars for a slower send", r.GlobalRate, r.PaidBroadcastRate)}
	}
	return nil
}

// wholeNumbers are the rules of the section's whole-number variables.
func (r Rates) wholeNumbers() []wholeNumber {
	return []wholeNumber{
		{"TELEGRAM_GLOBAL_RATE", r.GlobalRate, 1, 10000, "messages/s for the whole bot, 1..10000 (Telegram allows about 30)"},
		{"TELEGRAM_REPLY_RATE", r.ReplyRate, 0, 10000, "messages/s of replies, apart from the bulk rate, 0..10000 (0: replies share TELEGRAM_GLOBAL_RATE)"},
		{"TELEGRAM_PAID_BROADCAST_RATE", r.PaidBroadcastRate, 0, 1000, "messages/s of paid broadcasts, 0..1000 (0: off; Telegram allows up to 1000 for 0.1 Star each)"},
		{"TELEGRAM_CHAT_RATE", r.ChatRate, 1, 100, "messages/s per private chat, 1..100 (Telegram allows about 1)"},
		{"TELEGRAM_GROUP_RATE", r.GroupRate, 1, 6000, "messages/min per group, 1..6000 (Telegram allows 20)"},
		{"REPLY_LANE_DEPTH", r.ReplyLaneDepth, 0, 1_000_000, "replies waiting per chat, 0 (unbounded) to 1000000"},
	}
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
