package app

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/tgjob"
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
	for _, c := range []prometheus.Collector{m.received, m.handled, m.duplicates, m.panics, m.conflicts, m.leader, m.standby, &queueCollector{a: a}} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// queueCollector reads lanes Stats of both queues and the inbox depth on
// each scrape (one script call per queue), so the gauges are never stale.
type queueCollector struct{ a *App }

var (
	descDepth    = prometheus.NewDesc("codemojex_queue_depth", "Jobs waiting on the lanes of a queue.", []string{"queue"}, nil)
	descInFlight = prometheus.NewDesc("codemojex_queue_in_flight", "Jobs of a queue under a lease (being sent).", []string{"queue"}, nil)
	descDelayed  = prometheus.NewDesc("codemojex_queue_delayed", "Jobs of a queue waiting for a retry time.", []string{"queue"}, nil)
	descDead     = prometheus.NewDesc("codemojex_queue_dead_letters", "Dead letters kept for a queue.", []string{"queue"}, nil)
	descLanes    = prometheus.NewDesc("codemojex_queue_ready_lanes", "Lanes of a queue ready to be served (in the ring).", []string{"queue"}, nil)
	descParked   = prometheus.NewDesc("codemojex_queue_parked_lanes", "Parked lanes of a queue (429 retry_after, pace).", []string{"queue"}, nil)
	descInbox    = prometheus.NewDesc("codemojex_inbox_depth", "Updates recorded and not yet handled.", nil, nil)
	descScrapeOK = prometheus.NewDesc("codemojex_queue_stats_up", "1 when the last read of queue stats from Valkey succeeded.", nil, nil)
)

func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descDepth, descInFlight, descDelayed, descDead, descLanes, descParked, descInbox, descScrapeOK} {
		ch <- d
	}
}

func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := 1.0
	for _, name := range tgjob.Queues() {
		st, err := q.a.store.Stats(ctx, name, 0)
		if err != nil {
			up = 0
			continue
		}
		g := func(d *prometheus.Desc, v int) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), name)
		}
		g(descDepth, st.Pending)
		g(descInFlight, st.InFlight)
		g(descDelayed, st.Delayed)
		g(descDead, st.Dead)
		g(descLanes, st.Ring)
		g(descParked, st.Parked)
	}
	if n, err := q.a.inbox.Depth(ctx); err == nil {
		ch <- prometheus.MustNewConstMetric(descInbox, prometheus.GaugeValue, float64(n))
	} else {
		up = 0
	}
	ch <- prometheus.MustNewConstMetric(descScrapeOK, prometheus.GaugeValue, up)
}
