package tgemu

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Message is one message the bot sent to a chat, as the emulator recorded
// it.
type Message struct {
	ChatID int64
	ID     int       // message_id, increasing per chat
	Time   time.Time // emulator clock when the sendMessage was accepted
	// Text is the text parameter as sent, markup included.
	Text string
	// ParseMode is the parse_mode parameter ("" for plain text).
	ParseMode string
	// ReplyToMessageID is the message this one replied to, 0 if none.
	ReplyToMessageID int
	// ReplyMarkup is the reply_markup parameter (JSON) as sent, "" if none.
	ReplyMarkup string
	// Paid: sent with allow_paid_broadcast true (a paid broadcast copy,
	// charged 0.1 Star).
	Paid bool
	// Edits are the editMessageText calls accepted for this message, oldest
	// first.
	Edits []Edit
}

// CurrentText is the text after the last edit (Text when never edited).
func (m Message) CurrentText() string {
	if len(m.Edits) > 0 {
		return m.Edits[len(m.Edits)-1].Text
	}
	return m.Text
}

// Edit is one accepted editMessageText.
type Edit struct {
	Time        time.Time // emulator clock when accepted
	Text        string    // new text as sent, markup included
	ParseMode   string
	ReplyMarkup string // JSON as sent, "" if none
}

func (m *storedMessage) public() Message {
	out := Message{
		ChatID:      m.msg.Chat.ID,
		ID:          m.msg.ID,
		Time:        m.at,
		Text:        m.raw,
		ParseMode:   m.mode,
		ReplyMarkup: m.markup,
		Paid:        m.paid,
		Edits:       append([]Edit(nil), m.edits...),
	}
	if m.msg.ReplyToMessage != nil {
		out.ReplyToMessageID = m.msg.ReplyToMessage.ID
	}
	return out
}

// Messages lists what the bot sent to chatID (accepted sendMessage calls),
// in order, with their edits. Messages injected as coming from users are not
// included.
func (e *Emulator) Messages(chatID int64) []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.messagesLocked(chatID)
}

func (e *Emulator) messagesLocked(chatID int64) []Message {
	cs := e.chats[chatID]
	if cs == nil {
		return nil
	}
	var out []Message
	for _, m := range cs.msgs {
		if m.fromBot {
			out = append(out, m.public())
		}
	}
	return out
}

// AllMessages lists every message the bot sent, all chats, ordered by time
// (then chat registration order).
func (e *Emulator) AllMessages() []Message {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []Message
	for _, id := range e.chatOrder {
		out = append(out, e.messagesLocked(id)...)
	}
	sortMessages(out)
	return out
}

func sortMessages(ms []Message) {
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Time.Before(ms[j].Time) })
}

// Telegram's answers to an empty text: the Bot API server refuses an empty
// text parameter itself ("Message text is empty"); a text that is empty
// once parsed and trimmed (only tags, spaces or newlines) is refused by
// TDLib (fix_formatted_text: "Text must be non-empty").
const (
	errTextEmpty    = "message text is empty"
	errTextNonEmpty = "text must be non-empty"
)

// checkText applies Telegram's text rules shared by sendMessage and
// editMessageText and returns the text with markup removed (ParseMarkup)
// and the content it parses to (ParseFormatted) as one comparable string.
// Checks, in order: not empty (raw), valid UTF-8, at most 4096 UTF-16
// units (raw), markup parses, not empty once parsed and trimmed.
func checkText(text, parseMode string) (plain, content string, bad *reply) {
	fail := func(desc string) (string, string, *reply) {
		r := badRequest(desc)
		return "", "", &r
	}
	if text == "" {
		return fail(errTextEmpty)
	}
	if !utf8.ValidString(text) {
		return fail("text must be encoded in UTF-8")
	}
	if tgtext.UTF16Len(text) > tgtext.MaxTextUnits {
		return fail("message is too long")
	}
	plain, err := ParseMarkup(parseMode, text)
	if err != nil {
		return fail(err.Error())
	}
	ft, err := ParseFormatted(parseMode, text)
	if err != nil {
		return fail(err.Error())
	}
	if ft.Text == "" {
		return fail(errTextNonEmpty)
	}
	key, err := json.Marshal(ft)
	if err != nil {
		return fail(err.Error())
	}
	return plain, string(key), nil
}

// replyToID reads reply_parameters (JSON ReplyParameters) or the older
// reply_to_message_id. allowMissing reports allow_sending_without_reply.
func replyToID(p map[string]string) (id int, allowMissing bool) {
	if raw := p["reply_parameters"]; raw != "" {
		var rp struct {
			MessageID                int  `json:"message_id"`
			AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
		}
		if json.Unmarshal([]byte(raw), &rp) == nil {
			return rp.MessageID, rp.AllowSendingWithoutReply
		}
	}
	id, _ = strconv.Atoi(p["reply_to_message_id"])
	return id, p["allow_sending_without_reply"] == "true"
}

