package handling

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/update"
)

// Metrics are the handlers' Prometheus collectors (NewMetrics registers
// them).
type Metrics struct {
	// Handled counts updates handled or failed, by result: ok, duplicate,
	// panic, retry, malformed.
	Handled    *prometheus.CounterVec
	duplicates prometheus.Counter   // updates skipped as already handled
	latency    prometheus.Histogram // time one update's handler took (s)
	wait       prometheus.Histogram // recorded -> handled (s)
	dead       prometheus.Counter   // updates dead-lettered
	panics     prometheus.Counter   // handler panics recovered (Recover)
	refused    prometheus.Counter   // replies refused by a full reply lane (REPLY_LANE_DEPTH)
}

// NewMetrics creates the handlers' collectors and registers them on reg.
// Errors: reg's (a name registered twice).
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		Handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_updates_handled_total",
			Help: "Updates handled by this process, by result: ok, duplicate (handled before), panic and retry (tried again later), lane_full (a chat's reply lane was full: handled again later, no attempt used), malformed (dead-lettered). rate() of it is updates handled per second."}, []string{"result"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_duplicate_total",
			Help: "Updates skipped because their update_id was already handled."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_handler_duration_seconds",
			Help: "Time one update's handler took, replies enqueued (seconds).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_update_handled_after_seconds",
			Help: "Time from an update's recording to the end of its handling (seconds).", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		dead: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_dead_lettered_total",
			Help: "Updates dead-lettered by this process (failed too often, or malformed); see /dlq."}),
		panics: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_handler_panics_total",
			Help: "Handler panics recovered."}),
		refused: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_replies_refused_total",
			Help: "Replies (and boards) refused because their chat already had REPLY_LANE_DEPTH replies waiting (lanes.ErrLaneFull): their update waits and is handled again later, nothing dropped."}),
	}
	for _, c := range []prometheus.Collector{m.Handled, m.duplicates, m.latency, m.wait, m.dead, m.panics, m.refused} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("handling: metrics: %w", err)
		}
	}
	return m, nil
}

// Recover is update.Recover with the handlers' panic hook: a handler's
// panic is logged on log (its value and stack) and counted
// (codemojex_handler_panics_total); the update is retried a few times and
// then dead-lettered with the panic as its reason (a poison update must
// not block its chat), and the process goes on. It goes outermost on the
// mux the Handler runs.
func (m *Metrics) Recover(log *slog.Logger) update.Middleware {
	return update.Recover(func(_ context.Context, r *update.Request, p *update.PanicError) {
		m.panics.Inc()
		log.Error("handler panicked; the update is retried, then dead-lettered", slog.Int64("update_id", r.Update.ID),
			slog.String("panic", fmt.Sprint(p.Value)), slog.String("stack", string(p.Stack)))
	})
}
