// Package floodnotice is the side of the intake limits (internal/flood)
// that talks back: what an update dropped where it was recorded still
// gets (a dropped tap its toast, a chat its one notice per window, queued
// through the notifier on the chat's lane and reply budget), and the
// limits' metrics (drops by reason, notices, toasts skipped, the chats
// being limited read at each scrape).
package floodnotice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/notifier"
)

// maxToasts is how many toasts of dropped taps are answered at once per
// process.
const maxToasts = 8

// Config is what Notices needs.
type Config struct {
	// Limiter is the limits the intake applies; nil when they are off
	// (no chat is ever limited: codemojex_flood_limited_chats is 0).
	Limiter *flood.Limiter
	// Client reads the limited chats at each scrape (Limiter.LimitedCount);
	// required with a Limiter.
	Client valkey.Client
	// Notifier queues a chat's notice (flood.NoticeText, notifier.Reply: on the
	// chat's lane and reply budget).
	Notifier *notifier.Notifier
	// Answer answers a dropped tap's callback query with text (the app's
	// answerCallbackQuery, with its retries); nil: dropped taps get no
	// toast (a process without a Bot API client).
	Answer     func(ctx context.Context, queryID, text string)
	Registerer prometheus.Registerer // the metrics' registry
	// Catalog says the toast and the notice in the dropped update's
	// sender's language, as the handlers choose it: their /language
	// choice (Choice), else their language_code (flood.Subject.LanguageCode),
	// i18n.Normalize'd; nil: in English (flood.ToastText, flood.NoticeText).
	Catalog *i18n.Catalog
	// Choice returns user's /language choice ("" none; the app's
	// chats.Languages.Get: one HGET). It is asked only for a toast or a
	// notice being sent (at most maxToasts at once, one notice per chat
	// per window), never for a drop that gets neither; an error reads as
	// no choice (the language_code's text, logged at debug). Nil: the
	// language_code alone.
	Choice func(ctx context.Context, user int64) (string, error)
	Log    *slog.Logger
}

// Notices is the side of the intake limits that talks back, and their
// metrics: what a dropped update still gets (a dropped tap its toast, a
// chat its one notice per window, in a group as a reply to the dropped
// message, so it goes to the member whose message was dropped), the drops counted by reason, and the
// chats being limited read at each scrape. It is also the lifecycle
// service "flood notices", which at the stop waits for the toasts being
// answered.
type Notices struct {
	cfg Config
	// toasts bounds the toasts being answered at once (maxToasts): a
	// flood of taps gets as many toasts as Telegram answers quickly, and
	// the rest are skipped (counted), so no flood queues goroutines.
	toasts chan struct{}
	bg     sync.WaitGroup

	dropped *prometheus.CounterVec // updates dropped, by reason
	notices *prometheus.CounterVec // notices, by result: queued, failed
	skipped prometheus.Counter     // dropped taps left without a toast (too many being answered)
	limited *prometheus.Desc       // chats being limited (read at scrape)
}

// New returns the Notices of cfg with its metrics registered
// (codemojex_flood_dropped_total{reason}, codemojex_flood_notices_total{result},
// codemojex_flood_toasts_skipped_total, codemojex_flood_limited_chats).
// Errors: a missing part; the registry's ("floodnotice: metrics: ...").
func New(cfg Config) (*Notices, error) {
	if cfg.Notifier == nil || cfg.Registerer == nil || cfg.Log == nil || (cfg.Limiter != nil && cfg.Client == nil) {
		return nil, errors.New("floodnotice: Notifier, Registerer, Log (and Client with a Limiter) are required")
	}
	n := &Notices{cfg: cfg, toasts: make(chan struct{}, maxToasts)}
	n.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_flood_dropped_total",
		Help: "Updates dropped unhandled by the intake limits (FLOOD_*, see docs/floods.md), by reason: user_messages, user_taps, chat_messages, chat_taps."}, []string{"reason"})
	for _, r := range flood.Reasons() {
		n.dropped.WithLabelValues(string(r))
	}
	n.notices = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_flood_notices_total",
		Help: "\"Too many messages\" notices (at most one per chat per window), by result: queued, failed."}, []string{"result"})
	n.skipped = prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_flood_toasts_skipped_total",
		Help: "Dropped taps left unanswered because maxFloodToasts toasts were being answered already."})
	n.limited = prometheus.NewDesc("codemojex_flood_limited_chats", "Chats with an update dropped by the intake limits within the last FLOOD_WINDOW.", nil, nil)
	for _, c := range []prometheus.Collector{n.dropped, n.notices, n.skipped, limitedCollector{n}} {
		if err := cfg.Registerer.Register(c); err != nil {
			return nil, fmt.Errorf("floodnotice: metrics: %w", err)
		}
	}
	return n, nil
}