// sendMessage implements https://core.telegram.org/bots/api#sendmessage.
// Checks, in order: chat_id present, text valid UTF-8, non-empty, at most
// 4096 UTF-16 units, markup parses, chat known, bot allowed in chat,
// replied-to message exists, for allow_paid_broadcast the Stars balance
// (CannotPayDescription), flood limits.
func (e *Emulator) sendMessage(c *call) reply {
	p := c.params
	chatRaw := strings.TrimSpace(p["chat_id"])
	if chatRaw == "" || chatRaw == "null" {
		return badRequest("chat_id is empty")
	}
	text, mode := p["text"], p["parse_mode"]
	plain, content, bad := checkText(text, mode)
	if bad != nil {
		return *bad
	}
	keyboard, bad := checkReplyMarkup(p["reply_markup"])
	if bad != nil {
		return *bad
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	c.at = e.nowLocked()
	cs, bad := e.resolveChatLocked(chatRaw)
	if bad != nil {
		return *bad
	}
	var replyTo *models.Message
	id, allowMissing := replyToID(p)
	if id != 0 {
		if m := cs.byID[id]; m != nil {
			cp := m.msg
			cp.ReplyToMessage = nil
			replyTo = &cp
		} else if !allowMissing {
			return badRequest("message to be replied not found")
		}
	}
	paid := p["allow_paid_broadcast"] == "true"
	if paid && e.stars >= 0 && e.stars < StarTenthsPerPaidMessage {
		return badRequest(CannotPayDescription)
	}
	if retry := e.admitLocked(cs, c.at, id != 0, paid); retry > 0 {
		cs.tooMany++
		return tooManyRequests(retry)
	}
	if paid {
		e.paidSent++
		if e.stars >= 0 {
			e.stars -= StarTenthsPerPaidMessage
		}
	}

	bu := e.botUser
	msg := models.Message{
		ID:             cs.newMessageIDLocked(),
		From:           &bu,
		Date:           int(c.at.Unix()),
		Chat:           cs.chat,
		Text:           plain,
		ReplyToMessage: replyTo,
	}
	if raw := p["reply_markup"]; raw != "" {
		var kb models.InlineKeyboardMarkup
		if json.Unmarshal([]byte(raw), &kb) == nil && len(kb.InlineKeyboard) > 0 {
			msg.ReplyMarkup = &kb
		}
	}
	sm := &storedMessage{msg: msg, fromBot: true, at: c.at, raw: text, mode: mode, markup: p["reply_markup"], paid: paid,
		content: content, keyboard: keyboard}
	cs.msgs = append(cs.msgs, sm)
	cs.byID[msg.ID] = sm
	e.broadcastLocked()
	r := okReply(msg)
	r.messageID = msg.ID
	return r
}

// notModified is Telegram's answer to an edit that changes nothing.
const notModified = "message is not modified: specified new message content and reply markup are " +
	"exactly the same as a current content and reply markup of the message"

// editMessageText implements https://core.telegram.org/bots/api#editmessagetext
// for messages the bot sent (chat_id + message_id; inline_message_id is not
// supported and answered 400 "MESSAGE_ID_INVALID"). An accepted edit counts
// against the flood limits like a message (global and per chat: Telegram
// answers a burst of edits in a group with 429 just as it does messages);
// an edit refused before that (not modified, not found) does not.
func (e *Emulator) editMessageText(c *call) reply {
	p := c.params
	if p["inline_message_id"] != "" {
		return badRequest("MESSAGE_ID_INVALID")
	}
	chatRaw := strings.TrimSpace(p["chat_id"])
	if chatRaw == "" || chatRaw == "null" {
		return badRequest("chat_id is empty")
	}
	msgID, err := strconv.Atoi(strings.TrimSpace(p["message_id"]))
	if err != nil || msgID <= 0 {
		return badRequest("message identifier is not specified")
	}
	text, mode := p["text"], p["parse_mode"]
	plain, content, bad := checkText(text, mode)
	if bad != nil {
		return *bad
	}
	keyboard, bad := checkReplyMarkup(p["reply_markup"])
	if bad != nil {
		return *bad
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	c.at = e.nowLocked()
	cs, bad := e.resolveChatLocked(chatRaw)
	if bad != nil {
		return *bad
	}
	sm := cs.byID[msgID]
	if sm == nil || sm.deleted {
		return badRequest("message to edit not found")
	}
	if !sm.fromBot || sm.uneditable {
		return badRequest(errCantBeEdited)
	}
	markup := p["reply_markup"]
	if sm.content == content && sm.keyboard == keyboard {
		return badRequest(notModified)
	}
	if retry := e.admitLocked(cs, c.at, false, false); retry > 0 {
		cs.tooMany++
		return tooManyRequests(retry)
	}
	sm.edits = append(sm.edits, Edit{Time: c.at, Text: text, ParseMode: mode, ReplyMarkup: markup})
	sm.msg.Text = plain
	sm.msg.EditDate = int(c.at.Unix())
	sm.msg.ReplyMarkup = nil
	sm.content, sm.keyboard = content, keyboard
	if markup != "" {
		var kb models.InlineKeyboardMarkup
		if json.Unmarshal([]byte(markup), &kb) == nil && len(kb.InlineKeyboard) > 0 {
			sm.msg.ReplyMarkup = &kb
		}
	}
	e.broadcastLocked()
	r := okReply(sm.msg)
	r.messageID = msgID
	return r
}
