package notifier

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/tgjob"
	"github.com/codemojex/codemojex/lanes"
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
	// MaxTextUnits UTF-16 units, it is sent as several messages (see
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
}

// Config tunes a Notifier; zero fields take the defaults.
type Config struct {
	// ProgressTTL is how long a broadcast's progress is kept after its
	// last update (default 24 h).
	ProgressTTL time.Duration
	// BatchSize is how many chats one EnqueueBatch call of Broadcast
	// covers (default 1,000), bounding the memory of one round trip.
	BatchSize int
	// MaxUnits is the part size of Split in UTF-16 units (default
	// MaxTextUnits; lower only in tests).
	MaxUnits int
}

// Notifier turns messages into lanes jobs on the chats' lanes. Safe for
// concurrent use.
type Notifier struct {
	store  *lanes.Store
	c      valkey.Client
	keys   keyspace
	minter *lanes.Minter
	cfg    Config
	// record1 is the progress script (recordLua), one per Notifier: no
	// package-level state.
	record1 *valkey.Lua
}

// New returns a Notifier enqueueing on store (built with
// Limits.StoreOptions or NewStore); its own keys live under store's tag.
func New(store *lanes.Store, cfg Config) (*Notifier, error) {
	if store == nil {
		return nil, invalid("nil store")
	}
	if cfg.ProgressTTL <= 0 {
		cfg.ProgressTTL = 24 * time.Hour
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 1000
	}
	if cfg.MaxUnits <= 0 || cfg.MaxUnits > MaxTextUnits {
		cfg.MaxUnits = MaxTextUnits
	}
	return &Notifier{
		store: store, c: store.Client(), keys: keyspace{tag: store.Tag()}, minter: lanes.NewMinter(), cfg: cfg,
		record1: valkey.NewLuaScript(recordLua),
	}, nil
}

// Store returns the lanes store the notifier enqueues on.
func (n *Notifier) Store() *lanes.Store { return n.store }

// jobs validates msg and returns its parts as payload templates.
func (n *Notifier) jobs(chatID int64, msg Message) ([]tgjob.Job, error) {
	if chatID == 0 {
		return nil, invalid("chat id 0")
	}
	if msg.Class.Queue() == "" {
		return nil, invalid(fmt.Sprintf("unknown class %d", msg.Class))
	}
	switch msg.ParseMode {
	case "", "HTML", "MarkdownV2", "Markdown":
	default:
		return nil, invalid(fmt.Sprintf("parse mode %q", msg.ParseMode))
	}
	if !utf8.ValidString(msg.Text) {
		return nil, invalid("text is not valid UTF-8")
	}
	if strings.TrimSpace(msg.Text) == "" {
		return nil, &invalidErr{msg: "notifier: empty text", err: ErrEmptyText}
	}
	parts := Split(msg.Text, n.cfg.MaxUnits)
	out := make([]tgjob.Job, len(parts))
	for i, p := range parts {
		out[i] = tgjob.Job{Chat: chatID, Text: p, ParseMode: msg.ParseMode, Silent: msg.Silent}
		if len(parts) > 1 {
			out[i].Part, out[i].Parts = i+1, len(parts)
		}
	}
	out[0].ReplyTo = msg.ReplyTo
	return out, nil
}

// Notify enqueues msg for chatID on its class's queue, on the lane of the
// chat (group = chat id in decimal; after a migration, the new chat's id).
// A long text becomes several jobs, in order. It returns the job ids.
//
// Errors: ErrInvalid / ErrEmptyText (nothing written); *InactiveError
// (errors.Is ErrInactive) for a Notification to a chat marked inactive;
// the store's errors (wrapped).
func (n *Notifier) Notify(ctx context.Context, chatID int64, msg Message) ([]lanes.JobID, error) {
	jobs, err := n.jobs(chatID, msg)
	if err != nil {
		return nil, err
	}
	target, err := n.Resolve(ctx, chatID)
	if err != nil {
		return nil, err
	}
	if msg.Class == Notification {
		in, err := n.IsInactive(ctx, target)
		if err != nil {
			return nil, err
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
	if _, err := n.store.EnqueueBatch(ctx, msg.Class.Queue(), items); err != nil {
		return nil, fmt.Errorf("notifier: notify chat %d: %w", chatID, err)
	}
	return ids, nil
}
