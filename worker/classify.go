package worker

import (
	"net/http"
	"strings"
	"time"

	"github.com/codemojex/codemojex/tgapi"
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

// deadReasons returns every reason code: the label values of
// codemojex_worker_dead_lettered_total.
func deadReasons() []string {
	return []string{ReasonForbidden, ReasonChatNotFound, ReasonTooLong, ReasonParse, ReasonBadRequest, ReasonMalformed,
		ReasonMaxAttempts, ReasonEditNotFound, ReasonUnknownOutcome, ReasonCantEdit, ReasonCannotPay}
}

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

// classify maps a sendMessage or editMessageText error to a decision, by
// the fields of its *tgapi.Error (errors.As, so wrapping does not matter):
// a 429 parks for parameters.retry_after (defaultRetryAfter when the
// answer had none), a 400 with parameters.migrate_to_chat_id moves the
// lane, a 403 is the chat's end, a 401 (JSON or not) pauses everything,
// and the other 400s by the kind of their description (tgapi.Kind, the
// one table of texts). 5xx, 404 (a wrong server URL), bodies that are not
// JSON (nginx's 502 page), transport failures and anything unknown are
// retried.
func classify(err error, defaultRetryAfter time.Duration) decision {
	if d, ok := tgapi.IsRetryAfter(err); ok {
		if d <= 0 {
			d = defaultRetryAfter
		}
		return decision{act: actPark, retryAfter: d}
	}
	if to, ok := tgapi.MigrateTo(err); ok && tgapi.IsBadRequest(err) {
		return decision{act: actMigrate, migrateTo: to}
	}
	if tgapi.IsForbidden(err) {
		return decision{act: actForbidden, reason: ReasonForbidden}
	}
	if tgapi.IsBadRequest(err) {
		switch tgapi.AsError(err).Kind() {
		case tgapi.KindCannotPay:
			return decision{act: actCannotPay, reason: ReasonCannotPay}
		case tgapi.KindNotModified:
			return decision{act: actDone}
		case tgapi.KindEditNotFound:
			return decision{act: actDead, reason: ReasonEditNotFound}
		case tgapi.KindCantEdit:
			return decision{act: actDead, reason: ReasonCantEdit}
		case tgapi.KindChatNotFound:
			return decision{act: actDead, reason: ReasonChatNotFound}
		case tgapi.KindTooLong:
			return decision{act: actDead, reason: ReasonTooLong}
		case tgapi.KindParseEntities:
			return decision{act: actPlain, reason: ReasonParse}
		default:
			return decision{act: actDead, reason: ReasonBadRequest}
		}
	}
	if tgapi.IsUnauthorized(err) {
		return decision{act: actPauseAll}
	}
	// 5xx, 404 (wrong server URL), non-JSON bodies, transport errors and
	// anything unknown: transient, bounded by the queue's MaxAttempts.
	return decision{act: actRetry}
}

// deadReason is the reason a dead letter reads (the console, /dlq): its
// reason code, then what Telegram said without the words the code already
// says: "forbidden: bot was blocked by the user", "chat not found" (not
// "forbidden: telegram sendMessage: 403 Forbidden: bot was blocked by the
// user"). The description's leading HTTP status text ("Forbidden: ",
// "Bad Request: ") is dropped, and a description equal to the code adds
// nothing. An error with no Bot API description (a transport failure)
// keeps its whole text. err is already redacted.
func deadReason(code string, err error) string {
	detail := err.Error()
	if e := tgapi.AsError(err); e != nil && e.Description != "" {
		detail = e.Description
		if status, rest, ok := strings.Cut(detail, ": "); ok && strings.EqualFold(status, http.StatusText(e.Code)) {
			detail = rest
		}
	}
	if detail == "" || strings.EqualFold(detail, code) {
		return code
	}
	return code + ": " + detail
}
