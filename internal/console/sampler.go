package console

import (
	"context"
	"encoding/json"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/codemojex/codemojex/internal/procs"
)

// metricLimit is the metric the Overview reads from the serving process's
// registry: the send budgets' limits (the same in every process: they are
// the configuration's).
const metricLimit = "codemojex_budget_limit" // by budget: reply and bulk, or global

// Point is one sample of the Overview's chart: the deployment's rates
// (summed over every live process, each one's over its last two
// heartbeats) and gauges at At.
type Point struct {
	At        int64              `json:"t"` // unix ms
	Updates   float64            `json:"updates"`
	Messages  map[string]float64 `json:"messages"` // messages/s by queue (sends and edits)
	Budgets   map[string]float64 `json:"budgets"`  // messages/s by send budget (reply, bulk; or global)
	TooMany   float64            `json:"too_many"` // 429s/s
	Dropped   float64            `json:"dropped"`  // updates/s dropped by the flood limits
	InFlight  int                `json:"in_flight"`
	OldestAge float64            `json:"oldest_s"` // age of the oldest unhandled update, s
	Depth     map[string]int     `json:"depth"`    // pending by queue
	// Processes is how many live processes the rates are summed over.
	Processes int `json:"processes"`
}

// beats are one process's last two heartbeats (prev is zero until its
// second one is read).
type beats struct{ prev, last procs.Process }

// rate is figure name's rate over b's two heartbeats (per second; 0
// before the second, or when the counter went back: a new process under
// the same id cannot be, but a figure may appear late).
func (b *beats) rate(name string) float64 {
	dt := b.last.Seen.Sub(b.prev.Seen).Seconds()
	if b.prev.Seen.IsZero() || dt <= 0 {
		return 0
	}
	return max(b.last.Figures[name]-b.prev.Figures[name], 0) / dt
}

// sampler reads the deployment's processes (their heartbeats, with their
// counters) every period and keeps the last n points (a ring: memory
// bounded), and the deployment's totals at the last.
type sampler struct {
	b      Backend
	n      int
	mu     sync.Mutex
	procs  map[string]*beats // by process id: the live ones
	pts    []Point
	totals map[string]float64 // figure -> summed over the live processes
	// limits are the send budgets' limits (messages/s) last read.
	limits map[string]float64
	// every is the history's period; period the points of the current
	// one (since periodAt), averaged into its sample when it ends.
	every    time.Duration
	periodAt time.Time
	period   []Point
	log      *slog.Logger
}

// budgetsOf are the send budgets queue q's messages count against (the
// app's codemojex_budget_*): "paid" for the paid broadcasts' queue (its
// own budget, TELEGRAM_PAID_BROADCAST_RATE); with replies apart
// (TELEGRAM_REPLY_RATE > 0: a "reply" limit) "reply" or "bulk", and
// "global", the total over both, when it has a limit; else "global", the
// one budget they share.
func budgetsOf(q string, limits map[string]float64) []string {
	_, apart := limits["reply"]
	_, total := limits["global"]
	switch {
	case q == "paid":
		return []string{"paid"}
	case !apart:
		return []string{"global"}
	case q == "reply" && total:
		return []string{"reply", "global"}
	case q == "reply":
		return []string{"reply"}
	case total:
		return []string{"bulk", "global"}
	}
	return []string{"bulk"}
}

func newSampler(b Backend, n int, every time.Duration, log *slog.Logger) *sampler {
	return &sampler{b: b, n: n, procs: map[string]*beats{}, every: every, log: log}
}

func (s *sampler) run(ctx context.Context, period time.Duration) {
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

// readLimits reads the send budgets' limits from the serving process's
// registry.
func (s *sampler) readLimits() map[string]float64 {
	out := map[string]float64{}
	mfs, err := s.b.Gatherer().Gather()
	if err != nil {
		return out
	}
	for _, mf := range mfs {
		if mf.GetName() == metricLimit {
			for _, m := range mf.GetMetric() {
				out[label(m, "budget")] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

// sample takes one point: the live processes' heartbeats (a process's
// rates change at each of its beats, every 5 s), the queues' depths and
// the oldest waiting update.
func (s *sampler) sample(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	ps, err := s.b.Processes(ctx)
	if err != nil {
		return
	}
	limits := s.readLimits()
	p := Point{At: time.Now().UnixMilli(), Messages: map[string]float64{}, Budgets: map[string]float64{}, Depth: map[string]int{},
		Processes: len(ps)}
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
	live := make(map[string]*beats, len(ps))
	totals := map[string]float64{}
	for _, pr := range ps {
		b := s.procs[pr.ID]
		switch {
		case b == nil:
			b = &beats{last: pr}
		case pr.Seen.After(b.last.Seen):
			b.prev, b.last = b.last, pr
		}
		live[pr.ID] = b
		p.Updates += b.rate(procs.FigureHandled)
		p.TooMany += b.rate(procs.Figure429)
		p.Dropped += b.rate(procs.FigureDropped)
		for name, v := range b.last.Figures {
			totals[name] += v
			if q, ok := strings.CutPrefix(name, procs.FigureQueue); ok {
				r := b.rate(name)
				p.Messages[q] += r
				for _, b := range budgetsOf(q, limits) {
					p.Budgets[b] += r
				}
			}
		}
	}
	s.procs, s.totals, s.limits = live, totals, limits
	s.pts = append(s.pts, p)
	if len(s.pts) > s.n {
		s.pts = append(s.pts[:0], s.pts[len(s.pts)-s.n:]...)
	}
	done, doneAt := s.history(p)
	s.mu.Unlock()
	if len(done) == 0 {
		return
	}
	avg := average(done)
	avg.At = doneAt.UnixMilli()
	js, err := json.Marshal(avg)
	if err == nil {
		_, err = s.b.RecordSample(ctx, doneAt, string(js))
	}
	if err != nil {
		s.log.Warn("console: history sample not written", slog.Any("err", err))
	}
}

// history adds p to the current history period; once p is past it, it
// returns the period's points and start, for its sample (the average)
// to be written to Valkey, unless another console wrote it first
// (admin.Admin.RecordSample). Called with s.mu held.
func (s *sampler) history(p Point) ([]Point, time.Time) {
	at := time.UnixMilli(p.At).Truncate(s.every)
	if !at.After(s.periodAt) {
		s.period = append(s.period, p)
		return nil, time.Time{}
	}
	done, doneAt := s.period, s.periodAt
	s.period, s.periodAt = []Point{p}, at
	return done, doneAt
}

// average is the points' average: their rates averaged, their gauges as
// the last one read.
func average(ps []Point) Point {
	last := ps[len(ps)-1]
	out := Point{Messages: map[string]float64{}, Budgets: map[string]float64{}, InFlight: last.InFlight,
		OldestAge: last.OldestAge, Depth: last.Depth, Processes: last.Processes}
	n := float64(len(ps))
	for _, p := range ps {
		out.Updates += p.Updates / n
		out.TooMany += p.TooMany / n
		out.Dropped += p.Dropped / n
		for q, v := range p.Messages {
			out.Messages[q] += v / n
		}
		for b, v := range p.Budgets {
			out.Budgets[b] += v / n
		}
	}
	return out
}

// points returns a copy of the points kept, oldest first, the send
// budgets' limits and the deployment's totals (figure -> summed over the
// live processes: their counters since each started).
func (s *sampler) points() ([]Point, map[string]float64, map[string]float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Point(nil), s.pts...), s.limits, s.totals
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
