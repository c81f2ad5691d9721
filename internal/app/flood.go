package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/notifier"
)

// floods is the app's side of the intake limits (package flood, applied by
// the inbox where updates are recorded): what a dropped update still gets
// (a dropped tap its toast, a chat its one notice per window), the
// metrics, and the read of the chats being limited.
type floods struct {
	a       *App
	limiter *flood.Limiter // nil when the limits are off
	// toasts bounds the toasts being answered at once (maxFloodToasts):
	// a flood of taps gets as many toasts as Telegram answers quickly,
	// and the rest are skipped (counted), so no flood queues goroutines.
	toasts chan struct{}
	bg     sync.WaitGroup

	dropped *prometheus.CounterVec // updates dropped, by reason
	notices *prometheus.CounterVec // notices, by result: queued, failed
	skipped prometheus.Counter     // dropped taps left without a toast (too many being answered)
	refused prometheus.Counter     // replies refused by a full reply lane (REPLY_LANE_DEPTH)
	limited *prometheus.Desc       // chats being limited (read at scrape)
}

// maxFloodToasts is how many toasts of dropped taps are answered at once
// per process.
const maxFloodToasts = 8

func (a *App) initFloods() error {
	f := &floods{a: a, toasts: make(chan struct{}, maxFloodToasts)}
	l := a.cfg.Flood.Limits()
	if l.On() {
		f.limiter = flood.New(a.opt.tag, l, a.cfg.IsAdmin)
		a.inbox.WithLimits(f.limiter, f.onDrops)
	}
	f.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_flood_dropped_total",
		Help: "Updates dropped unhandled by the intake limits (FLOOD_*, see docs/floods.md), by reason: user_messages, user_taps, chat_messages, chat_taps."}, []string{"reason"})
	for _, r := range flood.Reasons() {
		f.dropped.WithLabelValues(string(r))
	}
	f.notices = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_flood_notices_total",
		Help: "\"Too many messages\" notices (at most one per chat per window), by result: queued, failed."}, []string{"result"})
	f.skipped = prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_flood_toasts_skipped_total",
		Help: "Dropped taps left unanswered because maxFloodToasts toasts were being answered already."})
	f.refused = prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_replies_refused_total",
		Help: "Replies dropped because their chat already had REPLY_LANE_DEPTH replies waiting (lanes.ErrLaneFull)."})
	f.limited = prometheus.NewDesc("codemojex_flood_limited_chats", "Chats with an update dropped by the intake limits within the last FLOOD_WINDOW.", nil, nil)
	for _, c := range []prometheus.Collector{f.dropped, f.notices, f.skipped, f.refused, f} {
		if err := a.reg.Register(c); err != nil {
			return fmt.Errorf("app: flood metrics: %w", err)
		}
	}
	a.floods = f
	return nil
}

// onDrops is told of the updates a record dropped: each is counted; a
// dropped tap is answered with a toast (in the background, at most
// maxFloodToasts at once), and a drop that took its chat's notice flag
// queues the notice through the notifier, on the chat's lane and budget.
func (f *floods) onDrops(ctx context.Context, drops []flood.Drop) {
	a := f.a
	for _, d := range drops {
		f.dropped.WithLabelValues(string(d.Result.Reason)).Inc()
		if d.Subject.Kind == flood.Tap && d.Subject.QueryID != "" && a.api != nil {
			select {
			case f.toasts <- struct{}{}:
				f.bg.Go(func() {
					defer func() { <-f.toasts }()
					a.answerCallback(context.WithoutCancel(ctx), d.Subject.QueryID, flood.ToastText)
				})
			default:
				f.skipped.Inc()
			}
		}
		if d.Result.Notice {
			_, err := a.notifier.Notify(ctx, d.Subject.Chat, notifier.Message{Text: flood.NoticeText, Class: notifier.Reply})
			if err != nil {
				f.notices.WithLabelValues("failed").Inc()
				a.log.Warn("flood notice not queued", slog.Int64("chat", d.Subject.Chat), slog.Any("err", err))
				continue
			}
			f.notices.WithLabelValues("queued").Inc()
			a.log.Info("chat over the intake limit; its excess updates are dropped", slog.Int64("chat", d.Subject.Chat),
				slog.Int64("user", d.Subject.User), slog.String("reason", string(d.Result.Reason)))
		}
	}
}

// wait waits for the toasts being answered.
func (f *floods) wait() { f.bg.Wait() }

// LimitedChats returns the chats being limited (an update of theirs was
// dropped within the last FLOOD_WINDOW), soonest Until first, at most
// max (0: all); none when the limits are off. For the console. Errors:
// Valkey's.
func (a *App) LimitedChats(ctx context.Context, max int) ([]flood.LimitedChat, error) {
	return a.admin.LimitedChats(ctx, max)
}

func (f *floods) Describe(ch chan<- *prometheus.Desc) { ch <- f.limited }

func (f *floods) Collect(ch chan<- prometheus.Metric) {
	if f.limiter == nil {
		ch <- prometheus.MustNewConstMetric(f.limited, prometheus.GaugeValue, 0)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := f.limiter.LimitedCount(ctx, f.a.c, time.Now())
	if err != nil {
		return // codemojex_queue_stats_up reports Valkey failing
	}
	ch <- prometheus.MustNewConstMetric(f.limited, prometheus.GaugeValue, float64(n))
}
