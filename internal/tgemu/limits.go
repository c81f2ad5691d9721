package tgemu

import (
	"sort"
	"time"
)

// Rate is a flood limit: at most Messages accepted sendMessage requests in
// any sliding window of length Per, measured on the emulator's clock at the
// time each request is processed. A Rate with Messages <= 0 or Per <= 0 is
// unlimited.
type Rate struct {
	Messages int           // messages allowed per window
	Per      time.Duration // window length
}

func (r Rate) unlimited() bool { return r.Messages <= 0 || r.Per <= 0 }

// Limits are the flood limits the emulator enforces on sendMessage and
// editMessageText (an accepted edit counts like a message; answers and
// other methods are never throttled here). A request over any limit is
// answered 429 "Too Many Requests: retry after N" with parameters.retry_after
// N, the seconds until the tightest window has room again (rounded up, at
// least 1; longer with RetryAfterCap). Rejected requests do not occupy the
// windows. The zero Limits is unlimited.
type Limits struct {
	// Global limits all messages of the bot together (Telegram's Bot FAQ:
	// "about 30 messages per second" for bulk notifications); replies too,
	// unless Replies is RepliesApart and Reply is set.
	Global Rate
	// Reply, when set, is a window of its own for replies: a sendMessage
	// with reply_parameters (or reply_to_message_id), or to a chat whose
	// user wrote or tapped (an injected update) within ReplyWindow, counts
	// against Reply (a broadcast copy to such a chat too: a bot whose own
	// budgets are R for replies and G for bulk needs an emulator Reply of
	// R + G to never see a 429). Whether it also counts against Global is
	// Replies. The zero Rate: replies count against Global like any
	// message, whatever Replies says.
	Reply Rate
	// Replies is the rule for replies when Reply is set. Telegram publishes
	// neither a figure nor a rule for replies; grammY's flood-limits guide
	// states that replies to users' messages are not held to the bulk
	// limit, which is RepliesApart. The zero value, RepliesInGlobal, is the
	// conservative reading: a reply counts against Global as well.
	Replies ReplyRule
	// Paid is the window of paid broadcasts: a sendMessage with
	// allow_paid_broadcast true counts against Paid instead of Global or
	// Reply (Bot API, sendMessage: "up to 1000 messages per second,
	// ignoring broadcasting limits for a fee of 0.1 Telegram Stars per
	// message"); the per-chat limits still apply. The zero Rate: paid sends
	// are not held to any global window. Each such send also costs 0.1
	// Star of the emulator's balance (SetStarBalance).
	Paid Rate
	// Private limits each private chat (chat_id > 0).
	Private Rate
	// Group limits each group, supergroup or channel (chat_id < 0).
	Group Rate
	// RetryAfterCap, when > 0, lengthens retry_after for a bot that keeps
	// sending into it, as Telegram does (it publishes no rule; bots that
	// ignore retry_after report waits growing from seconds to minutes).
	// The model: each window (the bot's global, reply and paid ones, and
	// each chat's) that answers a 429 holds a penalty until that 429's
	// retry_after has run out; a request that reaches a window while its
	// penalty runs is refused whether or not the window has room, and its
	// retry_after is twice the previous one, at most RetryAfterCap (and
	// never less than the window's own wait). A request after the penalty
	// ran out is judged afresh. 0 (the default): retry_after is only the
	// window's own wait and nothing is held after it.
	RetryAfterCap time.Duration
	// ReplyWindow is how long after a user's update the bot's messages to
	// that chat count as replies (when Reply is set); 0 means the default
	// ReplyWindow, a minute. Telegram publishes no such rule: this is one
	// reading, and a short window lets a test reach its end in seconds.
	ReplyWindow time.Duration
}

// ReplyRule says whether replies count against Limits.Global when
// Limits.Reply is set.
type ReplyRule int

const (
	// RepliesInGlobal (the zero value): a reply counts against Reply and
	// against Global, the one window of all the bot's messages.
	RepliesInGlobal ReplyRule = iota
	// RepliesApart: a reply counts against Reply instead of Global, so a
	// bot can answer users at Reply while its broadcasts fill Global.
	RepliesApart
)

// ReplyWindow is how long after a user's update the bot's messages to that
// chat count as replies (Limits.Reply), unless Limits.ReplyWindow says
// otherwise.
const ReplyWindow = time.Minute

// replyWindow is l.ReplyWindow, or ReplyWindow when that is not positive.
func (l Limits) replyWindow() time.Duration {
	if l.ReplyWindow > 0 {
		return l.ReplyWindow
	}
	return ReplyWindow
}

// DefaultLimits are Telegram's documented limits (Telegram Bot FAQ, "My bot
// is hitting limits, how do I avoid this?"): about 30 messages/s overall,
// 1 message/s per chat, 20 messages/min per group; and 1,000 messages/s for
// paid broadcasts (Bot API, sendMessage, allow_paid_broadcast).
func DefaultLimits() Limits {
	return Limits{
		Global:  Rate{Messages: 30, Per: time.Second},
		Paid:    Rate{Messages: 1000, Per: time.Second},
		Private: Rate{Messages: 1, Per: time.Second},
		Group:   Rate{Messages: 20, Per: time.Minute},
	}
}

// forChat is the per-chat rate that applies to chatID.
func (l Limits) forChat(chatID int64) Rate {
	if chatID < 0 {
		return l.Group
	}
	return l.Private
}

