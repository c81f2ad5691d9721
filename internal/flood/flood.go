// Package flood is the intake's per-user and per-chat limit on incoming
// updates: a user (or, in a group, all its members together) who sends
// more than a limit of messages or button taps within a window has the
// excess dropped where the updates are recorded, before they reach the
// update queue or any handler. The counts are kept in Valkey under the
// program's hash tag, so every poller, webhook receiver and handler
// process shares them and a restart keeps them; the check rides in the
// one script call that already writes the batch's recorded times
// (check.lua, run by the intake's record), so it costs no round trip.
//
// A limit of L per window W is a budget refilled continuously (GCRA, a
// token bucket): L updates may come at once, then one every W/L; an update
// over it is dropped and draws nothing, so a flood ends with its sender
// able to send again as soon as its budget refills. A message counts at
// its date (Arrival), so a backlog fetched at once after an outage is
// judged as it was sent; a tap when it is recorded. A dropped update
// is confirmed to Telegram like any other (the offset moves past it; a
// webhook answers 200), is not handled, and leaves nothing in Valkey but
// the budgets (one member per user and kind, per group and kind, of one
// sorted set, trimmed once the budget is full again, at most a window),
// the chat's notice (one per chat per window, a member of one sorted set)
// and its entry in the limited-chats set (a window after its last drop);
// each set expires a window after its last write. See
// docs/floods.md for the defaults and why.
package flood

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
)

//go:embed lua/*.lua
var luaFS embed.FS

// Limits are the intake limits. A zero limit is off; a zero Window turns
// every limit off.
type Limits struct {
	// Window is the period over which each limit is counted
	// (FLOOD_WINDOW): a limit of L per Window allows L at once, then one
	// every Window/L; one notice per chat per Window.
	Window time.Duration
	// UserMessages is the most messages (commands, text, anything but a
	// button tap) one user may send per window, all chats together
	// (FLOOD_USER_MESSAGES).
	UserMessages int
	// UserTaps is the most button taps (callback queries) one user may
	// send per window (FLOOD_USER_TAPS).
	UserTaps int
	// ChatMessages and ChatTaps are the most messages and taps one group
	// (chat id < 0) may receive per window from all its members together
	// (FLOOD_CHAT_MESSAGES, FLOOD_CHAT_TAPS): a raid of many accounts,
	// each under its own limit.
	ChatMessages, ChatTaps int
}

// Defaults (docs/floods.md): per 10 s, per user 10 messages (a burst of
// 10, then 1/s) and 30 taps (30, then 3/s); per group 30 messages (3/s)
// and 200 taps (20/s). Nobody types more than a message a second for
// long; a fast player's round (4 fruit taps and ✅ in under 2 s) is 2.5
// taps/s; several players on one group board stay under 20 taps/s. A
// stuck client sending 1,000 updates a second gets 10 handled at once and
// 1 a second after, replies a private chat's 1 message/s keeps up with, so
// its next command once the flood stops is answered at once.
const (
	DefaultWindow       = 10 * time.Second
	DefaultUserMessages = 10
	DefaultUserTaps     = 30
	DefaultChatMessages = 30
	DefaultChatTaps     = 200
)

// DefaultLimits returns the defaults above.
func DefaultLimits() Limits {
	return Limits{Window: DefaultWindow, UserMessages: DefaultUserMessages, UserTaps: DefaultUserTaps,
		ChatMessages: DefaultChatMessages, ChatTaps: DefaultChatTaps}
}

// On reports whether any limit applies.
func (l Limits) On() bool {
	return l.Window > 0 && (l.UserMessages > 0 || l.UserTaps > 0 || l.ChatMessages > 0 || l.ChatTaps > 0)
}

// Kind is what an update counts as.
type Kind uint8

// Kinds.
const (
	Message Kind = iota // anything but a tap: a command, text, an edit
	Tap                 // a button tap (callback_query)
)

func (k Kind) suffix() string {
	if k == Tap {
		return "t"
	}
	return "m"
}

// Subject is who sent an update and where.
type Subject struct {
	// User is the sender (0: none, e.g. a channel post: not limited).
	User int64
	// Chat is the chat it belongs to (a tap's message's chat; the user's
	// private chat when none).
	Chat int64
	Kind Kind
	// QueryID is a tap's callback query id (its toast answers it).
	QueryID string
	// MessageID is a message's message_id (0 for a tap): a group's notice
	// answers the dropped message, so it goes to the member who sent it.
	MessageID int
	// LanguageCode is the sender's language_code as Telegram sent it
	// (what a dropped update's toast and notice are said in, unless the
	// sender chose a language with /language: floodnotice.Config.Choice).
	LanguageCode string
	// Date is when a message was sent: Telegram's date (whole seconds),
	// an edit's edit_date. Zero for a tap (a callback query carries no
	// date of its own, and its message's is when the bot sent the board)
	// and for a message without one: such an update counts when it is
	// recorded. See Record.
	Date time.Time
}

