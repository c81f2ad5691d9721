package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// metrics are the app's own Prometheus collectors; the worker registers its
// own (sent, dead-lettered by reason, 429s, claim and send latency) on the
// same registry.
type metrics struct {
	received   prometheus.Counter     // updates recorded in the inbox
	handled    *prometheus.CounterVec // updates finished, by result: ok, panic, malformed, retry
	duplicates prometheus.Counter     // inbox heads skipped as already handled
	panics     prometheus.Counter
	conflicts  prometheus.Counter // 409s from getUpdates
	leader     prometheus.Gauge   // 1 while this process holds the poller lease
	standby    prometheus.Gauge   // 1 while waiting for another poller's lease
	// callbacks counts taps by result: answered, failed (answerCallbackQuery
	// failed after its retries), refused (bad callback data).
	callbacks      *prometheus.CounterVec
	callbackAnswer prometheus.Histogram // answerCallbackQuery round trips (with retries), seconds
}

func newMetrics(reg prometheus.Registerer, a *App) (*metrics, error) {
	m := &metrics{
		received: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_received_total",
			Help: "Telegram updates recorded in the inbox (each update once)."}),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_updates_handled_total",
			Help: "Inbox updates finished or retried, by result (ok, panic, malformed, retry)."}, []string{"result"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_duplicate_total",
			Help: "Inbox updates skipped because their update_id was already handled."}),
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
	for _, c := range []prometheus.Collector{m.received, m.handled, m.duplicates, m.panics, m.conflicts, m.leader, m.standby, m.callbacks, m.callbackAnswer, newQueueCollector(a)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// queueCollector reads lanes Stats of both queues and the inbox depth on
// each scrape (one script call per queue), so the gauges are never stale.
type queueCollector struct {
	a                                                             *App
	depth, inFlight, delayed, dead, ready, parked, inbox, statsUp *prometheus.Desc
}

func newQueueCollector(a *App) *queueCollector {
	return &queueCollector{a: a,
		depth:    prometheus.NewDesc("codemojex_queue_depth", "Jobs waiting on the lanes of a queue.", []string{"queue"}, nil),
		inFlight: prometheus.NewDesc("codemojex_queue_in_flight", "Jobs of a queue under a lease (being sent).", []string{"queue"}, nil),
		delayed:  prometheus.NewDesc("codemojex_queue_delayed", "Jobs of a queue waiting for a retry time.", []string{"queue"}, nil),
		dead:     prometheus.NewDesc("codemojex_queue_dead_letters", "Dead letters kept for a queue.", []string{"queue"}, nil),
		ready:    prometheus.NewDesc("codemojex_queue_ready_lanes", "Lanes of a queue ready to be served (in the ring).", []string{"queue"}, nil),
		parked:   prometheus.NewDesc("codemojex_queue_parked_lanes", "Parked lanes of a queue (429 retry_after, pace).", []string{"queue"}, nil),
		inbox:    prometheus.NewDesc("codemojex_inbox_depth", "Updates recorded and not yet handled.", nil, nil),
		statsUp:  prometheus.NewDesc("codemojex_queue_stats_up", "1 when the last read of queue stats from Valkey succeeded.", nil, nil),
	}
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{q.depth, q.inFlight, q.delayed, q.dead, q.ready, q.parked, q.inbox, q.statsUp} {
		ch <- d
	}
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := 1.0
	for _, name := range tgjob.Queues() {
		st, err := q.a.store.Inspector().Stats(ctx, name, 0)
		if err != nil {
			up = 0
			continue
		}
		g := func(d *prometheus.Desc, v int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
		}
		g(q.depth, st.Pending)
		g(q.inFlight, st.InFlight)
		g(q.delayed, st.Delayed)
		g(q.dead, st.Dead)
		g(q.ready, st.Ring)
		g(q.parked, st.Parked)
	}
	if n, err := q.a.inbox.Depth(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(q.inbox, prometheus.GaugeValue, float64(n))
	} else {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(q.statsUp, prometheus.GaugeValue, up)
}
