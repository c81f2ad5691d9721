package tgemu

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
)

// ChatStatus is the bot's standing in a chat, which decides how sendMessage
// and editMessageText to it are answered.
type ChatStatus int

const (
	// ChatActive: messages are delivered.
	ChatActive ChatStatus = iota
	// ChatBlocked: 403 "Forbidden: bot was blocked by the user".
	ChatBlocked
	// ChatDeactivated: 403 "Forbidden: user is deactivated".
	ChatDeactivated
	// ChatKicked: 403 "Forbidden: bot was kicked from the group chat"
	// ("... from the supergroup chat" for a supergroup).
	ChatKicked
	// ChatMigrated: 400 "Bad Request: group chat was upgraded to a
	// supergroup chat" with parameters.migrate_to_chat_id; set with
	// MigrateChat.
	ChatMigrated
)

func (s ChatStatus) String() string {
	switch s {
	case ChatActive:
		return "active"
	case ChatBlocked:
		return "blocked"
	case ChatDeactivated:
		return "deactivated"
	case ChatKicked:
		return "kicked"
	case ChatMigrated:
		return "migrated"
	default:
		return "ChatStatus(" + strconv.Itoa(int(s)) + ")"
	}
}

// supergroupIDBase: supergroup and channel ids are -100xxxxxxxxxx.
const supergroupIDBase = -1_000_000_000_000

type chatState struct {
	chat      models.Chat
	status    ChatStatus
	migrateTo int64
	nextMsgID int
	msgs      []*storedMessage // bot and user messages, in id order
	byID      map[int]*storedMessage
	window    window
	tooMany   int // 429s answered by the limiter
	// heard is when a user last wrote or tapped in the chat (emulator
	// clock): the bot's messages within ReplyWindow of it are replies
	// (Limits.Reply).
	heard time.Time
}

type storedMessage struct {
	msg     models.Message // as returned to the bot / delivered in updates
	fromBot bool
	at      time.Time
	raw     string // text as sent (before markup parsing)
	mode    string
	markup  string
	paid    bool // sent with allow_paid_broadcast
	// content is the current text as Telegram keeps it (checkText: the
	// FormattedText, JSON) and keyboard the current inline keyboard in
	// canonical form (checkReplyMarkup; "" when none): an edit that
	// changes neither is "message is not modified".
	content, keyboard string
	edits             []Edit
	// deleted: edits answer "message to edit not found" (DeleteMessage);
	// uneditable: "message can't be edited" (MakeUneditable, e.g. a group
	// message older than 48 h).
	deleted, uneditable bool
}

// sentTimes are the times of the bot's accepted sends to the chat: every
// message and every edit of one, as the limiter counts them (admitLocked).
func (cs *chatState) sentTimes() []time.Time {
	var out []time.Time
	for _, m := range cs.msgs {
		if m.fromBot {
			out = append(out, m.at)
			for _, ed := range m.edits {
				out = append(out, ed.Time)
			}
		}
	}
	return out
}

func (cs *chatState) newMessageIDLocked() int {
	cs.nextMsgID++
	return cs.nextMsgID
}

// inferChat fills a missing chat type from the id: > 0 private, below
// -1000000000000 supergroup, other negatives group.
func inferChat(c models.Chat) models.Chat {
	if c.Type == "" {
		switch {
		case c.ID > 0:
			c.Type = models.ChatTypePrivate
		case c.ID < supergroupIDBase:
			c.Type = models.ChatTypeSupergroup
		default:
			c.Type = models.ChatTypeGroup
		}
	}
	if c.Type != models.ChatTypePrivate && c.Title == "" {
		c.Title = fmt.Sprintf("Group %d", c.ID)
	}
	if c.Type == models.ChatTypePrivate && c.FirstName == "" {
		c.FirstName = fmt.Sprintf("User %d", c.ID)
	}
	return c
}

// chatLocked returns the chat, registering it when create is set.
func (e *Emulator) chatLocked(c models.Chat, create bool) *chatState {
	cs := e.chats[c.ID]
	if cs == nil && create {
		cs = &chatState{chat: inferChat(c), byID: make(map[int]*storedMessage)}
		e.chats[c.ID] = cs
		e.chatOrder = append(e.chatOrder, c.ID)
	}
	return cs
}

