package notifier

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/chatstate"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Class is a message class; each class is one lanes queue.
type Class int

const (
	// Reply answers a user's command (queue tgjob.QueueReply, claimed
	// before notifications). Sent even to a chat marked inactive: the chat
	// just talked to the bot.
	Reply Class = iota
	// Notification is unsolicited (queue tgjob.QueueNotify): refused for
	// chats marked inactive.
	Notification
)

// Queue returns the lanes queue of the class ("" for an unknown class).
func (c Class) Queue() string {
	switch c {
	case Reply:
		return tgjob.QueueReply
	case Notification:
		return tgjob.QueueNotify
	}
	return ""
}

// Message is what to send.
type Message struct {
	// Text is valid UTF-8, not empty nor only white space. Longer than
	// tgtext.MaxTextUnits UTF-16 units, it is sent as several messages (see
	// Split). With a ParseMode, a split may cut an entity in two; the
	// worker then resends that part as plain text.
	Text string
	// ParseMode is "" (plain), "HTML", "MarkdownV2" or "Markdown".
	ParseMode string
	// Class picks the queue (Reply by default).
	Class Class
	// ReplyTo is the message id the first part answers (0: none).
	ReplyTo int
	// Silent sends without notification sound.
	Silent bool
	// Markup is the reply_markup, as JSON (an inline keyboard, e.g. a
	// json.Marshal of models.InlineKeyboardMarkup), "" for none. It goes
	// on the last part of a split text. On an edit, "" removes the
	// message's keyboard.
	Markup string
	// Key, when not empty, makes the call idempotent (at most MaxKeyBytes
	// bytes): Notify (and Edit) record Key -> the job ids atomically with
	// the enqueue, for Config.KeyTTL, and a later call with the same Key
	// enqueues nothing and returns the first call's ids, even after those
	// jobs were sent and acked; Broadcast records Key -> the broadcast id
	// and a later Broadcast with the Key returns that id without fanning
	// out again. Keys of Notify/Edit and of Broadcast are separate. A
	// handler that may run again after a crash derives its keys from the
	// update it handles (e.g. "upd:<update_id>:<reply index>").
	Key string
	// Paid, on a Broadcast, enqueues the copies on tgjob.QueuePaid: the
	// worker sends them with allow_paid_broadcast (0.1 Telegram Star each,
	// under the paid queue's own budget, Limits.PaidPerSecond). Ignored by
	// Notify and Edit.
	Paid bool
	// Editable keeps the Telegram message id of the message once sent
	// (Chats().SentMessageID, for Config.SentTTL), so it can be edited
	// later through its job id (EditLatest's ref: a game board, a
	// progress message). A message never edited needs none and leaves
	// nothing behind once delivered (false, the default).
	Editable bool
}

// MaxKeyBytes is the longest Message.Key.
const MaxKeyBytes = 256

// KeyName returns the Valkey key under which Notify and Edit remember
// Message.Key key (on the store's tag): a caller that knows a key will
// never be used again (the update it guards was marked handled) may
// delete it before Config.KeyTTL.
func (n *Notifier) KeyName(key string) string { return n.keys.once(key) }

// Config tunes a Notifier; zero fields take the defaults.
type Config struct {
	// ProgressTTL is how long a broadcast's progress is kept after its
	// last update (default 24 h).
	ProgressTTL time.Duration
	// BatchSize is how many chats one lanes Enqueue call of Broadcast
	// covers (default 5,000: ten 500-job script calls in one pipelined
	// round trip), bounding the memory of one round trip; the next batch
	// is encoded while one is being enqueued.
	BatchSize int
	// MaxUnits is the part size of Split in UTF-16 units (default
	// tgtext.MaxTextUnits; lower only in tests).
	MaxUnits int
	// SentTTL is how long the Telegram message id of a sent job of an
	// Editable message is kept for Chats().SentMessageID (default 24 h): a
	// message older than that can no longer be edited through its job id.
	SentTTL time.Duration
	// KeyTTL is how long a Message.Key is remembered (default 24 h): a
	// call repeated later enqueues again.
	KeyTTL time.Duration
	// CoalesceTTL is how long EditLatest remembers the pending edit of a
	// message after its last call (default 1 h): an edit still queued
	// after that is no longer replaced in place (the next one is queued
	// behind it; nothing is lost).
	CoalesceTTL time.Duration
}

