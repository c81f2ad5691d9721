package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/update"
)

// Callback data (the callback_data of an inline keyboard button) is at most
// 64 bytes and comes back from the client: anyone can send any bytes. Every
// button the bot makes carries
//
//	<version><kind>|<scope>|<arg>|<sig>
//
// version is callbackVersion ("1"); kind is one byte naming the handler
// (callbackGame: a game board; a later feature, e.g. broadcast
// preview/confirm buttons, registers its own); scope ties the tap to what
// the button was made for (the game id: a button of a finished or replaced
// game is refused); arg is the action; sig is the first 12 bytes of
// HMAC-SHA256(key, "<version><kind>|<scope>|<arg>|<chat id>") in unpadded
// base64url (16 characters). The chat id is signed but not carried (the
// tap's message names it), so a button copied to another chat does not
// verify. The key is HMAC-SHA256(bot token, callbackKeyLabel): derived, so
// no extra secret to configure, domain-separated from any other use of the
// token, and never logged (only the redacted token ever reaches a log).
//
// A replayed tap (the same update again) is handled once by the inbox;
// a button of an earlier game fails the scope check; a forged, truncated,
// re-versioned or re-signed one fails the signature check. Each gets a
// toast and changes nothing.
const (
	callbackVersion  = '1'
	callbackKeyLabel = "codemojex/callback_data/v1"
	callbackSigBytes = 12
	// maxCallbackData is Telegram's limit on callback_data, in bytes.
	maxCallbackData = 64
)

// Callback kinds (the byte after the version).
const (
	callbackGame      byte = 'g'
	callbackBroadcast byte = 'b' // broadcast preview (Send, Cancel) and progress (Stop) buttons
)

// Errors of decodeCallback; the router answers each with a toast.
var (
	errCallbackMalformed = errors.New("callback data malformed")
	errCallbackVersion   = errors.New("callback data of another version")
	errCallbackSignature = errors.New("callback data signature mismatch")
)

// callbackData is a verified button payload.
type callbackData struct {
	Kind  byte
	Scope string
	Arg   string
}

// callbackCodec signs and verifies callback data.
type callbackCodec struct{ key []byte }

func newCallbackCodec(token string) callbackCodec {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(callbackKeyLabel))
	return callbackCodec{key: m.Sum(nil)}
}

func (c callbackCodec) sig(body string, chat int64) string {
	m := hmac.New(sha256.New, c.key)
	fmt.Fprintf(m, "%s|%d", body, chat)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:callbackSigBytes])
}

// encode returns the signed callback_data of a button for chat. scope and
// arg must not contain '|'; the result must fit maxCallbackData (an error
// otherwise: a programming error, caught by the tests).
func (c callbackCodec) encode(kind byte, scope, arg string, chat int64) (string, error) {
	if strings.ContainsRune(scope, '|') || strings.ContainsRune(arg, '|') {
		return "", fmt.Errorf("callback data: '|' in scope %q or arg %q", scope, arg)
	}
	body := string([]byte{callbackVersion, kind}) + "|" + scope + "|" + arg
	d := body + "|" + c.sig(body, chat)
	if len(d) > maxCallbackData {
		return "", fmt.Errorf("callback data of %d bytes: at most %d", len(d), maxCallbackData)
	}
	return d, nil
}

// decode verifies data from a tap in chat. Errors: errCallbackMalformed,
// errCallbackVersion, errCallbackSignature.
func (c callbackCodec) decode(data string, chat int64) (callbackData, error) {
	if len(data) < 2 || len(data) > maxCallbackData {
		return callbackData{}, errCallbackMalformed
	}
	parts := strings.Split(data, "|")
	if len(parts) != 4 || len(parts[0]) != 2 {
		return callbackData{}, errCallbackMalformed
	}
	if parts[0][0] != callbackVersion {
		return callbackData{}, errCallbackVersion
	}
	body := strings.Join(parts[:3], "|")
	if !hmac.Equal([]byte(parts[3]), []byte(c.sig(body, chat))) {
		return callbackData{}, errCallbackSignature
	}
	return callbackData{Kind: parts[0][1], Scope: parts[1], Arg: parts[2]}, nil
}

