package httpserver

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/codemojex/codemojex/notifier"
)

// Broadcasts is what BroadcastCollector reads: the tracked broadcasts'
// progress (*broadcast.Service).
type Broadcasts interface {
	Running(ctx context.Context) ([]notifier.Progress, error)
}

// BroadcastCollector reads the tracked broadcasts' progress from Valkey on
// each scrape (Broadcasts.Running), so every process reports the same
// figures (take max(), not sum(), over processes):
// codemojex_broadcasts_running (broadcasts with messages remaining that
// have started), codemojex_broadcasts_scheduled (those not started yet:
// notifier.Progress.Scheduled), codemojex_broadcasts_halted (paid broadcasts halted because the bot
// cannot pay, waiting for the admin's Continue free or Stop), and
// codemojex_broadcast_messages{state} summed over the tracked broadcasts,
// state one of total, sent, failed, cancelled, remaining. When the read
// fails no gauge is reported (codemojex_queue_stats_up reads the same
// Valkey). Register it on the registry /metrics serves.
type BroadcastCollector struct {
	b                                    Broadcasts
	running, scheduled, halted, messages *prometheus.Desc
}

// NewBroadcastCollector returns the collector of b's gauges.
func NewBroadcastCollector(b Broadcasts) *BroadcastCollector {
	return &BroadcastCollector{b: b,
		running: prometheus.NewDesc("codemojex_broadcasts_running",
			"Broadcasts started with messages still to send or in flight (tracked, as read from Valkey; not the scheduled ones).", nil, nil),
		scheduled: prometheus.NewDesc("codemojex_broadcasts_scheduled",
			"Broadcasts scheduled to start later (tracked, not started yet, not stopped).", nil, nil),
		halted: prometheus.NewDesc("codemojex_broadcasts_halted",
			"Paid broadcasts halted because the bot cannot pay, waiting for the admin's Continue free or Stop.", nil, nil),
		messages: prometheus.NewDesc("codemojex_broadcast_messages",
			"Messages of the tracked broadcasts by state: total (planned), sent, failed, cancelled (stopped), remaining (waiting or in flight).",
			[]string{"state"}, nil),
	}
}

// Describe sends the gauges' descriptions (prometheus.Collector).
func (b *BroadcastCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- b.running
	ch <- b.scheduled
	ch <- b.halted
	ch <- b.messages
}

// Collect reads the tracked broadcasts (2 s at most) (prometheus.Collector).
func (b *BroadcastCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	all, err := b.b.Running(ctx)
	if err != nil {
		return
	}
	now := time.Now()
	var running, scheduled, halted, total, sent, failed, cancelled, remaining int
	for _, p := range all {
		switch {
		case p.Done():
		case p.Scheduled(now):
			// Not started: not running (alerts.yml lets a running
			// broadcast fill the bulk budget; a scheduled one does not).
			scheduled++
		default:
			running++
		}
		if p.Paid && p.Halted && !p.Stopped && !p.Free {
			halted++
		}
		total += p.Total
		sent += p.Sent
		for _, n := range p.Failed {
			failed += n
		}
		cancelled += p.Cancelled
		remaining += max(p.Remaining, 0)
	}
	ch <- prometheus.MustNewConstMetric(b.running, prometheus.GaugeValue, float64(running))
	ch <- prometheus.MustNewConstMetric(b.scheduled, prometheus.GaugeValue, float64(scheduled))
	ch <- prometheus.MustNewConstMetric(b.halted, prometheus.GaugeValue, float64(halted))
	for _, s := range []struct {
		state string
		n     int
	}{{"total", total}, {"sent", sent}, {"failed", failed}, {"cancelled", cancelled}, {"remaining", remaining}} {
		ch <- prometheus.MustNewConstMetric(b.messages, prometheus.GaugeValue, float64(s.n), s.state)
	}
}
