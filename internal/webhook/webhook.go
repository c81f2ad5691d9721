// Package webhook is Telegram's webhook mode: Set registers the webhook
// (setWebhook), Receiver records the updates Telegram POSTs to it on the
// update queue (the HTTP server, internal/httpserver, serves it on the
// webhook path).
package webhook

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
	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/redact"
	"github.com/codemojex/codemojex/tgapi"
)

// AllowedUpdates are the update types the handlers act on (setWebhook's
// allowed_updates): messages (commands, guesses), callback queries (taps on
// inline keyboards) and my_chat_member (the bot blocked or unblocked).
var AllowedUpdates = []string{"message", "callback_query", "my_chat_member"}

// ErrRefused is returned by Set when Telegram refuses
// TELEGRAM_WEBHOOK_URL (setWebhook answered 400): no retry can help until
// the URL is changed.
var ErrRefused = errors.New("telegram refused TELEGRAM_WEBHOOK_URL")

// RecordTimeout bounds recording one webhook update in Valkey; the HTTP
// server's write timeout (httpserver.Timeouts.Write) exceeds it.
const RecordTimeout = 10 * time.Second

// SetConfig is Set's: the Bot API client, TELEGRAM_WEBHOOK_URL and
// TELEGRAM_WEBHOOK_SECRET, the path the HTTP server receives on (logged),
// the redactor of what is logged and returned, and the log.
type SetConfig struct {
	API      *tgapi.Client
	URL      string
	Secret   string
	Path     string
	Redactor *redact.Redactor
	Log      *slog.Logger
}

// Set sets the webhook (URL with Secret and AllowedUpdates), retrying
// transient failures (intake.ErrorBackoff) until ctx ends (ctx's error).
// Telegram's refusal (a 400: e.g. an http:// URL, which only a local Bot
// API server accepts) is ErrRefused with Telegram's text; a 401 is
// intake.ErrTokenRejected.
func Set(ctx context.Context, cfg SetConfig) error {
	wait := time.Duration(0)
	url := cfg.Redactor.String(cfg.URL)
	for {
		err := cfg.API.SetWebhook(ctx, &bot.SetWebhookParams{URL: cfg.URL, SecretToken: cfg.Secret, AllowedUpdates: AllowedUpdates})
		if err == nil {
			cfg.Log.Info("webhook set; receiving updates", slog.String("webhook_url", url), slog.String("path", cfg.Path))
			return nil
		}
		if tgapi.IsCode(err, http.StatusUnauthorized) {
			return fmt.Errorf("setWebhook: %w", intake.ErrTokenRejected)
		}
		if ae := tgapi.AsError(err); tgapi.IsCode(err, http.StatusBadRequest) {
			cfg.Log.Error("Telegram refused the webhook URL; stopping", slog.String("telegram", ae.Description),
				slog.String("webhook_url", url))
			return fmt.Errorf("%w %s: %s (Telegram accepts https:// URLs on port 443, 80, 88 or 8443; "+
				"http:// only through a local Bot API server)", ErrRefused, url, ae.Description)
		}
		wait = intake.ErrorBackoff().Next(wait)
		cfg.Log.Warn("setWebhook failed; retrying", slog.Any("err", err), slog.String("retry_in", wait.String()))
		if err := consumer.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// Recorder is what the receiver records updates on (*intake.Inbox).
type Recorder interface {
	// Accept records updates on the update queue, each update_id once,
	// and returns how many were new; lanes.ErrInvalid for one it refuses.
	Accept(ctx context.Context, updates []intake.Update) (int, error)
}

// ReceiverConfig is a Receiver's: TELEGRAM_WEBHOOK_SECRET, the update
// queue, the counter of updates recorded (codemojex_updates_received_total,
// shared with the poller; nil: none), the log.
type ReceiverConfig struct {
	Secret   string
	Inbox    Recorder
	Received prometheus.Counter
	Log      *slog.Logger
}

// Receiver receives Telegram's update POSTs on the webhook path (an
// http.Handler). It counts its answers in codemojex_webhook_requests_total
// by answer (Collector).
type Receiver struct {
	cfg      ReceiverConfig
	requests *prometheus.CounterVec
}

// NewReceiver returns the receiver of cfg.
func NewReceiver(cfg ReceiverConfig) *Receiver {
	return &Receiver{cfg: cfg, requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_webhook_requests_total",
		Help: "Webhook requests by answer: recorded (200), unauthorized (401), bad_request (400), error (500)."}, []string{"answer"})}
}

// Collector is the receiver's counter of requests by answer, to register
// on the registry /metrics serves.
func (rc *Receiver) Collector() prometheus.Collector { return rc.requests }

// ServeHTTP answers 200 only once the update is on the update queue (so
// Telegram sends nothing twice that was not recorded, and resends what was
// not), 401 when X-Telegram-Bot-Api-Secret-Token is not the secret
// (compared in constant time; nothing is read or recorded), 400 for a body
// over intake.MaxUpdateBytes or one that is not an update's JSON (no
// update_id), 405 for a method other than POST, and 500 when Valkey fails
// (Telegram then sends the update again). An update_id received again is
// recorded once (intake.Inbox.Accept).
func (rc *Receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Telegram-Bot-Api-Secret-Token")), []byte(rc.cfg.Secret)) != 1 {
		rc.requests.WithLabelValues("unauthorized").Inc()
		http.Error(w, "wrong or missing secret token", http.StatusUnauthorized)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, intake.MaxUpdateBytes))
	if err != nil {
		rc.requests.WithLabelValues("bad_request").Inc()
		http.Error(w, fmt.Sprintf("body unreadable or over %d bytes", intake.MaxUpdateBytes), http.StatusBadRequest)
		return
	}
	var head struct {
		UpdateID *int64 `json:"update_id"`
	}
	if err := json.Unmarshal(body, &head); err != nil || head.UpdateID == nil || *head.UpdateID < 0 {
		rc.requests.WithLabelValues("bad_request").Inc()
		http.Error(w, "not an update: want a JSON object with update_id", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), RecordTimeout)
	defer cancel()
	added, err := rc.cfg.Inbox.Accept(ctx, []intake.Update{{ID: *head.UpdateID, JSON: body}})
	switch {
	case errors.Is(err, lanes.ErrInvalid):
		rc.requests.WithLabelValues("bad_request").Inc()
		http.Error(w, "update refused: "+err.Error(), http.StatusBadRequest)
		return
	case err != nil:
		rc.requests.WithLabelValues("error").Inc()
		rc.cfg.Log.Warn("webhook: update not recorded; answering 500 so Telegram sends it again",
			slog.Int64("update_id", *head.UpdateID), slog.Any("err", err))
		http.Error(w, "not recorded, send again", http.StatusInternalServerError)
		return
	}
	rc.requests.WithLabelValues("recorded").Inc()
	if rc.cfg.Received != nil {
		rc.cfg.Received.Add(float64(added))
	}
	w.WriteHeader(http.StatusOK)
}
