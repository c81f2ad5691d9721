package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
)

// scriptStats is the server's own time in scripts (EVALSHA and EVAL, from
// INFO commandstats): microseconds and calls since the last CONFIG
// RESETSTAT. Network and client time are not in it, so it is the figure
// least moved by load on the machine.
func scriptStats(ctx context.Context, c valkey.Client) (usec, calls float64, err error) {
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return 0, 0, fmt.Errorf("info commandstats: %w", err)
	}
	for _, line := range strings.Split(info, "\n") {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || (name != "cmdstat_evalsha" && name != "cmdstat_eval") {
			continue
		}
		for _, kv := range strings.Split(rest, ",") {
			k, v, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(v, 64)
			switch k {
			case "usec":
				usec += f
			case "calls":
				calls += f
			}
		}
	}
	return usec, calls, nil
}

// serverPerCall runs fn n times in sequence after CONFIG RESETSTAT and
// returns the server's script time per script call (µs).
func serverPerCall(ctx context.Context, c valkey.Client, n int, fn func(ctx context.Context) error) (float64, error) {
	if err := c.Do(ctx, c.B().ConfigResetstat().Build()).Error(); err != nil {
		return 0, fmt.Errorf("config resetstat: %w", err)
	}
	for range n {
		if err := fn(ctx); err != nil {
			return 0, err
		}
	}
	usec, calls, err := scriptStats(ctx, c)
	if err != nil {
		return 0, err
	}
	if calls == 0 {
		return 0, fmt.Errorf("no script calls counted")
	}
	return usec / calls, nil
}

// benchServerTime: the server's time per claim call (Max 1, 1,000 lanes
// with work, no ack) against its time per `return 1` call, both from INFO
// commandstats, the calls made one at a time from one client.
func benchServerTime(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	n := 20_000
	if cfg.quick {
		n = 2_000
	}
	store, err := lanes.New(c, lanes.WithTag("srv"))
	if err != nil {
		return err
	}
	const q = "srv"
	minter := lanes.NewMinter()
	payload := make([]byte, payloadSize)
	items := make([]lanes.Item, 0, n+throughputLanes)
	for i := range n + throughputLanes {
		items = append(items, lanes.Item{Group: strconv.Itoa(i % throughputLanes), ID: minter.New(), Payload: payload})
	}
	if _, err := store.Enqueue(ctx, q, items); err != nil {
		return fmt.Errorf("fill: %w", err)
	}
	req := lanes.ClaimRequest{Queues: []string{q}, Lease: time.Hour, Max: 1}
	claimUS, err := serverPerCall(ctx, c, n, func(ctx context.Context) error {
		cl, err := store.Claim(ctx, req)
		if err == nil && len(cl.Jobs) != 1 {
			err = fmt.Errorf("claim returned %d jobs", len(cl.Jobs))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("claim: %w", err)
	}
	sha, err := c.Do(ctx, c.B().ScriptLoad().Script("return 1").Build()).ToString()
	if err != nil {
		return fmt.Errorf("script load: %w", err)
	}
	oneUS, err := serverPerCall(ctx, c, n, func(ctx context.Context) error {
		return c.Do(ctx, c.B().Evalsha().Sha1(sha).Numkeys(0).Build()).Error()
	})
	if err != nil {
		return fmt.Errorf("return 1: %w", err)
	}
	cfg.log.Info("server time per call", "claim us", claimUS, "return 1 us", oneUS)
	t.add(fmt.Sprintf("server time per claim call (INFO commandstats; Max 1, %s lanes with work, no ack) vs per EVALSHA `return 1` (lower is better)", commas(throughputLanes)),
		fmt.Sprintf("%.1f µs", claimUS), fmt.Sprintf("%.1f µs", oneUS), ratio(claimUS, oneUS))
	return nil
}

// memUsage sums MEMORY USAGE (SAMPLES 0: exact) over every key matching
// pattern, and counts the keys.
func memUsage(ctx context.Context, c valkey.Client, pattern string) (bytes, keys int64, err error) {
	var cursor uint64
	for {
		e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Match(pattern).Count(1000).Build()).AsScanEntry()
		if err != nil {
			return 0, 0, fmt.Errorf("scan: %w", err)
		}
		for _, k := range e.Elements {
			v, err := c.Do(ctx, c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
			if err != nil && !valkey.IsValkeyNil(err) {
				return 0, 0, fmt.Errorf("memory usage %s: %w", k, err)
			}
			bytes += v
			keys++
		}
		if e.Cursor == 0 {
			return bytes, keys, nil
		}
		cursor = e.Cursor
	}
}

// benchMemory: Valkey memory per pending job, payload excluded (the sum of
// MEMORY USAGE over the queue's keys, less the payload bytes, per job),
// with 10,000 jobs on 1,000 lanes, against the same payloads in one raw
// list; then every job claimed and acked, and the keyspace against what it
// was before the enqueue.
func benchMemory(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	const jobs = 10_000
	store, err := lanes.New(c, lanes.WithTag("mem"))
	if err != nil {
		return err
	}
	pattern := "{mem}*"
	b0, k0, err := memUsage(ctx, c, pattern)
	if err != nil {
		return err
	}
	minter := lanes.NewMinter()
	payload := make([]byte, payloadSize)
	items := make([]lanes.Item, 0, jobs)
	raw := make([]string, 0, jobs)
	for i := range jobs {
		items = append(items, lanes.Item{Group: strconv.Itoa(1_000_000 + i%throughputLanes), ID: minter.New(), Payload: payload})
		raw = append(raw, string(payload))
	}
	if _, err := store.Enqueue(ctx, "mem", items); err != nil {
		return fmt.Errorf("enqueue: %w", err)
	}
	b1, k1, err := memUsage(ctx, c, pattern)
	if err != nil {
		return err
	}
	if err := c.Do(ctx, c.B().Rpush().Key("rawmem").Element(raw...).Build()).Error(); err != nil {
		return fmt.Errorf("raw rpush: %w", err)
	}
	rb, _, err := memUsage(ctx, c, "rawmem")
	if err != nil {
		return err
	}
	perJob := float64(b1-b0)/jobs - payloadSize
	perRaw := float64(rb)/jobs - payloadSize
	if err := drainQueue(ctx, store, "mem"); err != nil {
		return err
	}
	b2, k2, err := memUsage(ctx, c, pattern)
	if err != nil {
		return err
	}
	cfg.log.Info("memory", "per job", perJob, "raw list per element", perRaw, "keys pending", k1, "after drain bytes", b2, "keys", k2)
	t.add(fmt.Sprintf("Valkey memory per pending job, its %d-byte payload excluded (sum of MEMORY USAGE over the queue's keys / jobs; %s jobs on %s lanes, %s keys) vs a raw list of the same payloads (lower is better)",
		payloadSize, commas(jobs), commas(throughputLanes), commas(int(k1))),
		fmt.Sprintf("%.0f bytes", perJob), fmt.Sprintf("%.0f bytes", perRaw), ratio(perJob, perRaw))
	t.add("keyspace after every job is claimed and acked vs before the enqueue (keys, bytes)",
		fmt.Sprintf("%d keys, %d bytes", k2, b2), fmt.Sprintf("%d keys, %d bytes", k0, b0), fmt.Sprintf("%+d keys", k2-k0))
	return nil
}
