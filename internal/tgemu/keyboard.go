package tgemu

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Inline keyboard rules (Telegram Bot API, InlineKeyboardButton:
// "callback_data ... 1-64 bytes"; the answers are those the Bot API gives).
const (
	// MaxCallbackData is the longest callback_data, in bytes.
	MaxCallbackData = 64
	// CallbackAnswerTimeout is how long after the tap a callback query
	// can still be answered; later, answerCallbackQuery gets the 400
	// "query is too old ...". Telegram documents no figure; clients stop
	// the button's spinner after about 15 s, and the Bot API refuses
	// answers after roughly that.
	CallbackAnswerTimeout = 15 * time.Second
	// MaxCallbackAnswerText is the longest answerCallbackQuery text, in
	// characters (Bot API, answerCallbackQuery: "0-200 characters");
	// counted here in UTF-16 code units, as message texts are
	// (tgtext.MaxCallbackAnswerUnits). Longer is answered 400
	// "MESSAGE_TOO_LONG".
	MaxCallbackAnswerText = tgtext.MaxCallbackAnswerUnits
)

// Telegram's answers to a bad reply_markup or callback answer. The texts
// are those of the Bot API server (tdlib/telegram-bot-api, Client.cpp:
// get_reply_markup, get_inline_keyboard_button_type; the field errors of
// tdutils' JsonObject) with its first letter lowered as the server does,
// or Telegram's own error codes (BUTTON_DATA_INVALID, BUTTON_TEXT_INVALID,
// MESSAGE_TOO_LONG) as bots report them.
const (
	errMarkupJSON      = "can't parse reply keyboard markup JSON object"
	errMarkupObject    = "object expected as reply markup"
	errInlineType      = `field "inline_keyboard" must be of type Array`
	errInlineRows      = `field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays`
	errButtonPrefix    = "can't parse inline keyboard button: "
	errButtonObject    = errButtonPrefix + "InlineKeyboardButton must be an Object"
	errTextButton      = errButtonPrefix + "Text buttons are unallowed in the inline keyboard"
	errButtonData      = "BUTTON_DATA_INVALID"
	errButtonText      = "BUTTON_TEXT_INVALID"
	errQueryTooOld     = "query is too old and response timeout expired or query ID is invalid"
	errCantBeEdited    = "message can't be edited"
	errAnswerTooLong   = "MESSAGE_TOO_LONG"
	errFieldTypeFormat = "Field %q must be of type %s"
	errNoFieldFormat   = "Can't find field %q"
)

// buttonAction is one action field of InlineKeyboardButton, in the order
// the Bot API server looks for them.
type buttonAction struct {
	name string
	// kind of value: "string" (present when a non-empty string or a
	// number, as the server reads url and callback_data), "present" (any
	// value, as callback_game and pay), "string!" (present, must be a
	// string), or "object:<field>" (present, must be an object with the
	// string field).
	kind string
}

// buttonActions are the action fields of InlineKeyboardButton in the
// order the Bot API server looks for them (telegram-bot-api,
// Client::get_inline_keyboard_button_type). The Bot API documents "exactly
// one of the optional fields must be used", but the server takes the first
// action it finds and never reads the fields after it, so a button with two
// is accepted as its first; clients rely on it: go-telegram/bot sends
// "copy_text":{"text":""} with every button. The emulator does the same.
// Any other field (a misspelled callback_date) is ignored, as Telegram
// ignores it: it is not an action.
var buttonActions = []buttonAction{
	{"url", "string"},
	{"callback_data", "string"},
	{"callback_game", "present"},
	{"pay", "present"},
	{"switch_inline_query", "string!"},
	{"switch_inline_query_chosen_chat", "object:"},
	{"switch_inline_query_current_chat", "string!"},
	{"login_url", "object:url"},
	{"web_app", "object:url"},
	{"copy_text", "object:text"},
}

// buttonError is a 400 for a bad button: "can't parse inline keyboard
// button: <reason>".
func buttonError(format string, args ...any) *reply {
	r := badRequest(errButtonPrefix + fmt.Sprintf(format, args...))
	return &r
}

// jsonString reads a JSON string, or a number as its text (the server
// reads both as strings); ok is false for any other type.
func jsonString(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if jsonIs(raw, '"') {
		var s string
		return s, json.Unmarshal(raw, &s) == nil
	}
	var n json.Number
	if len(raw) > 0 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') && json.Unmarshal(raw, &n) == nil {
		return n.String(), true
	}
	return "", false // null, true, an object...
}

// jsonIs reports whether raw is a JSON value of kind '{' (object), '['
// (array) or '"' (string).
func jsonIs(raw json.RawMessage, kind byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == kind
}

