package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/tgapi"
)

// Callback data is signed and verified by internal/tapdata (its format
// and the checks a tap passes are documented there), and App.taps
// (a tapdata.Router) routes a verified tap by its kind; App answers it
// (answerCallback).

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

// maxToast is the longest answerCallbackQuery text, in UTF-16 code units
// (Bot API: "0-200 characters"; Telegram counts characters as UTF-16 code
// units, as tgemu.MaxCallbackAnswerText does; longer is refused with 400
// MESSAGE_TOO_LONG and the button keeps spinning).
const maxToast = 200

// clipToast is text cut to at most maxToast UTF-16 code units, ending in
// "…" when cut (a toast too long for Telegram would not show at all).
func clipToast(text string) string {
	if utf16Len(text) <= maxToast {
		return text
	}
	units := 0
	for i, r := range text {
		if units+utf16.RuneLen(r) > maxToast-1 { // 1 for the "…"
			return text[:i] + "…"
		}
		units += utf16.RuneLen(r)
	}
	return text
}

// utf16Len is s's length in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

func (a *App) answerCallback(ctx context.Context, id, text string) {
	text = clipToast(text)
	ctx, cancel := context.WithTimeout(ctx, callbackAnswerBudget)
	defer cancel()
	t0 := time.Now()
	var err error
	for try := 0; try < callbackAnswerTries; try++ {
		if try > 0 {
			wait := time.Duration(try) * 200 * time.Millisecond
			if d, ok := tgapi.IsRetryAfter(err); ok && d > 0 {
				wait = d
			}
			if consumer.Sleep(ctx, wait) != nil {
				break
			}
		}
		err = a.api.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: id, Text: text})
		if err == nil || tgapi.IsBadRequest(err) || tgapi.IsForbidden(err) || tgapi.IsCode(err, http.StatusUnauthorized) {
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
