package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(p * float64(len(s)-1))
	return s[i]
}

func ms(d time.Duration) string {
	if d < 10*time.Millisecond {
		return fmt.Sprintf("%.2f ms", float64(d.Microseconds())/1000)
	}
	if d < 10*time.Second {
		return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000)
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

// benchClaimLatency measures one claimer's Claim call (sequential, one job
// each, the job released untimed so the lane stays non-empty) with 10,
// 10,000 and 100,000 non-empty lanes.
func benchClaimLatency(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	samples := 3000
	if cfg.quick {
		samples = 300
	}
	var base time.Duration
	for _, n := range []int{10, 10_000, 100_000} {
		if err := flush(ctx, srv); err != nil {
			return err
		}
		store, err := lanes.New(c, lanes.WithTag("lat"))
		if err != nil {
			return err
		}
		minter := lanes.NewMinter()
		payload := make([]byte, payloadSize)
		const q = "lat"
		items := make([]lanes.Item, 0, 10_000)
		for i := range n {
			items = append(items, lanes.Item{Group: strconv.Itoa(i), ID: minter.New(), Payload: payload})
			if len(items) == cap(items) || i == n-1 {
				if _, err := store.Enqueue(ctx, q, items); err != nil {
					return fmt.Errorf("fill %d lanes: %w", n, err)
				}
				items = items[:0]
			}
		}
		req := lanes.ClaimRequest{Queues: []string{q}, Lease: time.Minute, Max: 1}
		lat := make([]time.Duration, 0, samples)
		for range samples + samples/10 {
			t0 := time.Now()
			cl, err := store.Claim(ctx, req)
			d := time.Since(t0)
			if err != nil {
				return fmt.Errorf("claim: %w", err)
			}
			if len(cl.Jobs) != 1 {
				return fmt.Errorf("claim with %d lanes returned %d jobs", n, len(cl.Jobs))
			}
			lat = append(lat, d)
			if err := store.Release(ctx, cl.Jobs[0].Lease); err != nil {
				return fmt.Errorf("release: %w", err)
			}
		}
		lat = lat[samples/10:] // warm-up
		p50, p99 := percentile(lat, 0.5), percentile(lat, 0.99)
		cfg.log.Info("claim latency", "lanes", n, "p50", p50, "p99", p99)
		if n == 10 {
			base = p50
		}
		t.add(fmt.Sprintf("claim latency p50 (p99) with %s non-empty lanes, vs 10 lanes", commas(n)),
			fmt.Sprintf("%s (%s)", ms(p50), ms(p99)), ms(base), ratio(float64(p50), float64(base)))
	}
	return nil
}

func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// benchBroadcast times notifier.Broadcast to 100,000 chats against a raw
// baseline: the same payloads RPUSHed onto one list, 1,000 per command,
// all commands in one pipelined round trip. The machine is noisy, so it
// runs three pairs (broadcast, then baseline, on an emptied server) and
// reports the medians, with the spread of the pairs' ratios, and the
// server's own time in the enqueue script per copy (INFO commandstats).
func benchBroadcast(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	n, pairs := 100_000, 3
	if cfg.quick {
		n, pairs = 10_000, 1
	}
	chats := make([]int64, n)
	for i := range chats {
		chats[i] = int64(1_000_000 + i)
	}
	msg := notifier.Message{Text: "🍓🍋🍇 The weekly codemojex tournament starts in one hour!"}
	var took, raw, ratios, script []float64
	for range pairs {
		if err := flush(ctx, srv); err != nil {
			return err
		}
		store, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag("bc"))
		if err != nil {
			return err
		}
		nt, err := notifier.New(c, store, notifier.Config{})
		if err != nil {
			return err
		}
		if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
			return fmt.Errorf("config resetstat: %w", err)
		}
		t0 := time.Now()
		if _, err := nt.Broadcast(ctx, chats, msg); err != nil {
			return fmt.Errorf("broadcast: %w", err)
		}
		bc := time.Since(t0)
		usec, _, err := scriptStats(ctx, c)
		if err != nil {
			return err
		}
		rw, err := rawBroadcast(ctx, c, chats, msg.Text)
		if err != nil {
			return err
		}
		cfg.log.Info("broadcast", "chats", n, "took", bc, "raw", rw, "script_us_per_copy", usec/float64(n))
		took, raw = append(took, bc.Seconds()), append(raw, rw.Seconds())
		ratios, script = append(ratios, bc.Seconds()/rw.Seconds()), append(script, usec/float64(n))
	}
	spread := ""
	if pairs > 1 {
		spread = fmt.Sprintf(" (%.1f-%.1f×)", slices.Min(ratios), slices.Max(ratios))
	}
	t.add(fmt.Sprintf("broadcast enqueue to %s chats (notifier.Broadcast; median of %d, the server's time in the enqueue script %.1f µs per copy) vs raw pipelined RPUSH of the same payloads (lower is better)", commas(n), pairs, median(script)),
		fmt.Sprintf("%.2f s", median(took)), fmt.Sprintf("%.2f s", median(raw)), fmt.Sprintf("%.2f×%s", median(ratios), spread))
	return nil
}

// rawBroadcast is benchBroadcast's baseline: each chat's payload encoded
// and RPUSHed onto one list, 1,000 per command, in one pipelined round trip.
func rawBroadcast(ctx context.Context, c valkey.Client, chats []int64, text string) (time.Duration, error) {
	cmds := make([]string, 0, 1000)
	t1 := time.Now()
	var batch [][]string
	for i, chat := range chats {
		p, err := tgjob.Job{Chat: chat, Text: text, Broadcast: "bc_x"}.Encode()
		if err != nil {
			return 0, err
		}
		cmds = append(cmds, string(p))
		if len(cmds) == 1000 || i == len(chats)-1 {
			batch = append(batch, cmds)
			cmds = make([]string, 0, 1000)
		}
	}
	built := make([]valkeyCmd, 0, len(batch))
	for _, b := range batch {
		built = append(built, c.B().Rpush().Key("rawbc").Element(b...).Build())
	}
	for _, r := range c.DoMulti(ctx, built...) {
		if err := r.Error(); err != nil {
			return 0, fmt.Errorf("raw rpush: %w", err)
		}
	}
	return time.Since(t1), nil
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

type valkeyCmd = valkey.Completed
