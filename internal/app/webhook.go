package app

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/tgapi"
)

// allowedUpdates are the update types the handlers act on (setWebhook's
// allowed_updates): messages (commands, guesses), callback queries (taps on
// inline keyboards) and my_chat_member (the bot blocked or unblocked).
var allowedUpdates = []string{"message", "callback_query", "my_chat_member"}

// errWebhookRefused is returned by Run when Telegram refuses
// TELEGRAM_WEBHOOK_URL (setWebhook answered 400): no retry can help until
// the URL is changed.
var errWebhookRefused = errors.New("telegram refused TELEGRAM_WEBHOOK_URL")

// setWebhook sets the webhook (TELEGRAM_WEBHOOK_URL with
// TELEGRAM_WEBHOOK_SECRET and allowedUpdates), retrying transient failures
// until ctx ends. Telegram's refusal (a 400: e.g. an http:// URL, which
// only a local Bot API server accepts) stops the process with Telegram's
// text; a 401 is intake.ErrTokenRejected.
func (a *App) setWebhook(ctx context.Context) error {
	wait := time.Duration(0)
	for {
		err := a.api.SetWebhook(ctx, &bot.SetWebhookParams{URL: a.cfg.WebhookURL, SecretToken: a.cfg.WebhookSecret, AllowedUpdates: allowedUpdates})
		if err == nil {
			a.webhookSet.Store(true)
			a.log.Info("webhook set; receiving updates", slog.String("webhook_url", a.redactor.String(a.cfg.WebhookURL)),
				slog.String("path", a.cfg.WebhookPath()))
			return nil
		}
		if tgapi.IsCode(err, http.StatusUnauthorized) {
			return fmt.Errorf("setWebhook: %w", intake.ErrTokenRejected)
		}
		if ae := tgapi.AsError(err); tgapi.IsCode(err, http.StatusBadRequest) {
			a.log.Error("Telegram refused the webhook URL; stopping", slog.String("telegram", ae.Description),
				slog.String("webhook_url", a.redactor.String(a.cfg.WebhookURL)))
			return fmt.Errorf("%w %s: %s (Telegram accepts https:// URLs on port 443, 80, 88 or 8443; "+
				"http:// only through a local Bot API server)", errWebhookRefused, a.redactor.String(a.cfg.WebhookURL), ae.Description)
		}
		wait = intake.ErrorBackoff().Next(wait)
		a.log.Warn("setWebhook failed; retrying", slog.Any("err", err), durationAttr("retry_in", wait))
		if err := consumer.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// webhookHandler receives Telegram's update POSTs on the webhook path. It
// answers 200 only once the update is on the update queue (so Telegram
// sends nothing twice that was not recorded, and resends what was not),
// 401 when X-Telegram-Bot-Api-Secret-Token is not TELEGRAM_WEBHOOK_SECRET
// (compared in constant time; nothing is read or recorded), 400 for a body
// over intake.MaxUpdateBytes or one that is not an update's JSON (no
// update_id), 405 for a method other than POST, and 500 when Valkey fails
// (Telegram then sends the update again). An update_id received again is
// recorded once (intake.Inbox.Accept).
func (a *App) webhookHandler() http.Handler {
	secret := []byte(a.cfg.WebhookSecret)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			http.Error(w, "POST only", http.StatusMethodNotAllowed)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")), secret) != 1 {
			a.m.webhook.WithLabelValues("unauthorized").Inc()
			http.Error(w, "wrong or missing secret token", http.StatusUnauthorized)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, intake.MaxUpdateBytes))
		if err != nil {
			a.m.webhook.WithLabelValues("bad_request").Inc()
			http.Error(w, fmt.Sprintf("body unreadable or over %d bytes", intake.MaxUpdateBytes), http.StatusBadRequest)
			return
		}
		var head struct {
			UpdateID *int64 `json:"update_id"`
		}
		if err := json.Unmarshal(body, &head); err != nil || head.UpdateID == nil || *head.UpdateID < 0 {
			a.m.webhook.WithLabelValues("bad_request").Inc()
			http.Error(w, "not an update: want a JSON object with update_id", http.StatusBadRequest)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), webhookRecordTimeout)
		defer cancel()
		added, err := a.inbox.Accept(ctx, []intake.Update{{ID: *head.UpdateID, JSON: body}})
		switch {
		case errors.Is(err, lanes.ErrInvalid):
			a.m.webhook.WithLabelValues("bad_request").Inc()
			http.Error(w, "update refused: "+err.Error(), http.StatusBadRequest)
			return
		case err != nil:
			a.m.webhook.WithLabelValues("error").Inc()
			a.log.Warn("webhook: update not recorded; answering 500 so Telegram sends it again",
				slog.Int64("update_id", *head.UpdateID), slog.Any("err", err))
			http.Error(w, "not recorded, send again", http.StatusInternalServerError)
			return
		}
		a.m.webhook.WithLabelValues("recorded").Inc()
		a.m.received.Add(float64(added))
		w.WriteHeader(http.StatusOK)
	})
}

// webhookRecordTimeout bounds recording one webhook update in Valkey; the
// HTTP server's write timeout (HTTPTimeouts.Write) exceeds it.
const webhookRecordTimeout = 10 * time.Second
