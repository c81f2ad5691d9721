// Package tgjob is the payload of one outbound Telegram message as it sits
// in a lanes queue: written by package notifier, read by package worker.
//
// A job is one Bot API call: a sendMessage (Kind KindSend, the default) or
// an editMessageText of a message the bot sent (Kind KindEdit). Its lane (lanes group) is the destination
// chat id in decimal ("-100123" for a supergroup); the payload carries the
// text and options. After a group migrates, its jobs move to the new chat's
// lane, so the worker always sends to the lane's chat id, not to Job.Chat.
package tgjob

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Queue names of the message classes. All are lanes queues of one store,
// claimed in this order (replies first; see notifier.BulkShare) and all Ordered.
const (
	// QueueReply holds answers to a user's command.
	QueueReply = "reply"
	// QueuePaid holds the copies of paid broadcasts: the worker sends
	// every job of this queue, and only those, with allow_paid_broadcast
	// (0.1 Telegram Star each, up to 1,000 messages/s), under the queue's
	// own budget.
	QueuePaid = "paid"
	// QueueNotify holds notifications (fan-out, free broadcasts).
	QueueNotify = "notify"
)

// Queues lists the queues of the message classes (notifier.Class) in claim
// priority order: reply, notify.
func Queues() []string { return []string{QueueReply, QueueNotify} }

// AllQueues lists every queue the worker claims, in claim priority order:
// reply, paid, notify (the paid queue holds only paid broadcast copies).
func AllQueues() []string { return []string{QueueReply, QueuePaid, QueueNotify} }

// Version is the payload format version written by Encode.
const Version = 1

// Kinds of job (Job.Kind).
const (
	// KindSend is a sendMessage; payloads written before kinds existed
	// have no kind and are sends.
	KindSend = ""
	// KindEdit is an editMessageText of message Job.MessageID in the
	// lane's chat.
	KindEdit = "edit"
	// KindCopy is a copy of a lazy broadcast (notifier.Filler): a
	// sendMessage whose text and options are part Part of broadcast
	// Broadcast's record, stored once for every copy; the payload carries
	// only the broadcast id, the chat and the part (Text is empty). The
	// worker expands it (notifier.Notifier.ExpandCopy) before sending.
	KindCopy = "copy"
)

// ErrMalformed is wrapped by Decode's errors: the payload cannot be used.
var ErrMalformed = errors.New("tgjob: malformed job")

// Job is one message to send.
type Job struct {
	// V is the format version (Version).
	V int `json:"v"`
	// Kind is KindSend ("", omitted) or KindEdit.
	Kind string `json:"kind,omitempty"`
	// MessageID is the message an edit replaces the text of (KindEdit
	// only; > 0 unless Ref names it).
	MessageID int `json:"mid,omitempty"`
	// Ref, on an edit, is the job id of the send whose message it edits:
	// the worker looks the message id up when it sends the edit
	// (chatstate.Store.SentMessageID), so an edit can be queued before
	// its message is sent (the lane keeps them in order).
	Ref string `json:"ref,omitempty"`
	// Fresh, on an edit, sends the text as a new message when the message
	// cannot be edited any more (400 "message to edit not found" or
	// "message can't be edited", or Ref's message id is unknown), and
	// records the new message id under Ref, so later edits go to it.
	Fresh bool `json:"fresh,omitempty"`
	// Track, on a send, has the worker record the message id it was
	// sent as (chatstate.Store.RecordMessageID), for later edits by job
	// id (Ref); a send without it leaves no record once delivered.
	Track bool `json:"trk,omitempty"`
	// Markup is the reply_markup as JSON (an inline keyboard), "" for
	// none: an edit without Markup removes the message's keyboard.
	Markup string `json:"rm,omitempty"`
	// Chat is the chat id the caller addressed (before any migration alias).
	Chat int64 `json:"chat"`
	// Text is the message text, 1..4096 UTF-16 code units, valid UTF-8.
	Text string `json:"text"`
	// ParseMode is "", "HTML", "MarkdownV2" or "Markdown".
	ParseMode string `json:"pm,omitempty"`
	// ReplyTo is the message id this message answers (0: none); sent with
	// allow_sending_without_reply. Not used by edits.
	ReplyTo int `json:"rt,omitempty"`
	// Silent sends without a notification sound (disable_notification).
	Silent bool `json:"sil,omitempty"`
	// Paid is set by the worker, never encoded: the job was claimed from
	// QueuePaid and is sent with allow_paid_broadcast.
	Paid bool `json:"-"`
	// Broadcast is the id of the broadcast the job belongs to ("" for none).
	Broadcast string `json:"bc,omitempty"`
	// Part and Parts number the parts of a split text (1-based; 0 when the
	// text was not split).
	Part  int `json:"part,omitempty"`
	Parts int `json:"parts,omitempty"`
	// Lang is a copy's language (KindCopy): the worker sends its
	// broadcast's template of that language, else the default one ("":
	// the default).
	Lang string `json:"l,omitempty"`
}

