package demo

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// Role is a chat's part in the scene.
type Role string

// The roles.
const (
	RoleAdmin Role = "admin"  // the admin: /weight, /weights, /broadcast, /lanes
	RoleBurst Role = "burst"  // sends Scene.Burst commands at once
	RoleQuiet Role = "quiet"  // plays the game, one message at a time
	RoleCrowd Role = "crowd"  // says /start, gets the broadcast, joins the rush
	RoleTap   Role = "tapper" // plays the game by tapping the board's buttons
	RoleVIP   Role = "vip"    // a crowd chat whose weight the admin raises in the rush
	RoleRush  Role = "rush"   // only joins the rush (not in the broadcast's audience)
)

// command is one message a user sent to the bot.
type command struct {
	text     string
	msgID    int       // the user's message id in the chat
	at       time.Time // when it was injected
	baseline int       // bot replies (not broadcasts) in the chat before it
}

type chatLog struct {
	id   int64
	name string
	role Role
	cmds []command
	taps []string // callback query ids of the user's taps
}

// tracker records what the scene's users sent and reads what the bot sent
// back from the emulator. Safe for concurrent use.
type tracker struct {
	emu    *tgemu.Emulator
	marker string // substring identifying the broadcast's copies
	// bcMsg is the admin's /broadcast message id (0 before it is sent): a
	// bot message replying to it is the admin's confirmation, not a copy.
	bcMsg atomic.Int64

	mu    sync.Mutex
	chats map[int64]*chatLog
	order []int64
	bcAt  time.Time // when /broadcast was sent (zero before)
}

func newTracker(emu *tgemu.Emulator, marker string) *tracker {
	return &tracker{emu: emu, marker: marker, chats: make(map[int64]*chatLog)}
}

// add registers a chat of the cast.
func (t *tracker) add(id int64, name string, role Role) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.chats[id] == nil {
		t.chats[id] = &chatLog{id: id, name: name, role: role}
		t.order = append(t.order, id)
	}
}

// isBroadcast reports whether a bot message is a copy of the broadcast: it
// holds the marker and is not the answer to the /broadcast command (which
// may quote the text).
func (t *tracker) isBroadcast(m tgemu.Message) bool {
	if !strings.Contains(m.Text, t.marker) {
		return false
	}
	bc := t.bcMsg.Load()
	return bc == 0 || int64(m.ReplyToMessageID) != bc
}

// replies returns the bot's messages to chat that are not broadcast copies.
func (t *tracker) replies(chat int64) []tgemu.Message {
	var out []tgemu.Message
	for _, m := range t.emu.Messages(chat) {
		if !t.isBroadcast(m) {
			out = append(out, m)
		}
	}
	return out
}

// send injects text as written by the chat's user and returns the index of
// the command. broadcast marks the admin's /broadcast.
func (t *tracker) send(chat int64, text string, broadcast bool) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.chats[chat]
	if c == nil {
		return 0, fmt.Errorf("demo: chat %d is not in the cast", chat)
	}
	base := len(t.replies(chat))
	at := time.Now()
	u, err := t.emu.InjectMessage(tgemu.TextMessage{
		ChatID: chat,
		From:   models.User{ID: chat, FirstName: c.name, Username: strings.ToLower(c.name) + "_demo"},
		Text:   text,
	})
	if err != nil {
		return 0, fmt.Errorf("demo: chat %d says %q: %w", chat, text, err)
	}
	if broadcast {
		t.bcAt = at
		t.bcMsg.Store(int64(u.Message.ID))
	}
	c.cmds = append(c.cmds, command{text: text, msgID: u.Message.ID, at: at, baseline: base})
	return len(c.cmds) - 1, nil
}

// answered reports whether command idx of chat has its reply.
func (t *tracker) answered(chat int64, idx int) bool {
	t.mu.Lock()
	var cmds []command
	if c := t.chats[chat]; c != nil && idx < len(c.cmds) {
		cmds = slices.Clone(c.cmds[:idx+1])
	}
	t.mu.Unlock()
	if cmds == nil {
		return false
	}
	return !match(cmds, t.replies(chat))[idx].IsZero()
}

