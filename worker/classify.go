package worker

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/go-telegram/bot"
)

// Reason codes: the label of dead-letter metrics, the failure keys of
// broadcast progress, and the first word of a dead-letter reason.
const (
	ReasonForbidden    = "forbidden"      // 403: blocked, deactivated, kicked
	ReasonChatNotFound = "chat not found" // 400 chat not found
	ReasonTooLong      = "too long"       // 400 message is too long
	ReasonParse        = "parse entities" // 400 can't parse entities, also as plain text
	ReasonBadRequest   = "bad request"    // any other 400
	ReasonMalformed    = "malformed job"  // payload or lane that can't be decoded
	ReasonMaxAttempts  = "max attempts"   // transient failures past MaxAttempts
	ReasonEditNotFound = "edit not found" // 400 message to edit not found (an edit job)
	// ReasonUnknownOutcome: a second send whose request was written but
	// got no answer (it may have been delivered twice already).
	ReasonUnknownOutcome = "unknown outcome"
	ReasonCantEdit       = "cannot edit" // 400 message can't be edited (an edit job; e.g. a group message older than 48 h)
	ReasonCannotPay      = "cannot pay"  // 400 the Stars balance does not cover a paid copy (IsCannotPay)
)

// action is what the worker does with a failed send: one row of the error
// table (see the package doc).
type action int

const (
	actRetry     action = iota // 5xx, timeouts, dropped connections, anything unknown: Nack with backoff
	actPark                    // 429: park the chat's lanes for retry_after, Release the job
	actForbidden               // 403: dead-letter the job and the chat's pending jobs, mark inactive
	actDead                    // 400 chat not found / too long / other: dead-letter, no retry
	actPlain                   // 400 can't parse entities: resend once as plain text
	actMigrate                 // 400 migrate_to_chat_id: move the lane to the new chat
	actPauseAll                // 401: the token is refused; pause the whole store
	actDone                    // 400 message is not modified (an edit): success, ack
	actCannotPay               // 400 cannot pay a paid copy: halt the paid queue, Release the job
)

type decision struct {
	act        action
	reason     string        // reason code (dead-letter rows)
	retryAfter time.Duration // actPark
	migrateTo  int64         // actMigrate
}

// IsCannotPay reports whether a 400 description says the bot cannot pay
// for a paid broadcast copy (allow_paid_broadcast). Telegram's real text is
// not documented and was not found in public issues or code; this matches
// BALANCE_TOO_LOW (the MTProto error Telegram documents for a Stars
// payment the balance cannot cover, which the Bot API would pass through
// as "Bad Request: BALANCE_TOO_LOW"; what internal/tgemu answers) and the
// wordings "not enough stars", "insufficient stars" and "stars balance"
// (any case). A real answer that differs is dead-lettered as "bad request"
// instead: check the first real failure against this list.
func IsCannotPay(description string) bool {
	d := strings.ToLower(description)
	for _, s := range []string{"balance_too_low", "not enough stars", "insufficient stars", "stars balance"} {
		if strings.Contains(d, s) {
			return true
		}
	}
	return false
}

// classify maps a sendMessage or editMessageText error (and the HTTP status
// seen, 0 when no response came) to a decision. It matches with errors.As / errors.Is, so
// wrapping does not matter (bot.IsTooManyRequestsError only matches an
// unwrapped error, so it is not used). go-telegram/bot v1.19.0 returns:
// *bot.TooManyRequestsError for 429 (RetryAfter 0 when the reply had no
// "parameters"), *bot.MigrateError for a 400 with migrate_to_chat_id,
// bot.ErrorForbidden / ErrorBadRequest / ErrorUnauthorized wrapped with the
// description, a plain error for other codes (5xx with a JSON body) and for
// bodies that are not JSON (nginx's 502 page), and the http.Client's error
// for transport failures.
func classify(err error, status int, defaultRetryAfter time.Duration) decision {
	var tm *bot.TooManyRequestsError
	if errors.As(err, &tm) {
		d := time.Duration(tm.RetryAfter) * time.Second
		if tm.RetryAfter <= 0 {
			d = defaultRetryAfter
		}
		return decision{act: actPark, retryAfter: d}
	}
	var me *bot.MigrateError
	if errors.As(err, &me) && me.MigrateToChatID != 0 {
		return decision{act: actMigrate, migrateTo: int64(me.MigrateToChatID)}
	}
	if errors.Is(err, bot.ErrorForbidden) {
		return decision{act: actForbidden, reason: ReasonForbidden}
	}
	if errors.Is(err, bot.ErrorBadRequest) {
		msg := strings.ToLower(err.Error())
		switch {
		case IsCannotPay(msg):
			return decision{act: actCannotPay, reason: ReasonCannotPay}
		case strings.Contains(msg, "message is not modified"):
			return decision{act: actDone}
		case strings.Contains(msg, "message to edit not found"):
			return decision{act: actDead, reason: ReasonEditNotFound}
		case strings.Contains(msg, "message can't be edited"):
			return decision{act: actDead, reason: ReasonCantEdit}
		case strings.Contains(msg, "chat not found"):
			return decision{act: actDead, reason: ReasonChatNotFound}
		case strings.Contains(msg, "message is too long"):
			return decision{act: actDead, reason: ReasonTooLong}
		case strings.Contains(msg, "can't parse entities"):
			return decision{act: actPlain, reason: ReasonParse}
		default:
			return decision{act: actDead, reason: ReasonBadRequest}
		}
	}
	if errors.Is(err, bot.ErrorUnauthorized) || status == http.StatusUnauthorized {
		return decision{act: actPauseAll}
	}
	// 5xx, 404 (wrong server URL), non-JSON bodies, transport errors and
	// anything unknown: transient, bounded by the queue's MaxAttempts.
	return decision{act: actRetry}
}
