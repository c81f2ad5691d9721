package tgemu

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// getUpdates limits (Telegram Bot API, getUpdates: "limit ... Values between
// 1-100 are accepted. Defaults to 100.").
const (
	maxUpdatesLimit = 100
	// maxPollTimeout caps the long-poll timeout; Telegram documents no
	// maximum but answers after about 50 s at most in practice.
	maxPollTimeout = 50 * time.Second
)

const conflictOtherPoll = "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
const conflictWebhook = "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"

// poller is one pending getUpdates; superseded is closed when a newer
// getUpdates arrives, which answers this one 409.
type poller struct {
	superseded chan struct{}
}

// TextMessage describes a text message a user writes, for InjectMessage.
type TextMessage struct {
	// ChatID is where the message is written: > 0 a private chat with the
	// bot (then it must be From.ID, and From.ID defaults to it), < 0 a
	// group or supergroup.
	ChatID int64
	// From is the sender. Zero fields get defaults (first name "User <id>",
	// language "en"); IsBot is forced false.
	From models.User
	// Text is the message text. A /command at a word start gets a
	// bot_command entity, as Telegram adds one (go-telegram/bot's command
	// handlers match on it).
	Text string
	// ReplyToMessageID, when not 0, is a message in the same chat (sent by
	// the bot or injected) that this one replies to.
	ReplyToMessageID int
}

// CallbackQuery describes a user pressing an inline keyboard button, for
// InjectCallbackQuery.
type CallbackQuery struct {
	From models.User // the user pressing; From.ID is required for groups
	// ChatID and MessageID name the bot message carrying the keyboard.
	ChatID    int64
	MessageID int
	Data      string // callback_data of the button
}

// CallbackAnswer is one accepted answerCallbackQuery.
type CallbackAnswer struct {
	Time      time.Time // emulator clock when the answer was accepted
	TapTime   time.Time // emulator clock when the tap was queued (Time - TapTime: tap-to-answer latency)
	QueryID   string
	Text      string
	ShowAlert bool
	URL       string
}

type callbackState struct {
	answered bool
	at       time.Time // emulator clock when the tap was queued
}

// botCommandEntities returns the bot_command entities Telegram would attach
// to text: "/" + 1-32 of [A-Za-z0-9_] (+ optional "@botname") at the start
// or after whitespace. Offsets and lengths are in UTF-16 code units.
func botCommandEntities(text string) []models.MessageEntity {
	var out []models.MessageEntity
	units := 0
	prevSpace := true
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		if r == '/' && prevSpace {
			j := i + 1
			for j < len(text) && (isAlnum(text[j]) || text[j] == '_') {
				j++
			}
			if n := j - i - 1; n >= 1 && n <= 32 {
				if at(text, j) == '@' {
					k := j + 1
					for k < len(text) && (isAlnum(text[k]) || text[k] == '_') {
						k++
					}
					if k > j+1 {
						j = k
					}
				}
				if c := at(text, j); c == 0 || isSpace(c) || c < utf8.RuneSelf && !isAlnum(c) && c != '/' {
					out = append(out, models.MessageEntity{
						Type: models.MessageEntityTypeBotCommand, Offset: units, Length: j - i,
					})
					units += j - i
					i = j
					prevSpace = false
					continue
				}
			}
		}
		units += tgtext.UTF16Len(string(r))
		prevSpace = r == ' ' || r == '\n' || r == '\t' || r == '\r'
		i += size
	}
	return out
}

