package tgapi

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Error is every failed call of a Client: an ok=false answer of the Bot
// API, an answer that is not Bot API JSON (nginx's HTML 502 page, a proxy's
// text), or no answer at all (a dropped connection, a timeout, a URL that
// does not parse). Every text in it is redacted: the token never appears in
// Error(), Description or the text of Err.
//
// Callers branch on its fields (errors.As, or the helpers below), never on
// its text: Telegram documents error_code and the parameters retry_after
// and migrate_to_chat_id (https://core.telegram.org/bots/api#responseparameters);
// where only the description tells two failures apart, Kind reads it from
// one table (kinds).
type Error struct {
	// Method is the Bot API method called, e.g. "sendMessage".
	Method string
	// Status is the HTTP status of the answer; 0 when no answer came.
	Status int
	// Code is the answer's error_code (e.g. 400, 403, 409, 429); 0 when the
	// answer was not Bot API JSON or none came.
	Code int
	// Description is the answer's description, e.g. "Forbidden: bot was
	// blocked by the user" ("" when none).
	Description string
	// RetryAfter is parameters.retry_after: the seconds to wait before the
	// chat (429) may be sent to again; 0 when absent.
	RetryAfter int
	// MigrateToChatID is parameters.migrate_to_chat_id: the supergroup a
	// group was upgraded to (400); 0 when absent.
	MigrateToChatID int64
	// Written reports, when no answer came (Status 0), that the request
	// had been written in full: Telegram may have acted on it (see
	// OutcomeUnknown).
	Written bool
	// Err is the cause when the call got no Bot API answer: the transport's
	// error (a *url.Error, its URL redacted; context.DeadlineExceeded and
	// context.Canceled match with errors.Is), or the JSON decoder's for an
	// answer that is not Bot API JSON. Nil for an ok=false answer.
	Err error
}

// Error returns "telegram <method>: <error_code> <description>" for an
// ok=false answer (with the parameters when given), "telegram <method>:
// HTTP <status>, answer is not Bot API JSON: <cause>" for another answer,
// and "telegram <method>: <cause>" when none came. Token-free.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("telegram ")
	b.WriteString(e.Method)
	b.WriteString(": ")
	switch {
	case e.Err != nil && e.Status != 0:
		b.WriteString("HTTP ")
		b.WriteString(strconv.Itoa(e.Status))
		b.WriteString(", answer is not Bot API JSON: ")
		b.WriteString(e.Err.Error())
	case e.Err != nil:
		b.WriteString(e.Err.Error())
	default:
		b.WriteString(strconv.Itoa(e.Code))
		b.WriteByte(' ')
		b.WriteString(e.Description)
		if e.RetryAfter > 0 {
			b.WriteString(" (retry_after ")
			b.WriteString(strconv.Itoa(e.RetryAfter))
			b.WriteByte(')')
		}
		if e.MigrateToChatID != 0 {
			b.WriteString(" (migrate_to_chat_id ")
			b.WriteString(strconv.FormatInt(e.MigrateToChatID, 10))
			b.WriteByte(')')
		}
	}
	return b.String()
}

// Unwrap returns Err (nil for an ok=false answer).
func (e *Error) Unwrap() error { return e.Err }

// Answered reports whether Telegram answered with Bot API JSON (an
// ok=false answer with its error_code).
func (e *Error) Answered() bool { return e.Err == nil && e.Status != 0 }

// OutcomeUnknown reports whether the request was written in full and no
// answer came: Telegram may have delivered the message.
func (e *Error) OutcomeUnknown() bool { return e.Status == 0 && e.Written }

// Kind returns what the answer's description says where the error_code
// alone does not tell (kinds), KindOther when no row matches or the call
// got no Bot API answer.
func (e *Error) Kind() Kind {
	if !e.Answered() {
		return KindOther
	}
	return kindOf(e.Code, e.Description)
}

// AsError returns err's *Error (nil when err holds none).
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}

// Status returns the HTTP status of the answer err carries (0 when err
// holds no *Error or no answer came).
func Status(err error) int {
	if e := AsError(err); e != nil {
		return e.Status
	}
	return 0
}

// IsRetryAfter reports whether err is a 429 Too Many Requests, and the
// wait it asks for (parameters.retry_after; 0 when the answer had no
// parameters: the caller picks its default).
func IsRetryAfter(err error) (time.Duration, bool) {
	e := AsError(err)
	if e == nil || !e.Answered() || e.Code != http.StatusTooManyRequests {
		return 0, false
	}
	return time.Duration(e.RetryAfter) * time.Second, true
}

// MigrateTo returns the supergroup a group was upgraded to when err is the
// 400 that says so (parameters.migrate_to_chat_id).
func MigrateTo(err error) (int64, bool) {
	e := AsError(err)
	if e == nil || !e.Answered() || e.MigrateToChatID == 0 {
		return 0, false
	}
	return e.MigrateToChatID, true
}