// Notifier turns messages into lanes jobs on the chats' lanes. Safe for
// concurrent use.
type Notifier struct {
	store *lanes.Store
	c     valkey.Client
	keys  keyspace
	// chats is the chats' delivery state (inactive, aliases, sent ids),
	// shared with the worker through Chats.
	chats  *chatstate.Store
	minter *lanes.Minter
	cfg    Config
	// startScript begins a broadcast (lua/start.lua), one per Notifier:
	// no package-level state.
	startScript *valkey.Lua
	// haltScript halts and resumes the paid queue (lua/halt.lua).
	haltScript *valkey.Lua
	// stopDoneScript settles a stop's last counts and marks it finished
	// (lua/stopdone.lua).
	stopDoneScript *valkey.Lua
	// copies caches lazy broadcasts' templates (ExpandCopy).
	copies copyCache
	// lastSent is the last broadcast's sent tallies (SentTally), nil
	// before the first.
	lastSent atomic.Pointer[sentTallies]
}

// New returns a Notifier enqueueing on store (built with
// Limits.StoreOptions or NewStore) that keeps its own keys (broadcast
// progress, idempotency keys, and the chats' delivery state, see Chats)
// under store's tag through client c (the program's client; the notifier
// never borrows the store's). Errors: ErrInvalid for a nil c or store.
func New(c valkey.Client, store *lanes.Store, cfg Config) (*Notifier, error) {
	if c == nil || store == nil {
		return nil, invalid("nil client or store")
	}
	if cfg.ProgressTTL <= 0 {
		cfg.ProgressTTL = 24 * time.Hour
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 5000
	}
	if cfg.MaxUnits <= 0 || cfg.MaxUnits > tgtext.MaxTextUnits {
		cfg.MaxUnits = tgtext.MaxTextUnits
	}
	if cfg.SentTTL <= 0 {
		cfg.SentTTL = 24 * time.Hour
	}
	if cfg.KeyTTL <= 0 {
		cfg.KeyTTL = 24 * time.Hour
	}
	if cfg.CoalesceTTL <= 0 {
		cfg.CoalesceTTL = time.Hour
	}
	return &Notifier{
		store: store, c: c, keys: keyspace{tag: store.Tag()}, minter: lanes.NewMinter(), cfg: cfg,
		chats:          chatstate.New(c, store.Tag(), cfg.SentTTL),
		startScript:    luascript.Must(luaFS, "start"),
		haltScript:     luascript.Must(luaFS, "halt"),
		stopDoneScript: luascript.Must(luaFS, "stopdone"),
	}, nil
}

// Store returns the lanes store the notifier enqueues on.
func (n *Notifier) Store() *lanes.Store { return n.store }

// Chats returns the chats' delivery state the notifier reads (aliases,
// inactive marks) and the worker writes (403s, migrations, sent message
// ids).
func (n *Notifier) Chats() *chatstate.Store { return n.chats }

// validate checks chatID and msg (not the text's length).
func validate(chatID int64, msg Message) error {
	if chatID == 0 {
		return invalid("chat id 0")
	}
	if msg.Class.Queue() == "" {
		return invalid(fmt.Sprintf("unknown class %d", msg.Class))
	}
	switch msg.ParseMode {
	case "", "HTML", "MarkdownV2", "Markdown":
	default:
		return invalid(fmt.Sprintf("parse mode %q", msg.ParseMode))
	}
	if !utf8.ValidString(msg.Text) {
		return invalid("text is not valid UTF-8")
	}
	if strings.TrimSpace(msg.Text) == "" {
		return &invalidErr{msg: "notifier: empty text", err: ErrEmptyText}
	}
	if len(msg.Key) > MaxKeyBytes {
		return invalid(fmt.Sprintf("key of %d bytes: at most %d", len(msg.Key), MaxKeyBytes))
	}
	if msg.Markup != "" && !json.Valid([]byte(msg.Markup)) {
		return invalid("reply markup is not JSON")
	}
	return nil
}

// jobs validates msg and returns its parts as payload templates.
func (n *Notifier) jobs(chatID int64, msg Message) ([]tgjob.Job, error) {
	if err := validate(chatID, msg); err != nil {
		return nil, err
	}
	parts := Split(msg.Text, n.cfg.MaxUnits)
	out := make([]tgjob.Job, len(parts))
	for i, p := range parts {
		out[i] = tgjob.Job{Chat: chatID, Text: p, ParseMode: msg.ParseMode, Silent: msg.Silent, Track: msg.Editable}
		if len(parts) > 1 {
			out[i].Part, out[i].Parts = i+1, len(parts)
		}
	}
	out[0].ReplyTo = msg.ReplyTo
	out[len(out)-1].Markup = msg.Markup
	return out, nil
}