// InjectMessage queues an update carrying a text message from a user, as if
// the user had written it, and returns the update (with update_id and
// message_id assigned). The chat becomes known. The message takes the next
// message_id of the chat (ids are shared with the bot's messages) and the
// emulator clock's date.
func (e *Emulator) InjectMessage(m TextMessage) (models.Update, error) {
	if m.ChatID == 0 {
		return models.Update{}, errors.New("tgemu: InjectMessage: ChatID is 0")
	}
	from := m.From
	if m.ChatID > 0 {
		if from.ID == 0 {
			from.ID = m.ChatID
		}
		if from.ID != m.ChatID {
			return models.Update{}, fmt.Errorf("tgemu: InjectMessage: private chat %d must be written by user %d, not %d", m.ChatID, m.ChatID, from.ID)
		}
	} else if from.ID <= 0 {
		return models.Update{}, fmt.Errorf("tgemu: InjectMessage: group chat %d needs From.ID", m.ChatID)
	}
	from.IsBot = false
	if from.FirstName == "" {
		from.FirstName = "User " + strconv.FormatInt(from.ID, 10)
	}
	if from.LanguageCode == "" {
		from.LanguageCode = "en"
	}

	e.mu.Lock()
	defer e.mu.Unlock()
	chat := models.Chat{ID: m.ChatID}
	if m.ChatID > 0 {
		chat = models.Chat{ID: m.ChatID, Type: models.ChatTypePrivate, FirstName: from.FirstName, LastName: from.LastName, Username: from.Username}
	}
	cs := e.chatLocked(chat, true)
	now := e.now()
	msg := models.Message{
		ID:       cs.newMessageIDLocked(),
		From:     &from,
		Date:     int(now.Unix()),
		Chat:     cs.chat,
		Text:     m.Text,
		Entities: botCommandEntities(m.Text),
	}
	if m.ReplyToMessageID != 0 {
		rt := cs.byID[m.ReplyToMessageID]
		if rt == nil {
			cs.nextMsgID-- // keep ids dense
			return models.Update{}, fmt.Errorf("tgemu: InjectMessage: chat %d has no message %d to reply to", m.ChatID, m.ReplyToMessageID)
		}
		cp := rt.msg
		cp.ReplyToMessage = nil
		msg.ReplyToMessage = &cp
	}
	sm := &storedMessage{msg: msg, at: now, raw: m.Text}
	cs.heard = now
	cs.msgs = append(cs.msgs, sm)
	cs.byID[msg.ID] = sm
	return e.queueLocked(models.Update{Message: &msg}), nil
}

// InjectCallbackQuery queues a callback_query update for a button on a bot
// message, as if From had pressed it, and returns the update. The query id
// is unique and must then be answered with answerCallbackQuery (once).
func (e *Emulator) InjectCallbackQuery(q CallbackQuery) (models.Update, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chats[q.ChatID]
	if cs == nil {
		return models.Update{}, fmt.Errorf("tgemu: InjectCallbackQuery: unknown chat %d", q.ChatID)
	}
	sm := cs.byID[q.MessageID]
	if sm == nil || !sm.fromBot {
		return models.Update{}, fmt.Errorf("tgemu: InjectCallbackQuery: chat %d has no bot message %d", q.ChatID, q.MessageID)
	}
	cs.heard = e.now()
	from := q.From
	if from.ID == 0 {
		if q.ChatID < 0 {
			return models.Update{}, fmt.Errorf("tgemu: InjectCallbackQuery: group chat %d needs From.ID", q.ChatID)
		}
		from.ID = q.ChatID
	}
	if from.FirstName == "" {
		from.FirstName = "User " + strconv.FormatInt(from.ID, 10)
	}
	e.nextCallback++
	id := strconv.FormatInt(e.nextCallback, 10) + strconv.FormatInt(from.ID, 10)
	msg := sm.msg
	cq := &models.CallbackQuery{
		ID:           id,
		From:         from,
		Message:      models.MaybeInaccessibleMessage{Type: models.MaybeInaccessibleMessageTypeMessage, Message: &msg},
		ChatInstance: strconv.FormatInt(q.ChatID*7919, 10),
		Data:         q.Data,
	}
	return e.queueLocked(models.Update{CallbackQuery: cq}), nil
}

// InjectUpdate queues a raw update. An update_id of 0 is assigned the next
// id; a non-zero one is kept and later ids continue after it. Chats of the
// message-like fields become known, and a callback query id becomes
// answerable.
func (e *Emulator) InjectUpdate(u models.Update) models.Update {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, m := range []*models.Message{u.Message, u.EditedMessage, u.ChannelPost, u.EditedChannelPost} {
		if m != nil && m.Chat.ID != 0 {
			cs := e.chats[m.Chat.ID]
			if cs == nil {
				cs = e.chatLocked(m.Chat, true)
				cs.chat = m.Chat // as given: no synthesized names
				if cs.chat.Type == "" {
					cs.chat.Type = inferChat(m.Chat).Type
				}
			}
			if m.ID > cs.nextMsgID {
				cs.nextMsgID = m.ID
			}
			cs.heard = e.now()
		}
	}
	return e.queueLocked(u)
}

func (e *Emulator) queueLocked(u models.Update) models.Update {
	if u.ID == 0 {
		u.ID = e.nextUpdateID
	}
	if u.ID >= e.nextUpdateID {
		e.nextUpdateID = u.ID + 1
	}
	if u.CallbackQuery != nil && u.CallbackQuery.ID != "" {
		e.callbacks[u.CallbackQuery.ID] = &callbackState{at: e.now()}
	}
	e.updates = append(e.updates, u)
	e.broadcastLocked()
	return u
}