// Encode returns the payload bytes (JSON).
func (j Job) Encode() ([]byte, error) {
	j.V = Version
	b, err := json.Marshal(j)
	if err != nil {
		return nil, fmt.Errorf("tgjob: encode: %w", err)
	}
	return b, nil
}

// ChatEncoder returns a function that encodes j for chat: the same bytes
// Encode returns with j.Chat set to chat. The JSON encoding of everything
// else is done once, here, so a broadcast pays for the text once, not once
// per chat. Errors: as Encode.
func (j Job) ChatEncoder() (func(chat int64) []byte, error) {
	j.Chat = 0
	b, err := j.Encode()
	if err != nil {
		return nil, err
	}
	// "chat" is never omitted and precedes the text, so its first
	// occurrence is the field itself (a quote inside a string is escaped).
	const field = `"chat":0`
	i := bytes.Index(b, []byte(field))
	if i < 0 {
		return nil, fmt.Errorf("tgjob: encode: no chat field in %q", b)
	}
	head, tail := b[:i+len(field)-1], b[i+len(field):]
	return func(chat int64) []byte {
		out := make([]byte, 0, len(b)+20)
		out = append(out, head...)
		out = strconv.AppendInt(out, chat, 10)
		return append(out, tail...)
	}, nil
}

// Decode parses a payload. Errors wrap ErrMalformed: not JSON, unknown
// version, unknown kind, an edit without a message id, empty or invalid
// UTF-8 text. A payload without a kind (written before kinds existed) is a
// send.
func Decode(p []byte) (Job, error) {
	j, ok := decodeFlat(p)
	if !ok {
		j = Job{}
		if err := json.Unmarshal(p, &j); err != nil {
			return Job{}, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
	}
	if j.V != Version {
		return Job{}, fmt.Errorf("%w: version %d", ErrMalformed, j.V)
	}
	switch j.Kind {
	case KindSend:
	case KindEdit:
		if j.MessageID <= 0 && j.Ref == "" {
			return Job{}, fmt.Errorf("%w: edit of message id %d", ErrMalformed, j.MessageID)
		}
	case KindCopy:
		if j.Broadcast == "" {
			return Job{}, fmt.Errorf("%w: a broadcast copy without a broadcast id", ErrMalformed)
		}
		return j, nil
	default:
		return Job{}, fmt.Errorf("%w: kind %q", ErrMalformed, j.Kind)
	}
	if j.Text == "" || !utf8.ValidString(j.Text) {
		return Job{}, fmt.Errorf("%w: empty or invalid UTF-8 text", ErrMalformed)
	}
	return j, nil
}

// Group returns the lane (group) of chat id: its decimal form.
func Group(chatID int64) string { return strconv.FormatInt(chatID, 10) }

// ChatID parses a lane group back into a chat id. Errors wrap ErrMalformed.
func ChatID(group string) (int64, error) {
	id, err := strconv.ParseInt(group, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("%w: lane %q is not a chat id", ErrMalformed, group)
	}
	return id, nil
}

// IsCopy reports whether j is a lazy broadcast's copy still to expand
// (KindCopy).
func (j Job) IsCopy() bool { return j.Kind == KindCopy }

// IsEdit reports whether j is an editMessageText.
func (j Job) IsEdit() bool { return j.Kind == KindEdit }
