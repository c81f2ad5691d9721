package app

import (
	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the app's own Prometheus collectors; the worker registers its
// own (sent, dead-lettered by reason, 429s, claim and send latency) on the
// same registry, the webhook receiver its requests (webhook.Receiver) and
// httpserver.QueueCollector the queues' gauges.
type metrics struct {
	received   prometheus.Counter     // updates recorded on the update queue
	handled    *prometheus.CounterVec // updates handled or failed, by result: ok, duplicate, panic, retry, malformed
	duplicates prometheus.Counter     // updates skipped as already handled
	latency    prometheus.Histogram   // time one update's handler took (s)
	wait       prometheus.Histogram   // recorded -> handled (s)
	dead       prometheus.Counter     // updates dead-lettered
	panics     prometheus.Counter
	conflicts  prometheus.Counter // 409s from getUpdates
	leader     prometheus.Gauge   // 1 while this process holds the poller lease
	standby    prometheus.Gauge   // 1 while waiting for another poller's lease
	// callbacks counts taps by result: answered, failed (answerCallbackQuery
	// failed after its retries), refused (bad callback data).
	callbacks      *prometheus.CounterVec
	callbackAnswer prometheus.Histogram // answerCallbackQuery round trips (with retries), seconds
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_received_total",
			Help: "Telegram updates recorded on the update queue (each update once)."}),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_updates_handled_total",
			Help: "Updates handled by this process, by result: ok, duplicate (handled before), panic and retry (tried again later), malformed (dead-lettered). rate() of it is updates handled per second."}, []string{"result"}),
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
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_getupdates_conflicts_total",
			Help: "getUpdates answered 409 Conflict (another instance polls, or a webhook is set)."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "codemojex_poller_active",
			Help: "1 while this process holds the poller lease and polls Telegram."}),
		standby: prometheus.NewGauge(prometheus.GaugeOpts{Name: "codemojex_poller_standby",
			Help: "1 while this process waits for another poller's lease."}),
	}
	m.callbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_callback_answers_total",
		Help: "Button taps (callback queries) by result: answered, failed (answerCallbackQuery failed), refused (bad callback data)."}, []string{"result"})
	m.callbackAnswer = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_callback_answer_seconds",
		Help:    "answerCallbackQuery round trip, retries included, seconds.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}})
	for _, c := range []prometheus.Collector{m.received, m.handled, m.duplicates, m.latency, m.wait, m.dead, m.panics, m.conflicts, m.leader, m.standby, m.callbacks, m.callbackAnswer} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