// SubjectOf reads the subject of an update's JSON as Telegram sent it: a
// message or edited message (its from, chat and message_id), or a callback
// query (its from, id and its message's chat). A message's Date is its
// date, or its edit_date when later (an edit counts when it was made), in
// whole seconds; a tap has none. Other updates (a member change, a
// channel post) and a body that does not decode have User 0: not limited.
func SubjectOf(raw []byte) Subject {
	type ids struct {
		ID   int64  `json:"id"`
		Lang string `json:"language_code"`
	}
	type msg struct {
		ID       int   `json:"message_id"`
		Chat     ids   `json:"chat"`
		From     *ids  `json:"from"`
		Date     int64 `json:"date"`
		EditDate int64 `json:"edit_date"`
	}
	var u struct {
		Message       *msg `json:"message"`
		EditedMessage *msg `json:"edited_message"`
		CallbackQuery *struct {
			ID      string `json:"id"`
			From    ids    `json:"from"`
			Message *msg   `json:"message"`
		} `json:"callback_query"`
	}
	if json.Unmarshal(raw, &u) != nil {
		return Subject{}
	}
	for _, m := range []*msg{u.Message, u.EditedMessage} {
		if m != nil && m.From != nil {
			s := Subject{User: m.From.ID, Chat: m.Chat.ID, Kind: Message, MessageID: m.ID, LanguageCode: m.From.Lang}
			if d := max(m.Date, m.EditDate); d > 0 {
				s.Date = time.Unix(d, 0)
			}
			return s
		}
	}
	if q := u.CallbackQuery; q != nil {
		s := Subject{User: q.From.ID, Chat: q.From.ID, Kind: Tap, QueryID: q.ID, LanguageCode: q.From.Lang}
		if q.Message != nil && q.Message.Chat.ID != 0 {
			s.Chat = q.Message.Chat.ID
		}
		return s
	}
	return Subject{}
}

// Reason is why an update was dropped (the label of the drop counter).
type Reason string

// Reasons.
const (
	UserMessages Reason = "user_messages"
	UserTaps     Reason = "user_taps"
	ChatMessages Reason = "chat_messages"
	ChatTaps     Reason = "chat_taps"
)

// Reasons lists every Reason (metrics pre-create their series).
func Reasons() []Reason { return []Reason{UserMessages, UserTaps, ChatMessages, ChatTaps} }

// Outcome is what the check did with one update.
type Outcome uint8

// Outcomes.
const (
	// Recorded: within the limits, its recorded time written.
	Recorded Outcome = iota
	// Present: its recorded time was there already (a resend of an update
	// still waiting or running); not counted again.
	Present
	// Dropped: over a limit; not recorded.
	Dropped
)

// Result is the check's answer for one update.
type Result struct {
	Outcome Outcome
	// Reason, when Dropped.
	Reason Reason
	// Notice, when Dropped: this drop took its chat's notice flag (the
	// first message dropped in the chat for a window): the caller sends
	// the chat one notice (NoticeText).
	Notice bool
}

// Texts of the notice and the toast.
const (
	NoticeText = "Too many messages: slow down."
	ToastText  = "Too many taps: slow down."
)

// Limiter applies Limits (see the package doc). Safe for concurrent use.
type Limiter struct {
	limits Limits
	exempt func(user int64) bool
	prefix string
	check  *valkey.Lua
}

// New returns the limiter of limits for the keys under hash tag tag;
// exempt (nil: nobody) names the users no limit applies to (the admins),
// and no group's count includes them.
func New(tag string, limits Limits, exempt func(user int64) bool) *Limiter {
	if exempt == nil {
		exempt = func(int64) bool { return false }
	}
	return &Limiter{limits: limits, exempt: exempt, prefix: "{" + tag + "}:app:fl:", check: luascript.Must(luaFS, "check")}
}

// Limits returns the limiter's limits.
func (l *Limiter) Limits() Limits { return l.limits }

// LimitedKey is the sorted set of chats being limited: chat id -> its
// last dropped update's time plus a window (unix ms).
func (l *Limiter) LimitedKey() string { return l.prefix + "limited" }

