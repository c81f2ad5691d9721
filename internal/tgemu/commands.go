package tgemu

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Bot command rules (Telegram Bot API, BotCommand: "command: Text of the
// command; 1-32 characters. Can contain only lowercase English letters,
// digits and underscores. description: Description of the command; 1-256
// characters."; setMyCommands: "At most 100 commands can be specified.").
const (
	maxCommands          = 100
	maxCommandLen        = 32
	maxCommandDescLength = 256
)

// scopeKey names a BotCommandScope: "default", "all_private_chats",
// "all_group_chats", "all_chat_administrators", "chat:<chat_id>",
// "chat_administrators:<chat_id>", "chat_member:<chat_id>:<user_id>"; with
// a language code, "|<code>" is appended.
func scopeKey(scopeJSON, lang string) (string, bool) {
	key := "default"
	if strings.TrimSpace(scopeJSON) != "" {
		var s struct {
			Type   string          `json:"type"`
			ChatID json.RawMessage `json:"chat_id"`
			UserID int64           `json:"user_id"`
		}
		if err := json.Unmarshal([]byte(scopeJSON), &s); err != nil || s.Type == "" {
			return "", false
		}
		key = s.Type
		chat := strings.Trim(string(s.ChatID), `"`)
		switch s.Type {
		case "chat", "chat_administrators":
			key += ":" + chat
		case "chat_member":
			key += ":" + chat + ":" + strconv.FormatInt(s.UserID, 10)
		}
	}
	if lang != "" {
		key += "|" + lang
	}
	return key, true
}

func validCommand(c string) bool {
	if c == "" || len(c) > maxCommandLen {
		return false
	}
	for i := 0; i < len(c); i++ {
		if b := c[i]; !(b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '_') {
			return false
		}
	}
	return true
}

// setMyCommands implements https://core.telegram.org/bots/api#setmycommands.
func (e *Emulator) setMyCommands(c *call) reply {
	var cmds []models.BotCommand
	if err := json.Unmarshal([]byte(c.params["commands"]), &cmds); err != nil {
		return badRequest("can't parse commands JSON object")
	}
	if len(cmds) > maxCommands {
		return badRequest("BOT_COMMANDS_TOO_MUCH")
	}
	for _, cmd := range cmds {
		if !validCommand(cmd.Command) {
			return badRequest("BOT_COMMAND_INVALID")
		}
		if n := tgtext.UTF16Len(strings.TrimSpace(cmd.Description)); n < 1 || n > maxCommandDescLength {
			return badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
	}
	if !validLangCode(c.params["language_code"]) {
		return badRequest("LANG_CODE_INVALID")
	}
	key, ok := scopeKey(c.params["scope"], c.params["language_code"])
	if !ok {
		return badRequest("can't parse BotCommandScope JSON object")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(cmds) == 0 {
		delete(e.commands, key)
	} else {
		e.commands[key] = cmds
	}
	e.broadcastLocked()
	return okReply(true)
}

// getMyCommands implements https://core.telegram.org/bots/api#getmycommands
// (exact scope and language match; no fallback).
func (e *Emulator) getMyCommands(c *call) reply {
	key, ok := scopeKey(c.params["scope"], c.params["language_code"])
	if !ok {
		return badRequest("can't parse BotCommandScope JSON object")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cmds := e.commands[key]
	if cmds == nil {
		cmds = []models.BotCommand{}
	}
	return okReply(cmds)
}

// MyCommands returns the commands stored by setMyCommands for a scope key
// ("" or "default" for the default scope, "all_private_chats",
// "chat:<id>", ...; see the Bot API BotCommandScope types) and language
// code ("" for none). Nil when none were set.
func (e *Emulator) MyCommands(scope, languageCode string) []models.BotCommand {
	if scope == "" {
		scope = "default"
	}
	if languageCode != "" {
		scope += "|" + languageCode
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]models.BotCommand(nil), e.commands[scope]...)
}

// deleteWebhook implements https://core.telegram.org/bots/api#deletewebhook:
// always true, described "Webhook was deleted" (or "Webhook is already
// deleted" when none was set); drop_pending_updates=true forgets the queued
// updates.
func (e *Emulator) deleteWebhook(c *call) reply {
	e.mu.Lock()
	defer e.mu.Unlock()
	desc := "Webhook was deleted"
	if e.webhookURL == "" {
		desc = "Webhook is already deleted"
	}
	e.webhookURL, e.webhookSecret, e.webhookError = "", "", ""
	e.startWebhookLocked()
	if c.params["drop_pending_updates"] == "true" {
		e.updates = nil
	}
	e.broadcastLocked()
	return okReplyDesc(true, desc)
}

// setWebhook implements https://core.telegram.org/bots/api#setwebhook: an
// https URL sets the webhook ("Webhook was set", or "Webhook is already set"
// for the same URL), an empty url removes it ("Webhook was deleted"), any
// other URL is 400 "Bad Request: bad webhook: An HTTPS URL must be provided
// for webhook" (a local Bot API server, WithLocalBotAPI, also takes
// http://). A secret_token outside 1-256 characters of A-Z a-z 0-9 _ - is
// 400 "Bad Request: secret token contains unallowed characters".
// drop_pending_updates=true forgets the queued updates. While it is set,
// queued updates are POSTed to the URL (see deliver).
func (e *Emulator) setWebhook(c *call) reply {
	url := strings.TrimSpace(c.params["url"])
	lower := strings.ToLower(url)
	if url != "" && !strings.HasPrefix(lower, "https://") && !(e.localServer && strings.HasPrefix(lower, "http://")) {
		return badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret := c.params["secret_token"]
	for _, r := range secret {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') || len(secret) > 256 {
			return badRequest("secret token contains unallowed characters")
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	desc := "Webhook was set"
	switch {
	case url == "" && e.webhookURL == "":
		desc = "Webhook is already deleted"
	case url == "":
		desc = "Webhook was deleted"
	case url == e.webhookURL:
		desc = "Webhook is already set"
	}
	e.webhookURL, e.webhookSecret, e.webhookError = url, secret, ""
	e.startWebhookLocked()
	if c.params["drop_pending_updates"] == "true" {
		e.updates = nil
	}
	e.broadcastLocked()
	return okReplyDesc(true, desc)
}

// webhookInfo is the Bot API WebhookInfo object
// (https://core.telegram.org/bots/api#webhookinfo), the fields the emulator
// knows.
type webhookInfo struct {
	URL                  string `json:"url"`
	HasCustomCertificate bool   `json:"has_custom_certificate"`
	PendingUpdateCount   int    `json:"pending_update_count"`
	LastErrorMessage     string `json:"last_error_message,omitempty"`
}

// getWebhookInfo implements https://core.telegram.org/bots/api#getwebhookinfo:
// the URL set ("" when none) and the number of updates not yet confirmed.
func (e *Emulator) getWebhookInfo() reply {
	e.mu.Lock()
	defer e.mu.Unlock()
	return okReply(webhookInfo{URL: e.webhookURL, PendingUpdateCount: len(e.updates), LastErrorMessage: e.webhookError})
}

// answerCallbackQuery implements
// https://core.telegram.org/bots/api#answercallbackquery for queries
// injected with InjectCallbackQuery or InjectUpdate; unknown or already
// answered ids, and answers more than CallbackAnswerTimeout after the tap,
// get Telegram's 400 "query is too old and response timeout expired or query
// ID is invalid"; a text over MaxCallbackAnswerText is 400 "MESSAGE_TOO_LONG"
// (checked first, so the id is not used up; Telegram's order of the two
// checks is unknown). An answer is not a chat message:
// no flood limit counts it.
func (e *Emulator) answerCallbackQuery(c *call) reply {
	id := c.params["callback_query_id"]
	if tgtext.UTF16Len(c.params["text"]) > MaxCallbackAnswerText {
		return badRequest(errAnswerTooLong)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st := e.callbacks[id]
	if id == "" || st == nil || st.answered || c.at.Sub(st.at) > CallbackAnswerTimeout {
		return badRequest(errQueryTooOld)
	}
	st.answered = true
	e.answers = append(e.answers, CallbackAnswer{
		Time: c.at, TapTime: st.at, QueryID: id, Text: c.params["text"],
		ShowAlert: c.params["show_alert"] == "true", URL: c.params["url"],
	})
	e.broadcastLocked()
	return okReply(true)
}

// CallbackAnswers lists the accepted answerCallbackQuery calls in order.
func (e *Emulator) CallbackAnswers() []CallbackAnswer {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]CallbackAnswer(nil), e.answers...)
}
