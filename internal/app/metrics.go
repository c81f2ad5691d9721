package app

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/update"
)

// metrics are the app's own Prometheus collectors; the worker registers its
// own (sent, dead-lettered by reason, 429s, claim and send latency) on the
// same registry, the handlers theirs (handling.Metrics), the webhook
// receiver its requests (webhook.Receiver) and httpserver.QueueCollector
// the queues' gauges.
type metrics struct {
	received prometheus.Counter // updates recorded on the update queue
	// ignored counts the updates the bot does not act on, dropped
	// unrecorded, by reason (update.Ignored).
	ignored   *prometheus.CounterVec
	conflicts prometheus.Counter // 409s from getUpdates
	leader    prometheus.Gauge   // 1 while this process holds the poller lease
	standby   prometheus.Gauge   // 1 while waiting for another poller's lease
	// callbacks counts taps by result: answered, failed (answerCallbackQuery
	// failed after its retries), refused (bad callback data).
	callbacks      *prometheus.CounterVec
	callbackAnswer prometheus.Histogram // answerCallbackQuery round trips (with retries), seconds
	// replicaShort counts records whose replica wait (VALKEY_WAIT_REPLICAS)
	// timed out with fewer replicas acknowledging.
	replicaShort prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_received_total",
			Help: "Telegram updates recorded on the update queue (each update once)."}),
		conflicts: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_getupdates_conflicts_total",
			Help: "getUpdates answered 409 Conflict (another instance polls, or a webhook is set)."}),
		leader: prometheus.NewGauge(prometheus.GaugeOpts{Name: "codemojex_poller_active",
			Help: "1 while this process holds the poller lease and polls Telegram."}),
		standby: prometheus.NewGauge(prometheus.GaugeOpts{Name: "codemojex_poller_standby",
			Help: "1 while this process waits for another poller's lease."}),
	}
	m.ignored = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_updates_ignored_total",
		Help: "Telegram updates the bot does not act on, confirmed and dropped before they are recorded (never limited, never answered), by reason: chatter (a group's messages not addressed to the bot), no_text (service messages, media), edited, channel_post, other."}, []string{"reason"})
	for _, r := range update.IgnoredReasons() {
		m.ignored.WithLabelValues(string(r))
	}
	m.callbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_callback_answers_total",
		Help: "Button taps (callback queries) by result: answered, failed (answerCallbackQuery failed), refused (bad callback data)."}, []string{"result"})
	m.callbackAnswer = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_callback_answer_seconds",
		Help:    "answerCallbackQuery round trip, retries included, seconds.",
		Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5}})
	m.replicaShort = prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_intake_replica_wait_short_total",
		Help: "Update records confirmed to Telegram after VALKEY_WAIT_TIMEOUT with fewer than VALKEY_WAIT_REPLICAS replicas acknowledging them (a failover then may lose them)."})
	for _, c := range []prometheus.Collector{m.received, m.ignored, m.conflicts, m.leader, m.standby, m.callbacks, m.callbackAnswer, m.replicaShort} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}
