package httpserver

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Backlogger is what QueueCollector reads of the update queue
// (*intake.Inbox).
type Backlogger interface {
	Backlog(ctx context.Context) (intake.Backlog, error)
}

// Queues is what QueueCollector reads: the outbound queues' store, the
// update queue, and the budgets' setting (TELEGRAM_REPLY_RATE,
// TELEGRAM_PAID_BROADCAST_RATE: 0 is no budget of its own).
type Queues struct {
	Store     *lanes.Inspector
	Inbox     Backlogger
	ReplyRate int
	PaidRate  int
}

// QueueCollector reads lanes Stats of the outbound queues and of the
// update queue with its oldest unhandled update on each scrape (one script
// call per queue), so the gauges are never stale, and the leases recovered
// counted in Valkey (Stats.Recovered) as counters; register it on the
// registry /metrics serves.
type QueueCollector struct {
	q                                                      Queues
	depth, inFlight, delayed, dead, ready, parked, statsUp *prometheus.Desc
	updates, updatesInFlight, updatesDead, oldest          *prometheus.Desc
	budgetUse, budgetLimit, learnedRate, learnedDecreases  *prometheus.Desc
	learnedProven, learnedForgiven, learnedReleased        *prometheus.Desc
	recovered, updatesRecovered                            *prometheus.Desc
}

// NewQueueCollector returns the collector of q's gauges.
func NewQueueCollector(q Queues) *QueueCollector {
	return &QueueCollector{q: q,
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
		recovered: prometheus.NewDesc("codemojex_queue_leases_recovered_total",
			"Jobs of a queue whose lease expired (their worker died or stalled) and were taken back to be sent again, counted in Valkey since the queue's first: the same in every process.",
			[]string{"queue"}, nil),
		updatesRecovered: prometheus.NewDesc("codemojex_update_queue_leases_recovered_total",
			"Updates whose handler's lease expired (the handler died or stalled) and were taken back to be handled again, counted in Valkey: the same in every process.",
			nil, nil),
		budgetUse: prometheus.NewDesc("codemojex_budget_use",
			"How full a send budget is now, shared by every process: sends in flight or sent within its window, divided by the rate it claims at now (codemojex_budget_learned_rate; 1: sends wait for it). budget: reply, bulk and global, the total over both (TELEGRAM_REPLY_RATE > 0), or global alone; paid.",
			[]string{"budget"}, nil),
		budgetLimit: prometheus.NewDesc("codemojex_budget_limit",
			"A send budget's limit, messages per window of 1 s (plus the notifier's 10 ms slack): TELEGRAM_REPLY_RATE, TELEGRAM_GLOBAL_RATE. rate(codemojex_worker_sent_total) summed over processes, divided by it, is the budget's use over time.",
			[]string{"budget"}, nil),
		learnedRate: prometheus.NewDesc("codemojex_budget_learned_rate",
			"The rate a send budget claims at now, messages per window (as codemojex_budget_limit): the configured one (the ceiling) until Telegram's 429s from several chats halve it, then climbing back by a twentieth of it every 5 s; budget=\"global\" with replies apart (TELEGRAM_REPLY_RATE > 0) is replies and bulk together, starting at the bulk rate and raised while messages wait, a 429 taking a raise back (lanes.Inspector.Learned; the same in every process).",
			[]string{"budget"}, nil),
		learnedDecreases: prometheus.NewDesc("codemojex_budget_decreases_total",
			"Times a send budget went down: halved on evidence of Telegram's bot-wide limit (429s from several chats), or a probe of the global budget taken back by a 429; counted in Valkey since its first: the same in every process (codemojex_worker_budget_decreases_total has the reason, per process).",
			[]string{"budget"}, nil),
		learnedProven: prometheus.NewDesc("codemojex_budget_proven_rate",
			"A send budget's proof, messages per window (as codemojex_budget_limit): the most sends one window held in a 10-s epoch that ended with no burst of 429s since the last one that bound; a burst of 429s from several chats does not take the budget below it, and leaves one it covers as it is (0: none yet, or spent by a burst; lanes LearnedBudget.Proven).",
			[]string{"budget"}, nil),
		learnedForgiven: prometheus.NewDesc("codemojex_budget_forgiven_total",
			"Bursts of 429s from several chats that left a send budget as it was, its proof (codemojex_budget_proven_rate) covering its rate; counted in Valkey since its first: the same in every process.",
			[]string{"budget"}, nil),
		learnedReleased: prometheus.NewDesc("codemojex_budget_released_total",
			"Bursts of 429s from several chats at a send budget's floor that released the hold keeping it there (no limit shows that low, so neither did the decreases that brought it down: it climbs again); counted in Valkey since its first: the same in every process.",
			[]string{"budget"}, nil),
	}
}