// match pairs commands with the bot's replies and returns each command's
// reply time (zero: no reply yet). A reply that names the command
// (reply_to_message_id) is its answer; replies that name none are handed out
// in order, each to the oldest unanswered command sent before it arrived
// (baseline). Extra replies (a command answered by several messages) are
// left over.
func match(cmds []command, replies []tgemu.Message) []time.Time {
	out := make([]time.Time, len(cmds))
	byMsg := make(map[int]int, len(cmds))
	for i, c := range cmds {
		byMsg[c.msgID] = i
	}
	var loose []int // replies naming no command of ours
	for j, m := range replies {
		if i, ok := byMsg[m.ReplyToMessageID]; ok && m.ReplyToMessageID != 0 {
			if out[i].IsZero() {
				out[i] = m.Time
			}
			continue
		}
		loose = append(loose, j)
	}
	next := 0
	for i, c := range cmds {
		if !out[i].IsZero() {
			continue
		}
		for next < len(loose) && loose[next] < c.baseline {
			next++
		}
		if next < len(loose) {
			out[i] = replies[loose[next]].Time
			next++
		}
	}
	return out
}

// ChatStats is what one chat sent and received, at one moment.
type ChatStats struct {
	ID   int64
	Name string
	Role Role
	// Sent is the number of commands the chat's user sent; Answered those
	// with a reply; Delivered every message the bot sent to the chat
	// (replies and broadcast copies).
	Sent, Answered, Delivered int
	// Waits are the reply times of the answered commands (command to
	// reply), in command order.
	Waits []time.Duration
	// First and Last are when the first command was sent and the last
	// reply arrived.
	First, Last time.Time
	// Broadcasts is the number of broadcast copies received; BroadcastWait
	// the time from /broadcast to the first copy.
	Broadcasts    int
	BroadcastWait time.Duration
	// Queued is the chat's jobs waiting or in flight in Valkey (both
	// queues), -1 when unknown; Weight its lane weight (0: unknown).
	Queued, Weight int
	// Taps counts the button taps of the chat's user; TapWaits are the
	// answered ones' tap-to-answer times (answerCallbackQuery accepted);
	// TapsLimited counts the taps answered with the intake limit's toast
	// (flood.ToastText: dropped unhandled), which are not answered.
	Taps        int
	TapWaits    []time.Duration
	TapsLimited int
}

// stats returns a snapshot of every chat, in cast order.
func (t *tracker) stats() []ChatStats {
	t.mu.Lock()
	type item struct {
		c    chatLog
		cmds []command
	}
	items := make([]item, 0, len(t.order))
	for _, id := range t.order {
		c := t.chats[id]
		cp := *c
		cp.taps = slices.Clone(c.taps)
		items = append(items, item{c: cp, cmds: slices.Clone(c.cmds)})
	}
	bcAt := t.bcAt
	t.mu.Unlock()
	type answer struct {
		wait    time.Duration
		limited bool // the flood toast: dropped, not handled
	}
	answers := map[string]answer{}
	for _, a := range t.emu.CallbackAnswers() {
		answers[a.QueryID] = answer{wait: a.Time.Sub(a.TapTime), limited: a.Text == flood.ToastText}
	}

	out := make([]ChatStats, 0, len(items))
	for _, it := range items {
		all := t.emu.Messages(it.c.id)
		var replies []tgemu.Message
		s := ChatStats{ID: it.c.id, Name: it.c.name, Role: it.c.role, Sent: len(it.cmds), Delivered: len(all), Queued: -1}
		for _, m := range all {
			if t.isBroadcast(m) {
				if s.Broadcasts == 0 && !bcAt.IsZero() {
					s.BroadcastWait = m.Time.Sub(bcAt)
				}
				s.Broadcasts++
				continue
			}
			replies = append(replies, m)
		}
		for i, at := range match(it.cmds, replies) {
			if at.IsZero() {
				continue
			}
			s.Answered++
			s.Waits = append(s.Waits, at.Sub(it.cmds[i].at))
			if at.After(s.Last) {
				s.Last = at
			}
		}
		if len(it.cmds) > 0 {
			s.First = it.cmds[0].at
		}
		s.Taps = len(it.c.taps)
		for _, id := range it.c.taps {
			switch a, ok := answers[id]; {
			case ok && a.limited:
				s.TapsLimited++
			case ok:
				s.TapWaits = append(s.TapWaits, a.wait)
			}
		}
		out = append(out, s)
	}
	return out
}