// BudgetsKey is the sorted set of budgets: "u:<user>:<m|t>" or
// "c:<chat>:<m|t>" -> the budget's theoretical arrival time (unix ms),
// trimmed of the full ones and expiring a window after its last write.
func (l *Limiter) BudgetsKey() string { return l.prefix + "b" }

func userBudget(s Subject) string {
	return "u:" + strconv.FormatInt(s.User, 10) + ":" + s.Kind.suffix()
}
func chatBudget(s Subject) string {
	return "c:" + strconv.FormatInt(s.Chat, 10) + ":" + s.Kind.suffix()
}

// NoticesKey is the sorted set of chats that got their notice: chat id ->
// the notice's time plus a window (unix ms), trimmed of the passed ones
// and expiring a window after its last write.
func (l *Limiter) NoticesKey() string { return l.prefix + "n" }

// limitsOf returns the user and chat limits that apply to s (0: none).
func (l *Limiter) limitsOf(s Subject) (user, chat int) {
	if s.User == 0 || l.limits.Window <= 0 || l.exempt(s.User) {
		return 0, 0
	}
	if s.Kind == Tap {
		user, chat = l.limits.UserTaps, l.limits.ChatTaps
	} else {
		user, chat = l.limits.UserMessages, l.limits.ChatMessages
	}
	if s.Chat >= 0 { // a private chat: its user's limit is its chat's
		chat = 0
	}
	return max(user, 0), max(chat, 0)
}

// MaxAge bounds how old a message's date may count (Arrival): Telegram
// keeps an update it could not deliver for 24 hours, so an older date is
// not a real one.
const MaxAge = 24 * time.Hour

// Arrival is when s counts against its budgets, recorded at now: a
// message at the end of its date's second (the latest it can have been
// sent; dates are whole seconds), at most now (a clock ahead of this
// host's) and at least now - MaxAge; a tap, or a message without a date,
// at now. So a group's conversation that piled up while the bot could not
// fetch it (Telegram or Valkey down, the poller backing off) and comes in
// one batch is judged as it was sent, not as a burst, while a flood is
// one by its dates too.
func Arrival(s Subject, now time.Time) time.Time {
	if s.Kind == Tap || s.Date.IsZero() {
		return now
	}
	a := s.Date.Truncate(time.Second).Add(time.Second - time.Millisecond)
	if a.After(now) {
		return now
	}
	if oldest := now.Add(-MaxAge); a.Before(oldest) {
		return oldest
	}
	return a
}

// Record checks a batch of updates being recorded and writes the recorded
// time (score now, unix ms) of each one within the limits under its job
// id members[i] in the sorted set recorded (ZADD NX), in one script call
// (check.lua): the intake's record of the batch's times, with the limits
// in it. subjects[i] is update i's subject (SubjectOf); each counts at its
// Arrival, in batch order (getUpdates hands a chat's updates in the order
// they were sent), so a backlog is judged by its messages' dates. A budget
// is trimmed once full at the batch's latest message arrival (now for a
// batch of taps only): a backlog fetched in several batches finds the
// budgets the previous batch left at its own dates. It returns one
// Result per update; a member given twice is Present the second time.
// Errors: the server's (nothing is known to be written: the caller
// records the batch again).
func (l *Limiter) Record(ctx context.Context, c valkey.Client, recorded string, now time.Time, subjects []Subject, members []string) ([]Result, error) {
	if len(subjects) != len(members) {
		return nil, fmt.Errorf("flood: %d subjects for %d members", len(subjects), len(members))
	}
	out := make([]Result, len(subjects))
	if len(subjects) == 0 {
		return out, nil
	}
	// The script's items: the messages, then the taps (a budget is of one
	// kind, so this order decides nothing), each member once (a repeat in
	// the batch is Present, as ZADD NX would have it).
	dup := make([]bool, len(subjects))
	seen := make(map[string]struct{}, len(subjects))
	for i, m := range members {
		if _, ok := seen[m]; ok {
			dup[i], out[i] = true, Result{Outcome: Present}
		}
		seen[m] = struct{}{}
	}
	order := make([]int, 0, len(subjects))
	messages := 0
	for pass, tap := range []bool{false, true} {
		for i, s := range subjects {
			if !dup[i] && (s.Kind == Tap) == tap {
				order = append(order, i)
			}
		}
		if pass == 0 {
			messages = len(order)
		}
	}
	keys := []string{recorded, l.LimitedKey(), l.BudgetsKey(), l.NoticesKey()}
	args := l.checkArgs(now, subjects, members, order, messages)
	codes, err := l.check.Exec(ctx, c, keys, args).AsIntSlice()
	if err == nil && len(codes) != len(order) {
		err = fmt.Errorf("check.lua answered %d results for %d updates", len(codes), len(order))
	}
	if err != nil {
		return nil, fmt.Errorf("flood: record updates: %w", err)
	}
	for k, code := range codes {
		i := order[k]
		switch code {
		case 1:
			out[i] = Result{Outcome: Recorded}
		case 0:
			out[i] = Result{Outcome: Present}
		default:
			r := Result{Outcome: Dropped, Notice: code%2 == 1, Reason: UserMessages}
			switch {
			case code < 4 && subjects[i].Kind == Tap:
				r.Reason = UserTaps
			case code >= 4 && subjects[i].Kind == Tap:
				r.Reason = ChatTaps
			case code >= 4:
				r.Reason = ChatMessages
			}
			out[i] = r
		}
	}
	return out, nil
}