// Describe sends the gauges' descriptions (prometheus.Collector).
func (q *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{q.depth, q.inFlight, q.delayed, q.dead, q.ready, q.parked, q.statsUp, q.updates, q.updatesInFlight, q.updatesDead, q.oldest,
		q.budgetUse, q.budgetLimit, q.learnedRate, q.learnedDecreases, q.learnedProven, q.learnedForgiven, q.learnedReleased, q.recovered, q.updatesRecovered} {
		ch <- d
	}
}

// Collect reads the gauges (2 s at most); codemojex_queue_stats_up is 0
// when a read failed (prometheus.Collector).
func (q *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	up := 1.0
	for _, name := range tgjob.AllQueues() {
		st, err := q.q.Store.Stats(ctx, name, 0)
		if err != nil {
			up = 0
			continue
		}
		if name == tgjob.QueuePaid && q.q.PaidRate <= 0 && st.Pending+st.InFlight+st.Delayed+st.Dead == 0 && st.Recovered == 0 {
			continue // paid broadcasts off and nothing left of them: no series
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
		ch <- prometheus.MustNewConstMetric(q.recovered, prometheus.CounterValue, float64(st.Recovered), name)
	}
	names := tgjob.AllQueues()
	if q.q.ReplyRate > 0 {
		names = append(names, "") // the total over replies and bulk (none without a bulk rate)
	}
	for _, name := range names {
		budget := "bulk"
		switch {
		case name == "":
			budget = "global"
		case name == tgjob.QueuePaid && q.q.PaidRate <= 0:
			continue // paid broadcasts off: no budget of its own
		case name == tgjob.QueuePaid:
			budget = "paid"
		case q.q.ReplyRate <= 0 && name == tgjob.QueueReply:
			continue // one shared budget: reported once
		case q.q.ReplyRate <= 0:
			budget = "global"
		case name == tgjob.QueueReply:
			budget = "reply"
		}
		b, err := q.q.Store.BudgetUse(ctx, name)
		if err != nil {
			up = 0
			continue
		}
		if b.Limit <= 0 || b.Window <= 0 {
			continue
		}
		ch <- prometheus.MustNewConstMetric(q.budgetUse, prometheus.GaugeValue, float64(b.Used)/float64(max(b.Rate, 1)), budget)
		ch <- prometheus.MustNewConstMetric(q.budgetLimit, prometheus.GaugeValue, float64(b.Limit), budget)
	}
	if ls, err := q.q.Store.Learned(ctx); err == nil {
		for _, b := range ls {
			name := notifier.BudgetName(b.Queue)
			ch <- prometheus.MustNewConstMetric(q.learnedRate, prometheus.GaugeValue, float64(b.Rate), name)
			ch <- prometheus.MustNewConstMetric(q.learnedDecreases, prometheus.CounterValue, float64(b.Decreases), name)
			ch <- prometheus.MustNewConstMetric(q.learnedProven, prometheus.GaugeValue, float64(b.Proven), name)
			ch <- prometheus.MustNewConstMetric(q.learnedForgiven, prometheus.CounterValue, float64(b.Forgiven), name)
			ch <- prometheus.MustNewConstMetric(q.learnedReleased, prometheus.CounterValue, float64(b.Released), name)
		}
	} else {
		up = 0
	}
	if b, err := q.q.Inbox.Backlog(ctx); err == nil {
		g := func(d *prometheus.Desc, v float64) { ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v) }
		g(q.updates, float64(b.Pending))
		g(q.updatesInFlight, float64(b.InFlight))
		g(q.updatesDead, float64(b.Dead))
		ch <- prometheus.MustNewConstMetric(q.updatesRecovered, prometheus.CounterValue, float64(b.Recovered))
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