// window holds the acceptance times still inside a sliding window, oldest
// first, and the penalty of Limits.RetryAfterCap.
type window struct {
	times []time.Time
	// penaltyUntil is when the last 429 this window answered has run out
	// (only with Limits.RetryAfterCap); lastRetry is its retry_after (s).
	penaltyUntil time.Time
	lastRetry    int
}

// wait reports how long from now until one more event fits in r (0 when it
// fits now). It also drops events that left the window.
func (w *window) wait(now time.Time, r Rate) time.Duration {
	if r.unlimited() {
		w.times = nil
		return 0
	}
	cut := now.Add(-r.Per)
	i := 0
	for i < len(w.times) && !w.times[i].After(cut) {
		i++
	}
	w.times = w.times[i:]
	if len(w.times) < r.Messages {
		return 0
	}
	// The window has room once the event that makes it full expires.
	return w.times[len(w.times)-r.Messages].Add(r.Per).Sub(now)
}

// refusal is the retry_after (s) this window answers a request at now, 0
// when it admits it. With growth (capAfter > 0) a request inside the
// penalty of the previous 429 is refused with twice that retry_after, at
// most capAfter (never below the window's own wait), and each refusal
// starts a new penalty; without, nothing is held.
func (w *window) refusal(now time.Time, r Rate, capAfter time.Duration) int {
	if r.unlimited() {
		w.times = nil
		return 0
	}
	wait := w.wait(now, r)
	penalized := capAfter > 0 && now.Before(w.penaltyUntil)
	if wait <= 0 && !penalized {
		return 0
	}
	retry := 0
	if wait > 0 {
		retry = retryAfterSeconds(wait)
	}
	if penalized {
		retry = max(retry, min(2*w.lastRetry, retryAfterSeconds(capAfter)))
	}
	if capAfter > 0 {
		w.penaltyUntil = now.Add(time.Duration(retry) * time.Second)
		w.lastRetry = retry
	}
	return retry
}

func (w *window) add(now time.Time, r Rate) {
	if !r.unlimited() {
		w.times = append(w.times, now)
	}
}

// retryAfterSeconds rounds d up to whole seconds, at least 1, as Telegram's
// retry_after.
func retryAfterSeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	return max(s, 1)
}

// held is one window a message counts against, with its rate.
type held struct {
	w *window
	r Rate
}

// admitLocked checks the windows one message to chatID at now counts
// against: the chat's, and the global (a paid broadcast: Limits.Paid; a
// reply with Limits.Reply set: Reply, and Global too unless Limits.Replies
// is RepliesApart). When it fits it is counted and 0 is returned;
// otherwise nothing is counted and retry_after (seconds) is returned.
func (e *Emulator) admitLocked(cs *chatState, now time.Time, isReply, paid bool) int {
	l := e.limits
	if !cs.heard.IsZero() && now.Sub(cs.heard) < l.replyWindow() {
		isReply = true
	}
	windows := []held{{&cs.window, l.forChat(cs.chat.ID)}}
	switch {
	case paid:
		windows = append(windows, held{&e.paid, l.Paid})
	case isReply && !l.Reply.unlimited():
		windows = append(windows, held{&e.reply, l.Reply})
		if l.Replies != RepliesApart {
			windows = append(windows, held{&e.global, l.Global})
		}
	default:
		windows = append(windows, held{&e.global, l.Global})
	}
	retry := 0
	for _, h := range windows {
		retry = max(retry, h.w.refusal(now, h.r, l.RetryAfterCap))
	}
	if retry > 0 {
		return retry
	}
	for _, h := range windows {
		h.w.add(now, h.r)
	}
	return 0
}

// maxInWindow is the largest number of times in any sliding window of
// length d: for each event t, the events in (t-d, t].
func maxInWindow(times []time.Time, d time.Duration) int {
	sort.Slice(times, func(i, j int) bool { return times[i].Before(times[j]) })
	best, lo := 0, 0
	for hi, t := range times {
		for !times[lo].After(t.Add(-d)) {
			lo++
		}
		best = max(best, hi-lo+1)
	}
	return best
}

// MaxAccepted is the highest number of sends (sendMessage and
// editMessageText, as the limiter counts them) the emulator accepted within
// any sliding window of length d, over all chats. Under limits the emulator
// refuses anything over them, so MaxAccepted(time.Second) <= 30 cannot fail
// there: assert the 429s instead (Stats.TooManyRequests); MaxAccepted
// describes a run, or checks a bot against an emulator without limits.
func (e *Emulator) MaxAccepted(d time.Duration) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	var times []time.Time
	for _, cs := range e.chats {
		times = append(times, cs.sentTimes()...)
	}
	return maxInWindow(times, d)
}

// MaxAcceptedChat is MaxAccepted for one chat, e.g.
// MaxAcceptedChat(group, time.Minute) <= 20.
func (e *Emulator) MaxAcceptedChat(chatID int64, d time.Duration) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chats[chatID]
	if cs == nil {
		return 0
	}
	return maxInWindow(cs.sentTimes(), d)
}

// ScaledLimits are Telegram's limits with other rates, to keep a test or a
// benchmark short: global messages/s overall, chat messages/s per private
// chat, group messages/min per group; paid broadcasts keep Telegram's own
// global cap of 1,000 messages/s (Limits.Paid). Replies count against
// Global (no Reply window).
func ScaledLimits(global, chat, group int) Limits {
	return Limits{
		Global:  Rate{Messages: global, Per: time.Second},
		Paid:    Rate{Messages: 1000, Per: time.Second},
		Private: Rate{Messages: chat, Per: time.Second},
		Group:   Rate{Messages: group, Per: time.Minute},
	}
}