// checkArgs lays out check.lua's ARGV for the updates order (indexes into
// subjects and members, the first messages of them messages) recorded at
// now: the window, now, the count of messages and the four limits, then
// per update its job id, its user budget and its chat budget (or chat id),
// then each message's arrival (unix ms).
func (l *Limiter) checkArgs(now time.Time, subjects []Subject, members []string, order []int, messages int) []string {
	n := len(order)
	args := make([]string, 0, 7+3*n+messages)
	args = append(args, strconv.FormatInt(l.limits.Window.Milliseconds(), 10), strconv.FormatInt(now.UnixMilli(), 10),
		strconv.Itoa(messages), strconv.Itoa(max(l.limits.UserMessages, 0)), strconv.Itoa(max(l.limits.UserTaps, 0)),
		strconv.Itoa(max(l.limits.ChatMessages, 0)), strconv.Itoa(max(l.limits.ChatTaps, 0)))
	for _, i := range order {
		args = append(args, members[i])
	}
	args = args[:7+3*n+messages]
	for k, i := range order {
		s := subjects[i]
		ul, cl := l.limitsOf(s)
		ub, cb := "", strconv.FormatInt(s.Chat, 10) // no chat budget: the chat id
		if ul > 0 {
			ub = userBudget(s)
		}
		if cl > 0 {
			cb = chatBudget(s)
		}
		args[7+n+k], args[7+2*n+k] = ub, cb
		if k < messages {
			args[7+3*n+k] = strconv.FormatInt(Arrival(s, now).UnixMilli(), 10)
		}
	}
	return args
}

// LimitedChat is a chat being limited.
type LimitedChat struct {
	Chat int64
	// Until is a window after its last dropped update: when it stops
	// being listed (its budget has refilled by then).
	Until time.Time
}

// Limited returns the chats with an update dropped within the last window
// (soonest Until first), at most max (0: all; the set holds only those). For /lanes, the
// metrics and the console. Errors: the server's.
func (l *Limiter) Limited(ctx context.Context, c valkey.Client, now time.Time, max int) ([]LimitedChat, error) {
	cmd := c.B().Zrange().Key(l.LimitedKey()).Min("(" + strconv.FormatInt(now.UnixMilli(), 10)).Max("+inf").Byscore()
	var zs []valkey.ZScore
	var err error
	if max > 0 {
		zs, err = c.Do(ctx, cmd.Limit(0, int64(max)).Withscores().Build()).AsZScores()
	} else {
		zs, err = c.Do(ctx, cmd.Withscores().Build()).AsZScores()
	}
	if err != nil {
		return nil, fmt.Errorf("flood: limited chats: %w", err)
	}
	out := make([]LimitedChat, 0, len(zs))
	for _, z := range zs {
		id, err := strconv.ParseInt(z.Member, 10, 64)
		if err != nil {
			continue // not a member check.lua writes
		}
		out = append(out, LimitedChat{Chat: id, Until: time.UnixMilli(int64(z.Score))})
	}
	return out, nil
}

// LimitedCount returns how many chats are being limited now. Errors: the
// server's.
func (l *Limiter) LimitedCount(ctx context.Context, c valkey.Client, now time.Time) (int64, error) {
	n, err := c.Do(ctx, c.B().Zcount().Key(l.LimitedKey()).Min("("+strconv.FormatInt(now.UnixMilli(), 10)).Max("+inf").Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("flood: limited chats: %w", err)
	}
	return n, nil
}

// Drop is one update dropped by the limits, as the intake reports it.
type Drop struct {
	UpdateID int64
	Subject  Subject
	Result   Result
}