// AddChat registers a chat so the bot may message it (status ChatActive). A
// missing Type is inferred from the id (> 0 private, <= -1000000000000
// supergroup, else group). Registering a known chat updates its title and
// names and keeps its messages and status.
func (e *Emulator) AddChat(chat models.Chat) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chatLocked(chat, true)
	c := inferChat(chat)
	cs.chat = c
	e.broadcastLocked()
}

// SetChatStatus registers the chat if needed and sets the bot's standing in
// it (see ChatStatus). Use MigrateChat for ChatMigrated.
func (e *Emulator) SetChatStatus(chatID int64, s ChatStatus) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chatLocked(models.Chat{ID: chatID}, true)
	cs.status = s
	cs.migrateTo = 0
	e.broadcastLocked()
}

// MigrateChat marks group chatID as upgraded to supergroup newChatID (which
// is registered as an active supergroup): sendMessage to chatID is then
// answered 400 with parameters.migrate_to_chat_id = newChatID.
func (e *Emulator) MigrateChat(chatID, newChatID int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chatLocked(models.Chat{ID: chatID}, true)
	cs.status = ChatMigrated
	cs.migrateTo = newChatID
	ns := e.chatLocked(models.Chat{ID: newChatID, Type: models.ChatTypeSupergroup, Title: cs.chat.Title}, true)
	ns.status = ChatActive
	e.broadcastLocked()
}

// Chats lists the known chats in registration order.
func (e *Emulator) Chats() []models.Chat {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]models.Chat, 0, len(e.chatOrder))
	for _, id := range e.chatOrder {
		out = append(out, e.chats[id].chat)
	}
	return out
}

// resolveChatLocked finds the chat a chat_id parameter names (an integer id
// or "@username") and checks the bot may write to it. It returns the chat or
// the error reply Telegram gives.
func (e *Emulator) resolveChatLocked(raw string) (*chatState, *reply) {
	raw = strings.TrimSpace(raw)
	var cs *chatState
	if id, err := strconv.ParseInt(raw, 10, 64); err == nil {
		cs = e.chatLocked(models.Chat{ID: id}, e.allowAnyChat && id != 0)
	} else if name, ok := strings.CutPrefix(raw, "@"); ok && name != "" {
		for _, c := range e.chats {
			if strings.EqualFold(c.chat.Username, name) {
				cs = c
				break
			}
		}
	}
	if cs == nil {
		r := badRequest("chat not found")
		return nil, &r
	}
	var r reply
	switch cs.status {
	case ChatActive:
		return cs, nil
	case ChatBlocked:
		r = errReply(http.StatusForbidden, "Forbidden: bot was blocked by the user", nil)
	case ChatDeactivated:
		r = errReply(http.StatusForbidden, "Forbidden: user is deactivated", nil)
	case ChatKicked:
		if cs.chat.Type == models.ChatTypeSupergroup {
			r = errReply(http.StatusForbidden, "Forbidden: bot was kicked from the supergroup chat", nil)
		} else {
			r = errReply(http.StatusForbidden, "Forbidden: bot was kicked from the group chat", nil)
		}
	case ChatMigrated:
		r = errReply(http.StatusBadRequest, "Bad Request: group chat was upgraded to a supergroup chat",
			&responseParameters{MigrateToChatID: cs.migrateTo})
	default:
		r = badRequest("chat not found")
	}
	return nil, &r
}

// DeleteMessage marks message msgID of chatID deleted (as a user or admin
// deleting it would): editMessageText of it answers 400 "message to edit
// not found". It reports whether the message existed.
func (e *Emulator) DeleteMessage(chatID int64, msgID int) bool {
	return e.markMessage(chatID, msgID, func(m *storedMessage) { m.deleted = true })
}

// MakeUneditable makes message msgID of chatID refuse edits with 400
// "message can't be edited", as Telegram does for a group message older
// than 48 h. It reports whether the message existed.
func (e *Emulator) MakeUneditable(chatID int64, msgID int) bool {
	return e.markMessage(chatID, msgID, func(m *storedMessage) { m.uneditable = true })
}

func (e *Emulator) markMessage(chatID int64, msgID int, f func(*storedMessage)) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	cs := e.chats[chatID]
	if cs == nil || cs.byID[msgID] == nil {
		return false
	}
	f(cs.byID[msgID])
	e.broadcastLocked()
	return true
}