// Notify enqueues msg for chatID on its class's queue, on the lane of the
// chat (group = chat id in decimal; after a migration, the new chat's id).
// A long text becomes several jobs, in order. It returns the job ids. With
// msg.Key, a repeated call returns the first call's ids and enqueues
// nothing (see Message.Key).
//
// Errors: ErrInvalid / ErrEmptyText (nothing written); *InactiveError
// (errors.Is ErrInactive) for a Notification to a chat marked inactive;
// the store's errors (wrapped).
func (n *Notifier) Notify(ctx context.Context, chatID int64, msg Message) ([]lanes.JobID, error) {
	jobs, err := n.jobs(chatID, msg)
	if err != nil {
		return nil, err
	}
	return n.enqueue(ctx, chatID, msg, jobs, "notify")
}

// Edit enqueues an editMessageText of message messageID (a message the bot
// sent, e.g. found with Chats().SentMessageID) in chatID, replacing its text with
// msg.Text (and msg.ParseMode), as one job of kind tgjob.KindEdit on the
// chat's lane of msg.Class's queue (Reply by default). So an edit is sent
// in order with the chat's other messages of that class and draws on the
// same global and per-chat budgets. msg.ReplyTo and msg.Silent do not apply
// to an edit. It returns the job id.
//
// The worker treats Telegram's 400 "message is not modified" as success and
// dead-letters an edit answered 400 "message to edit not found".
//
// Errors: ErrInvalid / ErrEmptyText (also for messageID <= 0 and a text
// over tgtext.MaxTextUnits: an edit cannot be split); *InactiveError for a
// Notification class edit to a chat marked inactive; the store's errors.
func (n *Notifier) Edit(ctx context.Context, chatID int64, messageID int, msg Message) ([]lanes.JobID, error) {
	if err := validate(chatID, msg); err != nil {
		return nil, err
	}
	if messageID <= 0 {
		return nil, invalid(fmt.Sprintf("edit of message id %d", messageID))
	}
	if u := tgtext.UTF16Len(msg.Text); u > tgtext.MaxTextUnits {
		return nil, invalid(fmt.Sprintf("edit text of %d UTF-16 units: at most %d (an edit cannot be split)", u, tgtext.MaxTextUnits))
	}
	j := tgjob.Job{Kind: tgjob.KindEdit, MessageID: messageID, Chat: chatID, Text: msg.Text, ParseMode: msg.ParseMode, Markup: msg.Markup}
	return n.enqueue(ctx, chatID, msg, []tgjob.Job{j}, "edit")
}

// enqueue puts jobs, in order, on the lane of chatID (after aliases) in
// msg.Class's queue; a Notification to an inactive chat is refused.
func (n *Notifier) enqueue(ctx context.Context, chatID int64, msg Message, jobs []tgjob.Job, what string) ([]lanes.JobID, error) {
	target, err := n.chats.Resolve(ctx, chatID)
	if err != nil {
		return nil, fmt.Errorf("notifier: %s chat %d: %w", what, chatID, err)
	}
	if msg.Class == Notification {
		in, err := n.chats.IsInactive(ctx, target)
		if err != nil {
			return nil, fmt.Errorf("notifier: %s chat %d: %w", what, chatID, err)
		}
		if in {
			return nil, &InactiveError{ChatID: target}
		}
	}
	group := tgjob.Group(target)
	items := make([]lanes.Item, len(jobs))
	ids := make([]lanes.JobID, len(jobs))
	for i, j := range jobs {
		p, err := j.Encode()
		if err != nil {
			return nil, err
		}
		ids[i] = n.minter.New()
		items[i] = lanes.Item{Group: group, ID: ids[i], Payload: p}
	}
	if msg.Key != "" {
		if len(items) > lanes.MaxDedupeItems {
			return nil, invalid(fmt.Sprintf("%s with a key: %d parts: at most %d", what, len(items), lanes.MaxDedupeItems))
		}
		res, err := n.store.Enqueue(ctx, msg.Class.Queue(), items, lanes.Dedupe(n.keys.once(msg.Key), n.cfg.KeyTTL))
		if err != nil {
			return nil, fmt.Errorf("notifier: %s chat %d: %w", what, chatID, err)
		}
		return res.IDs, nil
	}
	if _, err := n.store.Enqueue(ctx, msg.Class.Queue(), items); err != nil {
		return nil, fmt.Errorf("notifier: %s chat %d: %w", what, chatID, err)
	}
	return ids, nil
}