// Toasts of the router.
const (
	toastInvalidButton = "This button is not valid. Send /play for a new game."
	toastOldButton     = "This button is from an older version. Send /play for a new game."
)

// callbackHandler handles one verified tap of its kind and returns the
// toast to answer it with ("" for none). It may queue messages (board
// edits, keyed on r) to out like any handler, or fail it there; it must
// not answer the query itself.
type callbackHandler func(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d callbackData) string

// onCallbackQuery routes a callback_query update: it verifies the data,
// runs the handler of its kind, and answers the query (answerCallback)
// with the handler's toast, or with a toast saying why the tap was refused.
func (a *App) onCallbackQuery(ctx context.Context, r *update.Request) (out update.Outcome) {
	q := r.Update.CallbackQuery
	var chat int64
	if q.Message.Message != nil {
		chat = q.Message.Message.Chat.ID
	}
	d, err := a.codec.decode(q.Data, chat)
	toast := ""
	switch {
	case errors.Is(err, errCallbackVersion):
		toast = toastOldButton
	case err != nil || chat == 0:
		toast = toastInvalidButton
	default:
		h := a.callbacks[d.Kind]
		if h == nil {
			toast = toastInvalidButton
			break
		}
		toast = h(ctx, r, &out, q, d)
	}
	if err != nil {
		a.m.callbacks.WithLabelValues("refused").Inc()
		a.log.Info("callback refused", slog.Int64("chat", chat), slog.Int64("user", q.From.ID), slog.String("why", err.Error()))
	}
	a.answerCallback(ctx, q.ID, toast)
	return out
}

// Answering: answerCallbackQuery is not a chat message (no flood limit
// counts it) and the button spins on the user's screen until it is
// answered, so it does not go through the lanes (which pace by chat and by
// the global message budget, and would make it wait behind a broadcast):
// the handler calls it directly, once its move is applied and its board
// edit queued, a few milliseconds after the tap was recorded. A 429 or 5xx
// or a transport error is retried at most callbackAnswerTries times within
// callbackAnswerBudget (Telegram refuses answers some 15 s after the tap,
// and a late answer is worth little); a 400 (the query is too old, or was
// answered already after a crash) is not retried. Every failure is logged
// and counted (codemojex_callback_answers_total{result="failed"}); the tap
// itself is applied either way.
const (
	callbackAnswerTries  = 3
	callbackAnswerBudget = 5 * time.Second
)

func (a *App) answerCallback(ctx context.Context, id, text string) {
	ctx, cancel := context.WithTimeout(ctx, callbackAnswerBudget)
	defer cancel()
	t0 := time.Now()
	var err error
	for try := 0; try < callbackAnswerTries; try++ {
		if try > 0 {
			wait := time.Duration(try) * 200 * time.Millisecond
			var tm *bot.TooManyRequestsError
			if errors.As(err, &tm) && tm.RetryAfter > 0 {
				wait = time.Duration(tm.RetryAfter) * time.Second
			}
			if consumer.Sleep(ctx, wait) != nil {
				break
			}
		}
		_, err = a.bot.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text})
		if err == nil || errors.Is(err, bot.ErrorBadRequest) || errors.Is(err, bot.ErrorForbidden) || errors.Is(err, bot.ErrorUnauthorized) {
			break
		}
	}
	a.m.callbackAnswer.Observe(time.Since(t0).Seconds())
	if err != nil {
		a.m.callbacks.WithLabelValues("failed").Inc()
		a.log.Warn("answerCallbackQuery failed", slog.String("query", id), slog.Any("err", a.redactor.Error(err)))
		return
	}
	a.m.callbacks.WithLabelValues("answered").Inc()
}