// SetNextUpdateID makes id the update_id of the next update queued without
// one, as Telegram does after a week without updates (it then picks the next
// id at random) or as a switch between the cloud Bot API and a local Bot
// API server (each has its own id space) looks to a bot: ids may go down.
// Queued updates keep their ids.
func (e *Emulator) SetNextUpdateID(id int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nextUpdateID = id
}

// NextUpdateID is the update_id the next queued update will get.
func (e *Emulator) NextUpdateID() int64 {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.nextUpdateID
}

// maxOffsetAhead is how far beyond the next update_id a getUpdates offset
// may be: a larger offset is ignored (the request is answered from the head
// of the queue and confirms nothing), as the Bot API server does.
const maxOffsetAhead = 10

// PendingUpdates lists the queued updates not yet confirmed by a getUpdates
// offset.
func (e *Emulator) PendingUpdates() []models.Update {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]models.Update(nil), e.updates...)
}

// Polling reports whether a getUpdates request is pending (long polling)
// right now. Wait for it with WaitUntil(ctx, emu.Polling).
func (e *Emulator) Polling() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.activePoll != nil
}

// SetWebhook pretends a webhook is set (url != "") or not: while one is set,
// getUpdates is answered 409 like Telegram does, until deleteWebhook. No
// update is POSTed to it (setWebhook by the bot does that).
func (e *Emulator) SetWebhook(url string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.webhookURL, e.webhookSecret = url, noDelivery
	e.startWebhookLocked()
}

// WebhookURL is the webhook currently set ("" after deleteWebhook).
func (e *Emulator) WebhookURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.webhookURL
}

// confirmLocked applies a getUpdates offset: updates with update_id < offset
// are forgotten; a negative offset keeps only the last -offset updates.
func (e *Emulator) confirmLocked(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(e.updates) && e.updates[i].ID < offset {
			i++
		}
		e.updates = e.updates[i:]
	case offset < 0:
		if keep := int(-offset); keep < len(e.updates) {
			e.updates = e.updates[len(e.updates)-keep:]
		}
	}
}

// getUpdates implements https://core.telegram.org/bots/api#getupdates:
// offset (confirms earlier updates for good; an offset more than
// maxOffsetAhead beyond the next update_id is ignored, so the queue is
// answered from its head), limit (1-100, default 100),
// timeout (long polling, seconds, capped at 50 s). A newer getUpdates while
// one is pending answers the older 409 "Conflict: terminated by other
// getUpdates request...". Close answers pending polls with an empty result.
func (e *Emulator) getUpdates(ctx context.Context, c *call) reply {
	p := c.params
	offset, _ := strconv.ParseInt(strings.TrimSpace(p["offset"]), 10, 64)
	limit, err := strconv.Atoi(strings.TrimSpace(p["limit"]))
	if err != nil || limit <= 0 || limit > maxUpdatesLimit {
		limit = maxUpdatesLimit
	}
	timeoutSec, _ := strconv.Atoi(strings.TrimSpace(p["timeout"]))
	timeout := min(time.Duration(max(timeoutSec, 0))*time.Second, maxPollTimeout)

	e.mu.Lock()
	if e.webhookURL != "" {
		e.mu.Unlock()
		return errReply(http.StatusConflict, conflictWebhook, nil)
	}
	if e.activePoll != nil {
		close(e.activePoll.superseded)
	}
	me := &poller{superseded: make(chan struct{})}
	e.activePoll = me
	if offset > e.nextUpdateID+maxOffsetAhead {
		offset = 0 // out of the server's range: ignored, nothing confirmed
	}
	e.confirmLocked(offset)
	e.broadcastLocked()
	e.mu.Unlock()
	defer func() {
		e.mu.Lock()
		if e.activePoll == me {
			e.activePoll = nil
			e.broadcastLocked()
		}
		e.mu.Unlock()
	}()

	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		e.mu.Lock()
		n := min(len(e.updates), limit)
		batch := append([]models.Update{}, e.updates[:n]...)
		changed := e.changed
		e.mu.Unlock()
		if n > 0 || timeout == 0 {
			return okReply(batch)
		}
		select {
		case <-changed:
		case <-me.superseded:
			return errReply(http.StatusConflict, conflictOtherPoll, nil)
		case <-deadline.C:
			return okReply([]models.Update{})
		case <-e.closed:
			return okReply([]models.Update{})
		case <-ctx.Done():
			return reply{canceled: true}
		}
	}
}
