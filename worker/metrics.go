package worker

import (
	"errors"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// metrics are the worker's Prometheus collectors. Several workers given the
// same Registerer share them (the already registered collector is reused).
type metrics struct {
	sent          *prometheus.CounterVec // by queue
	edited        *prometheus.CounterVec // by queue
	dead          *prometheus.CounterVec // by reason code
	retried       prometheus.Counter
	tooMany       *prometheus.CounterVec // by queue
	globalPauses  prometheus.Counter
	decreases     *prometheus.CounterVec   // budgets lowered by this process, by queue and reason (lanes LowerBudget)
	apiLatency    *prometheus.HistogramVec // by Bot API method
	claimLatency  prometheus.Histogram
	inFlight      prometheus.Gauge
	sendsInFlight prometheus.Gauge // Bot API calls of sends waiting for their answer
	senders       prometheus.Gauge // batches the worker sends at once now (concurrency from the budget)
	rttFloor      prometheus.Gauge // the round-trip floor last settled with a send: min(own, the store's) (floor.go)
	rttFloorOwn   prometheus.Gauge // this process's own floor, last published to the store
	unknown       prometheus.Counter
	settleRetries prometheus.Counter
	freshBoards   prometheus.Counter   // edits sent as a new message (message gone or too old)
	recovered     prometheus.Counter   // leases of dead claimers recovered (consumer.KeepAlive)
	paidSent      prometheus.Counter   // paid broadcast copies delivered (allow_paid_broadcast)
	starsSpent    prometheus.Collector // Telegram Stars those cost: paidSent / 10, exact (a CounterFunc)
	paidHalts     prometheus.Counter   // cannot-pay answers that halted the paid queue

	// The children of sent, edited and apiLatency the send path uses, by
	// label, made on first use (so a series is exported once it counts,
	// as before): WithLabelValues per message hashed the label and took
	// the vec's read lock, shared by every sender, for each copy.
	sentBy, editedBy children[prometheus.Counter]
	latencyBy        children[prometheus.Observer]
}

// children caches a metric vec's children by their one label value:
// safe for concurrent use; a cached child is the vec's own (it counts in
// the same series).
type children[T any] struct {
	with func(label string) T // the vec's WithLabelValues
	m    sync.Map             // label -> T
}

// get returns label's child, made by with on its first use.
func (c *children[T]) get(label string) T {
	if v, ok := c.m.Load(label); ok {
		return v.(T)
	}
	v, _ := c.m.LoadOrStore(label, c.with(label))
	return v.(T)
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		reg = prometheus.NewRegistry()
	}
	m := &metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemojex_worker_sent_total", Help: "Messages delivered to Telegram (acked), by queue.",
		}, []string{"queue"}),
		edited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemojex_worker_edited_total", Help: "Message edits accepted by Telegram (acked), by queue.",
		}, []string{"queue"}),
		dead: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemojex_worker_dead_lettered_total", Help: "Messages dead-lettered, by reason.",
		}, []string{"reason"}),
		retried: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_retried_total", Help: "Transient send failures nacked for a retry with backoff.",
		}),
		tooMany: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemojex_worker_too_many_requests_total", Help: "429 Too Many Requests answered by Telegram, by the queue of the job sent.",
		}, []string{"queue"}),
		globalPauses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_global_pauses_total", Help: "Global pauses of the store (global flood signal, 401).",
		}),
		decreases: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "codemojex_worker_budget_decreases_total",
			Help: "Send budgets this process lowered, by the queue whose 429s lowered them and reason: 429 from several chats (evidence of Telegram's bot-wide limit: every budget holding the queue halved), 429 while probing (the probed global budget taken back one step: to the rate before the raise the answered send was claimed at, or below the rate a revert left); the learned rate itself is codemojex_budget_learned_rate.",
		}, []string{"queue", "reason"}),
		apiLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "codemojex_worker_send_duration_seconds", Help: "Bot API round trip (sendMessage, editMessageText, the warm-up's getMe), seconds, by method.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method"}),
		claimLatency: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "codemojex_worker_claim_duration_seconds", Help: "lanes Claim round trip, seconds.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, 1},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemojex_worker_in_flight", Help: "Jobs claimed and not yet settled.",
		}),
		recovered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_leases_recovered_total",
			Help: "Leases of outbound messages held by a claimer whose heartbeat stopped (a process that died), put back on their lanes by this process before the lease's end.",
		}),
		sendsInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemojex_worker_sends_in_flight", Help: "Bot API calls (sendMessage, editMessageText) sent and not yet answered.",
		}),
		senders: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemojex_worker_senders",
			Help: "Batches the worker sends at once now: rate x measured hold time x 1.25 + 2, within MinSenders..Senders.",
		}),
		rttFloor: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemojex_worker_rtt_floor_seconds",
			Help: "Round-trip floor settled with the last answered send, seconds: the smaller of this process's own (codemojex_worker_rtt_floor_own_seconds) and the smallest any live worker process published to the store (lanes counts the send from settle minus it; 0 when the store was not read for 3 s).",
		}),
		rttFloorOwn: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "codemojex_worker_rtt_floor_own_seconds",
			Help: "This process's own round-trip floor, last published to the store: the shortest Bot API round trip it saw in the last 30 s, seconds.",
		}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_unknown_outcome_total",
			Help: "Sends whose request was written but got no answer (timeout, connection closed): maybe delivered; retried at most once.",
		}),
		settleRetries: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_settle_retries_total",
			Help: "Settling calls (ack, nack, release, park, dead-letter) retried after a failure.",
		}),
		freshBoards: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_edits_sent_fresh_total", Help: "Edits sent as a new message because the message could no longer be edited.",
		}),
		paidSent: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_paid_sent_total", Help: "Paid broadcast copies delivered (sent with allow_paid_broadcast).",
		}),
		paidHalts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "codemojex_worker_paid_halts_total", Help: "Paid sends answered that the bot cannot pay: the paid queue was halted.",
		}),
	}
	var err error
	reg1 := func(c prometheus.Collector) prometheus.Collector {
		if e := reg.Register(c); e != nil {
			var are prometheus.AlreadyRegisteredError
			if errors.As(e, &are) {
				return are.ExistingCollector
			}
			err = errors.Join(err, e)
		}
		return c
	}
	m.sent = reg1(m.sent).(*prometheus.CounterVec)
	m.edited = reg1(m.edited).(*prometheus.CounterVec)
	m.dead = reg1(m.dead).(*prometheus.CounterVec)
	m.retried = reg1(m.retried).(prometheus.Counter)
	m.tooMany = reg1(m.tooMany).(*prometheus.CounterVec)
	// Every queue's 429 count and every reason's dead letters are exported
	// from the start (0), so a rate() or increase() sees the first one (a
	// series born at 1 shows none): the alert rules read them
	// (deploy/monitoring).
	for _, q := range tgjob.AllQueues() {
		m.tooMany.WithLabelValues(q)
	}
	for _, r := range deadReasons() {
		m.dead.WithLabelValues(r)
	}
	m.globalPauses = reg1(m.globalPauses).(prometheus.Counter)
	m.decreases = reg1(m.decreases).(*prometheus.CounterVec)
	for _, q := range tgjob.AllQueues() {
		m.decreases.WithLabelValues(q, WhyFlood)
		m.decreases.WithLabelValues(q, WhyProbe)
	}
	m.apiLatency = reg1(m.apiLatency).(*prometheus.HistogramVec)
	m.sentBy.with = func(q string) prometheus.Counter { return m.sent.WithLabelValues(q) }
	m.editedBy.with = func(q string) prometheus.Counter { return m.edited.WithLabelValues(q) }
	m.latencyBy.with = func(method string) prometheus.Observer { return m.apiLatency.WithLabelValues(method) }
	m.claimLatency = reg1(m.claimLatency).(prometheus.Histogram)
	m.inFlight = reg1(m.inFlight).(prometheus.Gauge)
	m.sendsInFlight = reg1(m.sendsInFlight).(prometheus.Gauge)
	m.senders = reg1(m.senders).(prometheus.Gauge)
	m.rttFloor = reg1(m.rttFloor).(prometheus.Gauge)
	m.rttFloorOwn = reg1(m.rttFloorOwn).(prometheus.Gauge)
	m.unknown = reg1(m.unknown).(prometheus.Counter)
	m.settleRetries = reg1(m.settleRetries).(prometheus.Counter)
	m.freshBoards = reg1(m.freshBoards).(prometheus.Counter)
	m.recovered = reg1(m.recovered).(prometheus.Counter)
	m.paidSent = reg1(m.paidSent).(prometheus.Counter)
	// Stars spent is derived from the (shared) paid copies counter, so it
	// is exact: 0.1 added up in floating point drifts (10 x 0.1 != 1).
	paid := m.paidSent
	m.starsSpent = reg1(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "codemojex_worker_stars_spent_total", Help: "Telegram Stars spent on paid broadcast copies (0.1 per copy delivered).",
	}, func() float64 {
		var d dto.Metric
		if paid.Write(&d) != nil {
			return 0
		}
		return d.GetCounter().GetValue() / 10
	}))
	m.paidHalts = reg1(m.paidHalts).(prometheus.Counter)
	if err != nil {
		return nil, err
	}
	return m, nil
}
