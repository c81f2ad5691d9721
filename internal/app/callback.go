package app

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/notifier/tgtext"
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

func (a *App) answerCallback(ctx context.Context, id, text string) {
	// Clipped rather than refused: a toast too long for Telegram would
	// not show at all (e.g. a repeated Stop's answer with its progress).
	text = tgtext.Clip(text, tgtext.MaxCallbackAnswerUnits)
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