// broadcastSent reports whether /broadcast was sent.
func (t *tracker) broadcastSent() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.bcAt.IsZero()
}

// percentile returns the p-th percentile (0..100, nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	k := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(k, 0), len(s)-1)]
}

// Exchange is one command and the first line of the reply matched to it.
type Exchange struct {
	Command, Reply string
	Wait           time.Duration
}

// transcript pairs chat's commands with the first line of their replies.
func (t *tracker) transcript(chat int64) []Exchange {
	t.mu.Lock()
	var cmds []command
	if c := t.chats[chat]; c != nil {
		cmds = slices.Clone(c.cmds)
	}
	t.mu.Unlock()
	replies := t.replies(chat)
	byTime := make(map[time.Time]string, len(replies))
	for _, m := range replies {
		if _, ok := byTime[m.Time]; !ok {
			byTime[m.Time] = m.Text
		}
	}
	out := make([]Exchange, 0, len(cmds))
	for i, at := range match(cmds, replies) {
		e := Exchange{Command: cmds[i].text}
		if !at.IsZero() {
			e.Reply, _, _ = strings.Cut(byTime[at], "\n")
			e.Wait = at.Sub(cmds[i].at)
		}
		out = append(out, e)
	}
	return out
}

// tap presses the button labelled label (any of labels) on chat's current
// board as its user and returns the query id; the answer is read from the
// emulator (answered).
func (t *tracker) tap(chat int64, labels ...string) (string, error) {
	b, ok := t.board(chat)
	if !ok {
		return "", fmt.Errorf("demo: chat %d has no board to tap", chat)
	}
	markup := b.ReplyMarkup
	if n := len(b.Edits); n > 0 {
		markup = b.Edits[n-1].ReplyMarkup
	}
	var kb models.InlineKeyboardMarkup
	if markup == "" || json.Unmarshal([]byte(markup), &kb) != nil {
		return "", fmt.Errorf("demo: chat %d: the board has no keyboard", chat)
	}
	data := ""
	for _, row := range kb.InlineKeyboard {
		for _, btn := range row {
			if slices.Contains(labels, btn.Text) {
				data = btn.CallbackData
			}
		}
	}
	if data == "" {
		return "", fmt.Errorf("demo: chat %d: no button %v on the board", chat, labels)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	c := t.chats[chat]
	if c == nil {
		return "", fmt.Errorf("demo: chat %d is not in the cast", chat)
	}
	u, err := t.emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: chat, MessageID: b.ID,
		From: models.User{ID: chat, FirstName: c.name}, Data: data})
	if err != nil {
		return "", fmt.Errorf("demo: chat %d taps %v: %w", chat, labels, err)
	}
	c.taps = append(c.taps, u.CallbackQuery.ID)
	return u.CallbackQuery.ID, nil
}

// board returns chat's latest game board (the last bot message that
// carried an inline keyboard).
func (t *tracker) board(chat int64) (tgemu.Message, bool) {
	msgs := t.emu.Messages(chat)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].ReplyMarkup != "" {
			return msgs[i], true
		}
	}
	return tgemu.Message{}, false
}

// answer returns the toast tap id was answered with, and whether it was.
func (t *tracker) answer(id string) (string, bool) {
	for _, a := range t.emu.CallbackAnswers() {
		if a.QueryID == id {
			return a.Text, true
		}
	}
	return "", false
}
