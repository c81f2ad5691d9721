package tgemu

import (
	"strconv"
	"strings"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// The bot's descriptions (Telegram Bot API: setMyDescription "New bot
// description; 0-512 characters", setMyShortDescription "New short
// description for the bot; 0-120 characters"; both "Pass an empty string
// to remove the dedicated description for the given language").
const (
	maxDescription      = 512
	maxShortDescription = 120
)

// validLangCode reports whether code is a language_code setMyCommands,
// setMyDescription and setMyShortDescription take: "" (every user without
// a dedicated one) or "A two-letter ISO 639-1 language code". Telegram
// refuses others; the emulator answers 400 "LANG_CODE_INVALID" (its exact
// description is not documented).
func validLangCode(code string) bool {
	return code == "" || len(code) == 2 && code[0] >= 'a' && code[0] <= 'z' && code[1] >= 'a' && code[1] <= 'z'
}

// setMyDescription implements setMyDescription (kind "d", parameter
// "description") and setMyShortDescription (kind "s",
// "short_description"): up to max characters (UTF-16 code units) per
// language_code; an empty text removes that language's.
func (e *Emulator) setMyDescription(c *call, kind, param string, max int) reply {
	text, lang := c.params[param], c.params["language_code"]
	if !validLangCode(lang) {
		return badRequest("LANG_CODE_INVALID")
	}
	if tgtext.UTF16Len(text) > max {
		return badRequest(strings.ToUpper(param) + "_TOO_LONG")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if text == "" {
		delete(e.descriptions, kind+"|"+lang)
	} else {
		e.descriptions[kind+"|"+lang] = text
	}
	e.broadcastLocked()
	return okReply(true)
}

// getMyDescription implements getMyDescription and getMyShortDescription:
// the language's text, else the default one, else "" (as Telegram falls
// back to the description for all users).
func (e *Emulator) getMyDescription(c *call, kind, param string) reply {
	lang := c.params["language_code"]
	if !validLangCode(lang) {
		return badRequest("LANG_CODE_INVALID")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	text, ok := e.descriptions[kind+"|"+lang]
	if !ok {
		text = e.descriptions[kind+"|"]
	}
	return okReply(map[string]string{param: text})
}

// MyDescription returns the description set for languageCode ("" for the
// one of every user without a dedicated one), no fallback; short selects
// the short description. "" when none was set.
func (e *Emulator) MyDescription(languageCode string, short bool) string {
	kind := "d"
	if short {
		kind = "s"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.descriptions[kind+"|"+languageCode]
}

// SetChatMemberStatus makes getChatMember answer status ("creator",
// "administrator", "member", "left", ...) for user in chat. A user no
// status was set for is a "member" of any group, as any user writing in
// an injected group is.
func (e *Emulator) SetChatMemberStatus(chat, user int64, status string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.members[[2]int64{chat, user}] = status
}

// getChatMember implements
// https://core.telegram.org/bots/api#getchatmember: the ChatMember of
// user_id in chat_id, {"status": ..., "user": {"id": ...}} (and
// can_be_edited false for an administrator); a chat_id or user_id that is
// not a number is 400 "chat not found" / "invalid user_id specified".
func (e *Emulator) getChatMember(c *call) reply {
	chat, err := strconv.ParseInt(c.params["chat_id"], 10, 64)
	if err != nil || chat == 0 {
		return badRequest("chat not found")
	}
	user, err := strconv.ParseInt(c.params["user_id"], 10, 64)
	if err != nil || user <= 0 {
		return badRequest("invalid user_id specified")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	st, ok := e.members[[2]int64{chat, user}]
	if !ok {
		st = "member"
	}
	m := map[string]any{"status": st, "user": map[string]any{"id": user, "is_bot": false, "first_name": "User " + strconv.FormatInt(user, 10)}}
	if st == "administrator" {
		m["can_be_edited"] = false
	}
	return okReply(m)
}