// Limiter returns Config.Limiter (nil when the limits are off).
func (n *Notices) Limiter() *flood.Limiter { return n.cfg.Limiter }

// OnDrops is told of the updates a record dropped (the intake's
// Inbox.WithLimits callback): each is counted; a dropped tap is answered
// with a toast (in the background, at most maxToasts at once), and a drop
// that took its chat's notice flag queues the notice through the
// notifier, on the chat's lane and budget; in a group (chat id < 0) it
// answers the dropped message (Subject.MessageID). Only what the bot acts
// on reaches the limits (the intake drops the rest unrecorded first), so
// a notice always answers a dropped command, guess or tap.
func (n *Notices) OnDrops(ctx context.Context, drops []flood.Drop) {
	for _, d := range drops {
		n.dropped.WithLabelValues(string(d.Result.Reason)).Inc()
		if d.Subject.Kind == flood.Tap && d.Subject.QueryID != "" && n.cfg.Answer != nil {
			select {
			case n.toasts <- struct{}{}:
				n.bg.Go(func() {
					defer func() { <-n.toasts }()
					actx := context.WithoutCancel(ctx)
					n.cfg.Answer(actx, d.Subject.QueryID, n.text(actx, d.Subject, "flood_toast", flood.ToastText))
				})
			default:
				n.skipped.Inc()
			}
		}
		if d.Result.Notice {
			msg := notifier.Message{Text: n.text(ctx, d.Subject, "flood_notice", flood.NoticeText), Class: notifier.Reply}
			if d.Subject.Chat < 0 {
				msg.ReplyTo = d.Subject.MessageID
			}
			_, err := n.cfg.Notifier.Notify(ctx, d.Subject.Chat, msg)
			if err != nil {
				n.notices.WithLabelValues("failed").Inc()
				n.cfg.Log.Warn("flood notice not queued", slog.Int64("chat", d.Subject.Chat), slog.Any("err", err))
				continue
			}
			n.notices.WithLabelValues("queued").Inc()
			n.cfg.Log.Info("chat over the intake limit; its excess updates are dropped", slog.Int64("chat", d.Subject.Chat),
				slog.Int64("user", d.Subject.User), slog.String("reason", string(d.Result.Reason)))
		}
	}
}

// text is message id of the catalog in s's sender's language (their
// /language choice, else their language_code: Config.Choice), english
// without a catalog.
func (n *Notices) text(ctx context.Context, s flood.Subject, id, english string) string {
	if n.cfg.Catalog == nil {
		return english
	}
	lang := s.LanguageCode
	if n.cfg.Choice != nil && s.User != 0 {
		l, err := n.cfg.Choice(ctx, s.User)
		switch {
		case err != nil:
			n.cfg.Log.Debug("flood: the sender's language not read; their language_code's text", slog.Int64("user", s.User), slog.Any("err", err))
		case l != "":
			lang = l
		}
	}
	return n.cfg.Catalog.Text(i18n.Normalize(lang), id, nil)
}

// Name is the service's name in the lifecycle's logs and errors.
func (n *Notices) Name() string { return "flood notices" }

// Run waits for ctx to end, then for the toasts being answered (each
// bounded by Answer's own budget); it returns nil.
func (n *Notices) Run(ctx context.Context, started func()) error {
	started()
	<-ctx.Done()
	n.bg.Wait()
	return nil
}

// limitedCollector reads codemojex_flood_limited_chats at each scrape.
type limitedCollector struct{ n *Notices }

func (c limitedCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.n.limited }

func (c limitedCollector) Collect(ch chan<- prometheus.Metric) {
	l := c.n.cfg.Limiter
	if l == nil {
		ch <- prometheus.MustNewConstMetric(c.n.limited, prometheus.GaugeValue, 0)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	k, err := l.LimitedCount(ctx, c.n.cfg.Client, time.Now())
	if err != nil {
		return // codemojex_queue_stats_up reports Valkey failing
	}
	ch <- prometheus.MustNewConstMetric(c.n.limited, prometheus.GaugeValue, float64(k))
}
