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
	received   prometheus.Counter     // updates recorded on the update queue
	handled    *prometheus.CounterVec // updates handled or failed, by result: ok, duplicate, panic, retry, malformed
	duplicates prometheus.Counter     // updates skipped as already handled
	latency    prometheus.Histogram   // time one update's handler took (s)
	wait       prometheus.Histogram   // recorded -> handled (s)
	dead       prometheus.Counter     // updates dead-lettered
	webhook    *prometheus.CounterVec // webhook requests by answer
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
			Help: "Telegram updates recorded on the update queue (each update once)."}),
		handled: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_updates_handled_total",
			Help: "Updates handled by this process, by result: ok, duplicate (handled before), panic and retry (tried again later), malformed (dead-lettered). rate() of it is updates handled per second."}, []string{"result"}),
		duplicates: prometheus.NewCounter(prometheus.CounterOpts{Name: "codemojex_updates_duplicate_total",
			Help: "Updates skipped because their update_id was already handled."}),
		latency: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_handler_duration_seconds",
			Help: "Time one update's handler took, replies enqueued (seconds).", Buckets: prometheus.ExponentialBuckets(0.0005, 2, 14)}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "codemojex_update_handled_after_seconds",
			Help: "Time from an update's recording to the end of its handling (seconds).", Buckets: prometheus.ExponentialBuckets(0.001, 2, 16)}),
		webhook: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "codemojex_webhook_requests_total",
			Help: "Webhook requests by answer: recorded (200), unauthorized (401), bad_request (400), error (500)."}, []string{"answer"}),
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
	for _, c := range []prometheus.Collector{m.received, m.handled, m.duplicates, m.latency, m.wait, m.dead, m.webhook, m.panics, m.conflicts, m.leader, m.standby, m.callbacks, m.callbackAnswer, newQueueCollector(a)} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// queueCollector reads lanes Stats of both outbound queues and of the
// update queue with its oldest unhandled update on each scrape (one script
// call per queue), so the gauges are never stale.
type queueCollector struct {
	a                                                      *App
	depth, inFlight, delayed, dead, ready, parked, statsUp *prometheus.Desc
	updates, updatesInFlight, updatesDead, oldest          *prometheus.Desc
	budgetUse, budgetLimit                                 *prometheus.Desc
}

func newQueueCollector(a *App) *queueCollector {
	return &queueCollector{a: a,
		depth:           prometheus.NewDesc("codemojex_queue_depth", "Jobs waiting on the lanes of a queue.", []string{"queue"}, nil),
		inFlight:        prometheus.NewDesc("codemojex_queue_in_flight", "Jobs of a queue under a lease (being sent).", []string{"queue"}, nil),
		delayed:         prometheus.NewDesc("codemojex_queue_delayed", "Jobs of a queue waiting for a retry time.", []string{"queue"}, nil),
		dead:            prometheus.NewDesc("codemojex_queue_dead_letters", "Dead letters kept for a queue.", []string{"queue"}, nil),
		ready:           prometheus.NewDesc("codemojex_queue_ready_lanes", "Lanes of a queue ready to be served (in the ring).", []string{"queue"}, nil),
		parked:          prometheus.NewDesc("codemojex_queue_parked_lanes", "Parked lanes of a queue (429 retry_after, pace).", []string{"queue"}, nil),
		updates:         prometheus.NewDesc("codemojex_update_queue_depth", "Updates recorded and waiting to be handled (incl. retries).", nil, nil),
		updatesInFlight: prometheus.NewDesc("codemojex_update_queue_in_flight", "Updates being handled (claimed under a lease).", nil, nil),
		updatesDead:     prometheus.NewDesc("codemojex_update_queue_dead_letters", "Dead-lettered updates kept (see /dlq).", nil, nil),
		oldest: prometheus.NewDesc("codemojex_update_oldest_age_seconds",
			"Age of the oldest update recorded and not yet handled (seconds; 0 when none).", nil, nil),
		statsUp: prometheus.NewDesc("codemojex_queue_stats_up", "1 when the last read of queue stats from Valkey succeeded.", nil, nil),
		budgetUse: prometheus.NewDesc("codemojex_budget_use",
			"How full a send budget is now, shared by every process: sends in flight or sent within its window, divided by its limit (1: sends wait for it). budget: reply and bulk (TELEGRAM_REPLY_RATE > 0), or global.",
			[]string{"budget"}, nil),
		budgetLimit: prometheus.NewDesc("codemojex_budget_limit",
			"A send budget's limit, messages per window of 1 s (plus the notifier's 10 ms slack): TELEGRAM_REPLY_RATE, TELEGRAM_GLOBAL_RATE. rate(codemojex_worker_sent_total) summed over processes, divided by it, is the budget's use over time.",
			[]string{"budget"}, nil),
	}
}

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{q.depth, q.inFlight, q.delayed, q.dead, q.ready, q.parked, q.statsUp, q.updates, q.updatesInFlight, q.updatesDead, q.oldest,
		q.budgetUse, q.budgetLimit} {
		ch <- d
	}
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := 1.0
	for _, name := range tgjob.AllQueues() {
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
	for _, name := range tgjob.AllQueues() {
		budget := "bulk"
		switch {
		case name == tgjob.QueuePaid && q.a.cfg.PaidBroadcastRate <= 0:
			continue // paid broadcasts off: no budget of its own
		case name == tgjob.QueuePaid:
			budget = "paid"
		case q.a.cfg.ReplyRate <= 0 && name == tgjob.QueueReply:
			continue // one shared budget: reported once
		case q.a.cfg.ReplyRate <= 0:
			budget = "global"
		case name == tgjob.QueueReply:
			budget = "reply"
		}
		b, err := q.a.store.Inspector().BudgetUse(ctx, name)
		if err != nil {
			up = 0
			continue
		}
		if b.Limit <= 0 || b.Window <= 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(q.budgetUse, prometheus.GaugeValue, float64(b.Used)/float64(b.Limit), budget)
		ch <- prometheus.MustNewConstMetric(q.budgetLimit, prometheus.GaugeValue, float64(b.Limit), budget)
	}
	if b, err := q.a.inbox.Backlog(ctx); err == nil {
		g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
		g(q.updates, float64(b.Pending))
		g(q.updatesInFlight, float64(b.InFlight))
		g(q.updatesDead, float64(b.Dead))
		age := 0.0
		if !b.Oldest.IsZero() {
			age = max(time.Since(b.Oldest).Seconds(), 0)
		}
		g(q.oldest, age)
	} else {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(q.statsUp, prometheus.GaugeValue, up)
}