// IsCode reports whether err is an ok=false answer with error_code code.
func IsCode(err error, code int) bool {
	e := AsError(err)
	return e != nil && e.Answered() && e.Code == code
}

// IsBadRequest reports whether err is a 400 answer.
func IsBadRequest(err error) bool { return IsCode(err, http.StatusBadRequest) }

// IsForbidden reports whether err is a 403 answer (the bot was blocked,
// kicked, or the user is deactivated).
func IsForbidden(err error) bool { return IsCode(err, http.StatusForbidden) }

// IsConflict reports whether err is a 409 answer: another getUpdates (or a
// webhook) is active for this bot.
func IsConflict(err error) bool { return IsCode(err, http.StatusConflict) }

// IsUnauthorized reports whether err says the token is refused: a 401
// answer, or HTTP 401 with a body that is not Bot API JSON.
func IsUnauthorized(err error) bool {
	e := AsError(err)
	return e != nil && (e.Code == http.StatusUnauthorized || (e.Code == 0 && e.Status == http.StatusUnauthorized))
}

// IsKind reports whether err is an answer of kind k (see Kind).
func IsKind(err error, k Kind) bool {
	e := AsError(err)
	return e != nil && e.Kind() == k
}

// Kind is a failure that only the description of an answer tells apart
// (see kinds).
type Kind int

// The kinds of answer in kinds; KindOther is every answer no row matches.
const (
	KindOther         Kind = iota
	KindNotModified        // 400 "message is not modified" (an edit to the same text and keyboard)
	KindEditNotFound       // 400 "message to edit not found"
	KindCantEdit           // 400 "message can't be edited" (another's message; a group message older than 48 h)
	KindChatNotFound       // 400 "chat not found"
	KindTooLong            // 400 "message is too long"
	KindParseEntities      // 400 "can't parse entities" (parse_mode markup Telegram rejects)
	KindCannotPay          // 400 the Stars balance does not cover a paid broadcast copy
	KindBlocked            // 403 "bot was blocked by the user"
	KindDeactivated        // 403 "user is deactivated"
	KindKicked             // 403 "bot was kicked from the ... chat"
	KindWebhookActive      // 409 "can't use getUpdates method while webhook is active"
)

// kinds is the one table of descriptions: Telegram gives no field for
// these, so a case-insensitive substring of the description, under its
// error_code, decides. Source: the Bot API server's texts
// (github.com/tdlib/telegram-bot-api, telegram-bot-api/Client.cpp and the
// MTProto errors it passes through, "Bad Request: " + the error), as
// go-telegram/bot, python-telegram-bot and aiogram report them, and
// internal/tgemu answers. KindCannotPay's real text is not documented and
// was not found in public issues or code: BALANCE_TOO_LOW is the MTProto
// error Telegram documents for a Stars payment the balance cannot cover
// (passed through as "Bad Request: BALANCE_TOO_LOW", what internal/tgemu
// answers), and the other wordings are guesses around it; check the first
// real failure against them. The first matching row wins.
var kinds = []struct {
	code int
	text string
	kind Kind
}{
	{http.StatusBadRequest, "message is not modified", KindNotModified},
	{http.StatusBadRequest, "message to edit not found", KindEditNotFound},
	{http.StatusBadRequest, "message can't be edited", KindCantEdit},
	{http.StatusBadRequest, "chat not found", KindChatNotFound},
	{http.StatusBadRequest, "message is too long", KindTooLong},
	{http.StatusBadRequest, "can't parse entities", KindParseEntities},
	{http.StatusBadRequest, "balance_too_low", KindCannotPay},
	{http.StatusBadRequest, "not enough stars", KindCannotPay},
	{http.StatusBadRequest, "insufficient stars", KindCannotPay},
	{http.StatusBadRequest, "stars balance", KindCannotPay},
	{http.StatusForbidden, "bot was blocked by the user", KindBlocked},
	{http.StatusForbidden, "user is deactivated", KindDeactivated},
	{http.StatusForbidden, "bot was kicked", KindKicked},
	{http.StatusConflict, "webhook is active", KindWebhookActive},
}

// kindOf looks description up in kinds under error_code code.
func kindOf(code int, description string) Kind {
	d := ""
	for _, r := range kinds {
		if r.code != code {
			continue
		}
		if d == "" {
			d = strings.ToLower(description)
		}
		if strings.Contains(d, r.text) {
			return r.kind
		}
	}
	return KindOther
}

// IsCannotPay reports whether a 400's description says the bot cannot pay
// for a paid broadcast copy (allow_paid_broadcast): the KindCannotPay rows
// of kinds, any case.
func IsCannotPay(description string) bool {
	return kindOf(http.StatusBadRequest, description) == KindCannotPay
}
