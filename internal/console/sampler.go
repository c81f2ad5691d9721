package console

import (
	"context"
	"sort"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// Metric names the Overview reads from the bot's registry (app and worker).
const (
	metricHandled = "codemojex_updates_handled_total"
	metricSent    = "codemojex_worker_sent_total"
	metricEdited  = "codemojex_worker_edited_total"
	metric429     = "codemojex_worker_too_many_requests_total"
	metricDropped = "codemojex_flood_dropped_total"
	metricLimit   = "codemojex_budget_limit" // by budget: reply and bulk, or global
)

// counters is one reading of the registry's counters.
type counters struct {
	at      time.Time
	handled float64
	sent    map[string]float64 // by queue (each queue is a budget class: reply, notify)
	tooMany float64
	dropped float64
	limits  map[string]float64 // budget -> messages/s
}

// Point is one sample of the Overview's chart: rates over the sampling
// period before At, and gauges at At.
type Point struct {
	At        int64              `json:"t"` // unix ms
	Updates   float64            `json:"updates"`
	Messages  map[string]float64 `json:"messages"` // messages/s by queue
	Budgets   map[string]float64 `json:"budgets"`  // messages/s by send budget (reply, bulk; or global)
	TooMany   float64            `json:"too_many"` // 429s/s
	Dropped   float64            `json:"dropped"`  // updates/s dropped by the flood limits
	InFlight  int                `json:"in_flight"`
	OldestAge float64            `json:"oldest_s"` // age of the oldest unhandled update, s
	Depth     map[string]int     `json:"depth"`    // pending by queue
}

// sampler reads the bot's metrics every period and keeps the last n
// points (a ring: memory bounded).
type sampler struct {
	b      Backend
	n      int
	period time.Duration
	mu     sync.Mutex
	last   *counters
	pts    []Point
	// limits are the send budgets' limits (messages/s) last read.
	limits map[string]float64
}

// budgetOf is the send budget queue q's messages count against: "global"
// when replies share it (TELEGRAM_REPLY_RATE 0), else "reply" for the
// reply queue, "paid" for the paid broadcasts' queue (its own budget,
// TELEGRAM_PAID_BROADCAST_RATE) and "bulk" for the others (the app's
// codemojex_budget_*).
func budgetOf(q string, limits map[string]float64) string {
	switch _, shared := limits["global"]; {
	case q == "paid":
		return "paid"
	case shared:
		return "global"
	case q == "reply":
		return "reply"
	}
	return "bulk"
}

func newSampler(b Backend, n int) *sampler { return &sampler{b: b, n: n} }

func (s *sampler) run(ctx context.Context, period time.Duration) {
	s.mu.Lock()
	s.period = period
	s.mu.Unlock()
	t := time.NewTicker(period)
	defer t.Stop()
	s.sample(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			s.sample(ctx)
		}
	}
}

// read reads the counters of the registry.
func (s *sampler) read() (*counters, error) {
	mfs, err := s.b.Gatherer().Gather()
	if err != nil {
		return nil, err
	}
	c := &counters{at: time.Now(), sent: map[string]float64{}, limits: map[string]float64{}}
	for _, mf := range mfs {
		switch mf.GetName() {
		case metricHandled:
			for _, m := range mf.GetMetric() {
				if label(m, "result") == "ok" {
					c.handled += m.GetCounter().GetValue()
				}
			}
		case metricSent, metricEdited:
			for _, m := range mf.GetMetric() {
				c.sent[label(m, "queue")] += m.GetCounter().GetValue()
			}
		case metric429:
			for _, m := range mf.GetMetric() {
				c.tooMany += m.GetCounter().GetValue()
			}
		case metricDropped:
			for _, m := range mf.GetMetric() {
				c.dropped += m.GetCounter().GetValue()
			}
		case metricLimit:
			for _, m := range mf.GetMetric() {
				c.limits[label(m, "budget")] = m.GetGauge().GetValue()
			}
		}
	}
	return c, nil
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sample takes one point.
func (s *sampler) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	cur, err := s.read()
	if err != nil {
		return
	}
	p := Point{At: cur.at.UnixMilli(), Messages: map[string]float64{}, Budgets: map[string]float64{}, Depth: map[string]int{}}
	if qs, err := s.b.Queues(ctx, 0); err == nil {
		for _, q := range qs {
			p.Depth[q.Name] = q.Pending
			p.InFlight += q.InFlight
		}
	}
	if bl, err := s.b.Backlog(ctx); err == nil && !bl.Oldest.IsZero() {
		p.OldestAge = max(time.Since(bl.Oldest).Seconds(), 0)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev := s.last; prev != nil {
		dt := cur.at.Sub(prev.at).Seconds()
		if dt < s.period.Seconds()/2 {
			// A tick right after a late one (a slow read): a rate over so
			// short a time would be a spike; the next tick covers it.
			return
		}
		if dt > 0 {
			p.Updates = max(cur.handled-prev.handled, 0) / dt
			p.TooMany = max(cur.tooMany-prev.tooMany, 0) / dt
			p.Dropped = max(cur.dropped-prev.dropped, 0) / dt
			for q, v := range cur.sent {
				p.Messages[q] = max(v-prev.sent[q], 0) / dt
				p.Budgets[budgetOf(q, cur.limits)] += p.Messages[q]
			}
		}
	}
	s.last = cur
	s.limits = cur.limits
	s.pts = append(s.pts, p)
	if len(s.pts) > s.n {
		s.pts = append(s.pts[:0], s.pts[len(s.pts)-s.n:]...)
	}
}

// points returns a copy of the points kept, oldest first, and the send
// budgets' limits.
func (s *sampler) points() ([]Point, map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Point(nil), s.pts...), s.limits
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
