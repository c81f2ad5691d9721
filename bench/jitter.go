package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/worker"
)

// Delivery with a jittering latency (issue 28): the delivery section's rig
// (a backlog of one message per chat, the global limit binding, 1 and 2
// worker processes, the slope over three steps of the budget) with replies,
// either sharing the one global budget (the emulator counting them in its
// global window, the worker -reply 0) or on a budget of their own (the
// emulator's reply window apart, tgemu.RepliesApart, the worker -reply at
// the same rate), and the emulator's latency steady or jittering ±50%
// (tgemu.WithJitter). The steady cell is the baseline of its jittering one.
const (
	jitterRate     = 30  // Telegram's limit, messages/s
	jitterFraction = 0.5 // ±50%
)

// jitterCell is one run's figures.
type jitterCell struct {
	got            float64 // delivered msg/s (slope)
	sends, tooMany int
}

func (c jitterCell) perMille() float64 { return perMille(c.tooMany, c.sends) }

func benchJitter(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	for _, apart := range []bool{false, true} {
		for _, lat := range []time.Duration{0, 100 * time.Millisecond, 300 * time.Millisecond, time.Second} {
			for _, procs := range []int{1, 2} {
				a, err := jitterRun(ctx, cfg, srv, lat, procs, apart, jitterFraction)
				if err != nil {
					return err
				}
				b, err := jitterRun(ctx, cfg, srv, lat, procs, apart, 0)
				if err != nil {
					return err
				}
				budget := "replies sharing the global budget"
				if apart {
					budget = "replies on their own budget"
				}
				met := a.got/jitterRate >= 0.95 && a.perMille() <= 1
				bound := jitterBound(lat, jitterFraction, jitterRate, time.Second, 1)
				t.add(fmt.Sprintf("delivered ÷ limit (%d/s), %s, Telegram answering after %v ±50%% vs steady, %d worker process(es) (429s per 1,000 sends %.1f / %.1f)",
					jitterRate, budget, lat, procs, a.perMille(), b.perMille()),
					fmt.Sprintf("%.2f (%.1f msg/s)", a.got/jitterRate, a.got), fmt.Sprintf("%.2f (%.1f msg/s)", b.got/jitterRate, b.got),
					ratio(a.got, b.got)+"; goal ≥ 0.95, ≤ 1 × 429 per 1,000: "+verdict(met)+fmt.Sprintf("; ideal regular sender's bound %.2f", bound))
			}
		}
	}
	return nil
}

// jitterRun measures one cell: jitter is the emulator's ±fraction (0:
// steady).
func jitterRun(ctx context.Context, cfg config, srv *valkeyserver.Server, lat time.Duration, procs int, apart bool, jitter float64) (jitterCell, error) {
	var cell jitterCell
	if err := flush(ctx, srv); err != nil {
		return cell, err
	}
	el := tgemu.ScaledLimits(jitterRate, deliveryChat, 20)
	reply := 0
	if apart {
		el.Reply, el.Replies, reply = tgemu.Rate{Messages: jitterRate, Per: time.Second}, tgemu.RepliesApart, jitterRate
	}
	emu, err := tgemu.New(tgemu.WithLimits(el), tgemu.WithAllowAnyChat(), tgemu.WithLatency(lat), tgemu.WithJitter(jitter))
	if err != nil {
		return cell, err
	}
	defer emu.Close()
	c, err := newClient(srv)
	if err != nil {
		return cell, err
	}
	defer c.Close()
	const tag = "jit"
	limits := notifier.DefaultLimits()
	limits.GlobalPerSecond, limits.PrivatePerSecond, limits.ReplyPerSecond, limits.ReplyLaneDepth = jitterRate, deliveryChat, reply, 100
	store, err := notifier.NewStore(c, limits, 0, lanes.WithTag(tag))
	if err != nil {
		return cell, err
	}
	n, err := notifier.New(c, store, notifier.Config{})
	if err != nil {
		return cell, err
	}
	maxLat := time.Duration(float64(lat) * (1 + jitter))
	measure := 3 * (time.Second + maxLat)
	need := int(float64(jitterRate) * (deliverySettle + measure + maxLat + 2*time.Second).Seconds())
	for i := range max(need, 60) {
		if _, err := n.Notify(ctx, int64(5001+i), notifier.Message{Text: "r", Class: notifier.Reply, ReplyTo: 7}); err != nil {
			return cell, err
		}
	}
	stop, err := startWorkerProcs(ctx, procs, srv, emu, tag, "-global", strconv.Itoa(jitterRate), "-chat", strconv.Itoa(deliveryChat),
		"-reply", strconv.Itoa(reply), "-senders", strconv.Itoa(worker.DefaultSenders))
	if err != nil {
		return cell, err
	}
	if _, err := emu.WaitForTotalMessages(ctx, 1); err != nil {
		_ = stop()
		return cell, err
	}
	first := time.Now()
	sleepCtx(ctx, deliverySettle+measure)
	from, to := first.Add(deliverySettle), time.Now()
	if err := stop(); err != nil {
		return cell, fmt.Errorf("worker processes: %w", err)
	}
	var times []time.Time
	for _, m := range emu.AllMessages() {
		if !m.Time.Before(from) && m.Time.Before(to) {
			times = append(times, m.Time)
		}
	}
	cell.got = slope(times)
	for _, r := range emu.Requests() {
		if strings.EqualFold(r.Method, "sendMessage") && !r.Canceled {
			cell.sends++
			if r.HTTPStatus == 429 {
				cell.tooMany++
			}
		}
	}
	cfg.log.Info("jitter", "latency", lat, "jitter", jitter, "procs", procs, "apart", apart, "msg/s", fmt.Sprintf("%.1f", cell.got),
		"ratio", fmt.Sprintf("%.2f", cell.got/jitterRate), "sends", cell.sends, "429s", cell.tooMany)
	return cell, nil
}