// checkButton validates one inline keyboard button and returns its
// canonical form (text, and the one action the server takes, re-encoded),
// the way the Bot API reads it: text is a required string; the action
// fields are read in buttonActions' order, each checked for its type, up to
// the first that is an action (url and callback_data only when not
// empty); none is 400 "Text buttons are unallowed in the inline keyboard";
// callback_data is at most 64 bytes (BUTTON_DATA_INVALID); an empty text
// is BUTTON_TEXT_INVALID.
func checkButton(raw json.RawMessage) (string, *reply) {
	var b map[string]json.RawMessage
	if !jsonIs(raw, '{') || json.Unmarshal(raw, &b) != nil {
		r := badRequest(errButtonObject)
		return "", &r
	}
	t, ok := b["text"]
	if !ok {
		return "", buttonError(errNoFieldFormat, "text")
	}
	text, ok := jsonString(t)
	if !ok {
		return "", buttonError(errFieldTypeFormat, "text", "String")
	}
	for _, a := range buttonActions {
		v, ok := b[a.name]
		if !ok {
			continue
		}
		value, isAction, bad := actionValue(a, v)
		if bad != nil {
			return "", bad
		}
		if !isAction {
			continue
		}
		if text == "" {
			r := badRequest(errButtonText)
			return "", &r
		}
		out, _ := json.Marshal(map[string]any{"text": text, a.name: value}) // keys sorted: canonical
		return string(out), nil
	}
	r := badRequest(errTextButton)
	return "", &r
}

// actionValue reads the action field a of a button: its canonical value,
// whether it makes the button's action, or a 400 for a wrong type.
func actionValue(a buttonAction, v json.RawMessage) (any, bool, *reply) {
	field, isObject := strings.CutPrefix(a.kind, "object:")
	switch {
	case a.kind == "string" || a.kind == "string!":
		s, ok := jsonString(v)
		if !ok {
			return nil, false, buttonError(errFieldTypeFormat, a.name, "String")
		}
		if a.name == "callback_data" && len(s) > MaxCallbackData {
			r := badRequest(errButtonData)
			return nil, false, &r
		}
		return s, s != "" || a.kind == "string!", nil
	case isObject:
		var o map[string]json.RawMessage
		if !jsonIs(v, '{') || json.Unmarshal(v, &o) != nil {
			return nil, false, buttonError(errFieldTypeFormat, a.name, "Object")
		}
		if field == "" {
			return json.RawMessage(compactJSON(v)), true, nil
		}
		fv, ok := o[field]
		if !ok {
			return nil, false, buttonError(errNoFieldFormat, field)
		}
		s, ok := jsonString(fv)
		if !ok {
			return nil, false, buttonError(errFieldTypeFormat, field, "String")
		}
		// Unknown: Telegram's answer to a copy_text with an empty text
		// (what go-telegram/bot sends with every button) as the only
		// action; the emulator takes it as no action, so a button with
		// only a text is refused as "Text buttons are unallowed".
		if a.name == "copy_text" && s == "" {
			return nil, false, nil
		}
		return json.RawMessage(compactJSON(v)), true, nil
	default: // present: any value
		return json.RawMessage(compactJSON(v)), true, nil
	}
}

// compactJSON is raw without insignificant white space (raw as given when
// it is not valid JSON, which json.Unmarshal already refused).
func compactJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil {
		return string(raw)
	}
	return buf.String()
}

// checkReplyMarkup validates reply_markup the way the Bot API does and
// returns the canonical form of its inline keyboard ("" when there is
// none: no reply_markup, an empty inline_keyboard, or a markup of another
// kind), which editMessageText compares to tell "not modified". The JSON
// must parse to an object; inline_keyboard must be an array of arrays of
// valid buttons (checkButton). A reply keyboard, force_reply or
// remove_keyboard is accepted without checks. The reply is nil when valid.
func checkReplyMarkup(raw string) (string, *reply) {
	if raw == "" {
		return "", nil
	}
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		r := badRequest(errMarkupJSON)
		return "", &r
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil {
		r := badRequest(errMarkupObject)
		return "", &r
	}
	ik, ok := obj["inline_keyboard"]
	if !ok {
		return "", nil
	}
	var rows []json.RawMessage
	if !jsonIs(ik, '[') || json.Unmarshal(ik, &rows) != nil {
		r := badRequest(errInlineType)
		return "", &r
	}
	var canon [][]json.RawMessage
	for _, row := range rows {
		var buttons []json.RawMessage
		if !jsonIs(row, '[') || json.Unmarshal(row, &buttons) != nil {
			r := badRequest(errInlineRows)
			return "", &r
		}
		var out []json.RawMessage
		for _, b := range buttons {
			c, bad := checkButton(b)
			if bad != nil {
				return "", bad
			}
			out = append(out, json.RawMessage(c))
		}
		canon = append(canon, out)
	}
	nonEmpty := false
	for _, row := range canon {
		nonEmpty = nonEmpty || len(row) > 0
	}
	if !nonEmpty {
		return "", nil
	}
	out, _ := json.Marshal(canon)
	return string(out), nil
}
