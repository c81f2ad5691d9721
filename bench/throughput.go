package main

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/lanes"
)

// throughputLanes is how many lanes the throughput jobs are spread over.
const throughputLanes = 1000

// payloadSize is the payload of every throughput job (a short Telegram
// message as JSON is about this size).
const payloadSize = 64

// parallel runs fn n times on workers goroutines (each call gets the next
// index) and returns the wall time; the first error stops it.
func parallel(ctx context.Context, workers, n int, fn func(ctx context.Context, i int) error) (time.Duration, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	if err := context.Cause(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return took, err
	}
	return took, ctx.Err()
}

func perSecond(n int, d time.Duration) float64 { return float64(n) / d.Seconds() }

// redisBenchmark runs redis-benchmark (50 clients, no pipelining) against
// srv and returns requests per second.
func redisBenchmark(ctx context.Context, srv *valkeyserver.Server, n int, args ...string) (float64, error) {
	host, port, _ := strings.Cut(srv.Addr, ":")
	bin, err := benchmarkTool()
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"-h", host, "-p", port, "-q", "--csv", "-n", strconv.Itoa(n)}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		return 0, fmt.Errorf("%s %v: %w", bin, args, err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(out))).ReadAll()
	if err != nil || len(recs) < 2 || len(recs[1]) < 2 {
		return 0, fmt.Errorf("%s: unexpected output %q", bin, out)
	}
	v, err := strconv.ParseFloat(recs[1][1], 64)
	if err != nil {
		return 0, fmt.Errorf("%s: rps %q: %w", bin, recs[1][1], err)
	}
	return v, nil
}

func newClient(srv *valkeyserver.Server) (valkey.Client, error) {
	c, err := srv.NewClient()
	if err != nil {
		return nil, fmt.Errorf("connect %s: %w", srv.Addr, err)
	}
	return c, nil
}

type tp struct{ enqueue, claimAck, cycle float64 }

func benchThroughput(ctx context.Context, cfg config, srv *valkeyserver.Server, t *table) error {
	n, w := cfg.jobs, cfg.workers
	lpush, err := redisBenchmark(ctx, srv, 2*n, "-t", "lpush")
	if err != nil {
		return err
	}
	c, err := newClient(srv)
	if err != nil {
		return err
	}
	defer c.Close()
	sha, err := c.Do(ctx, c.B().ScriptLoad().Script("return 1").Build()).ToString()
	if err != nil {
		return fmt.Errorf("script load: %w", err)
	}
	evalsha, err := redisBenchmark(ctx, srv, 2*n, "evalsha", sha, "0")
	if err != nil {
		return err
	}
	// The same script from the same goroutines through valkey-go (which
	// pipelines concurrent calls on its connections): the Go client's own
	// ceiling, so the lanes rows separate the client's cost from the
	// scripts'.
	d, err := parallel(ctx, w, 2*n, func(ctx context.Context, _ int) error {
		return c.Do(ctx, c.B().Evalsha().Sha1(sha).Numkeys(0).Build()).Error()
	})
	if err != nil {
		return fmt.Errorf("valkey-go evalsha: %w", err)
	}
	goEvalsha := perSecond(2*n, d)
	cfg.log.Info("raw", "lpush", int(lpush), "evalsha", int(evalsha), "valkey-go evalsha", int(goEvalsha))
	if err := flush(ctx, srv); err != nil {
		return err
	}
	lt, err := lanesThroughput(ctx, c, n, w)
	if err != nil {
		return err
	}
	cfg.log.Info("lanes", "enqueue", int(lt.enqueue), "claim+ack", int(lt.claimAck), "cycle", int(lt.cycle))
	if err := flush(ctx, srv); err != nil {
		return err
	}
	at, err := asynqThroughput(ctx, srv, n, w)
	if err != nil {
		return err
	}
	cfg.log.Info("asynq", "enqueue", int(at.enqueue), "process", int(at.claimAck), "cycle", int(at.cycle))
	tool, err := benchmarkTool()
	if err != nil {
		return err
	}
	tool = filepath.Base(tool)
	raw := fmt.Sprintf("%s / %s / %s", reqRate(lpush), reqRate(evalsha), reqRate(goEvalsha))
	ratios := func(v float64) string {
		return ratio(v, lpush) + " / " + ratio(v, evalsha) + " / " + ratio(v, goEvalsha)
	}
	t.add(fmt.Sprintf("valkey-go EVALSHA `return 1` from the same %d goroutines vs %s EVALSHA `return 1` (%d clients)", w, tool, w),
		reqRate(goEvalsha), reqRate(evalsha), ratio(goEvalsha, evalsha))
	t.add(fmt.Sprintf("lanes enqueue (%d clients, %s lanes) vs %s LPUSH / EVALSHA `return 1` / valkey-go EVALSHA `return 1`", w, commas(throughputLanes), tool),
		rate(lt.enqueue), raw, ratios(lt.enqueue))
	t.add("lanes claim+ack (1 job per claim; each ack rides on the next claim) vs LPUSH / EVALSHA / valkey-go EVALSHA",
		rate(lt.claimAck), raw, ratios(lt.claimAck))
	t.add("lanes full cycle (enqueue, claim, ack; producers and consumers together) vs LPUSH / EVALSHA / valkey-go EVALSHA",
		rate(lt.cycle), raw, ratios(lt.cycle))
	t.add("enqueue: lanes vs asynq v0.26.0 (same server, same clients)", rate(lt.enqueue), rate(at.enqueue), ratio(lt.enqueue, at.enqueue))
	t.add("claim+ack: lanes vs asynq processing (no-op handler, concurrency = clients)", rate(lt.claimAck), rate(at.claimAck), ratio(lt.claimAck, at.claimAck))
	t.add("full cycle: lanes vs asynq", rate(lt.cycle), rate(at.cycle), ratio(lt.cycle, at.cycle))
	return nil
}

func lanesThroughput(ctx context.Context, c valkey.Client, n, workers int) (tp, error) {
	var res tp
	store, err := lanes.New(c, lanes.WithTag("bench"))
	if err != nil {
		return res, err
	}
	minter := lanes.NewMinter()
	payload := make([]byte, payloadSize)
	group := func(i int) string { return strconv.Itoa(i % throughputLanes) }
	const q = "tp"
	d, err := parallel(ctx, workers, n, func(ctx context.Context, i int) error {
		_, err := store.Enqueue(ctx, q, []lanes.Item{{Group: group(i), ID: minter.New(), Payload: payload}})
		return err
	})
	if err != nil {
		return res, fmt.Errorf("enqueue: %w", err)
	}
	res.enqueue = perSecond(n, d)

	// Each consumer acks its previous job in the claim of its next one (one
	// round trip per job), and acks its last job on its own.
	req := lanes.ClaimRequest{Queues: []string{q}, Lease: time.Minute, Max: 1}
	consume := func(ctx context.Context, workers int, done func() bool, count func(int)) error {
		_, err := parallel(ctx, workers, workers, func(ctx context.Context, _ int) error {
			var held []lanes.Lease
			for !done() {
				r := req
				r.Ack = held
				cl, err := store.Claim(ctx, r)
				if err != nil {
					return err
				}
				for _, e := range cl.Acked {
					if e != nil {
						return e
					}
				}
				count(len(held))
				held = held[:0]
				for _, j := range cl.Jobs {
					held = append(held, j.Lease)
				}
				if len(cl.Jobs) == 0 {
					time.Sleep(200 * time.Microsecond)
				}
			}
			for _, l := range held {
				if err := store.Ack(ctx, l); err != nil {
					return err
				}
			}
			count(len(held))
			return nil
		})
		return err
	}
	var acked atomic.Int64
	start := time.Now()
	err = consume(ctx, workers, func() bool { return acked.Load() >= int64(n-workers) }, func(k int) { acked.Add(int64(k)) })
	d = time.Since(start)
	if err != nil {
		return res, fmt.Errorf("claim+ack: %w", err)
	}
	// The consumers stop once at most one job each is left; they ack what
	// they hold; the rest (if any) is drained untimed.
	n2 := int(acked.Load())
	if err := drainQueue(ctx, store, q); err != nil {
		return res, err
	}
	res.claimAck = perSecond(n2, d)
	res.claimAck = perSecond(n, d)

	// Full cycle: half the clients produce, half consume, at the same time.
	acked.Store(0)
	prod, cons := max(workers/2, 1), max(workers-workers/2, 1)
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	start = time.Now()
	wg.Go(func() {
		_, err := parallel(ctx, prod, n, func(ctx context.Context, i int) error {
			_, err := store.Enqueue(ctx, q, []lanes.Item{{Group: group(i), ID: minter.New(), Payload: payload}})
			return err
		})
		errs <- err
	})
	wg.Go(func() {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		errs <- consume(cctx, cons, func() bool { return acked.Load() >= int64(n-cons) }, func(k int) { acked.Add(int64(k)) })
	})
	wg.Wait()
	n3 := int(acked.Load())
	res.cycle = perSecond(n3, time.Since(start))
	close(errs)
	for err := range errs {
		if err != nil {
			return res, fmt.Errorf("full cycle: %w", err)
		}
	}
	return res, nil
}

// drainQueue claims and acks whatever is left on queue q (untimed).
func drainQueue(ctx context.Context, store *lanes.Store, q string) error {
	for {
		cl, err := store.Claim(ctx, lanes.ClaimRequest{Queues: []string{q}, Lease: time.Minute, Max: 100})
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		if len(cl.Jobs) == 0 {
			return nil
		}
		for _, j := range cl.Jobs {
			if err := store.Ack(ctx, j.Lease); err != nil {
				return fmt.Errorf("drain: %w", err)
			}
		}
	}
}

func asynqThroughput(ctx context.Context, srv *valkeyserver.Server, n, workers int) (tp, error) {
	var res tp
	opt := asynq.RedisClientOpt{Addr: srv.Addr, PoolSize: workers + 10}
	client := asynq.NewClient(opt)
	defer client.Close()
	payload := make([]byte, payloadSize)
	const q = "tp"
	enqueue := func(ctx context.Context, _ int) error {
		_, err := client.EnqueueContext(ctx, asynq.NewTask("bench", payload), asynq.Queue(q))
		return err
	}
	d, err := parallel(ctx, workers, n, enqueue)
	if err != nil {
		return res, fmt.Errorf("asynq enqueue: %w", err)
	}
	res.enqueue = perSecond(n, d)

	// process drains n tasks with a no-op handler; the server polls an empty
	// queue every millisecond (asynq's default is 1 s, which would only
	// measure the poll interval).
	process := func(n int, alsoEnqueue bool) (time.Duration, error) {
		var done atomic.Int64
		finished := make(chan struct{})
		s := asynq.NewServer(opt, asynq.Config{
			Concurrency:       workers,
			Queues:            map[string]int{q: 1},
			TaskCheckInterval: time.Millisecond,
			LogLevel:          asynq.FatalLevel,
		})
		start := time.Now()
		if err := s.Start(asynq.HandlerFunc(func(context.Context, *asynq.Task) error {
			if done.Add(1) == int64(n) {
				close(finished)
			}
			return nil
		})); err != nil {
			return 0, fmt.Errorf("asynq server: %w", err)
		}
		defer s.Shutdown()
		if alsoEnqueue {
			if _, err := parallel(ctx, max(workers/2, 1), n, enqueue); err != nil {
				return 0, fmt.Errorf("asynq enqueue: %w", err)
			}
		}
		select {
		case <-finished:
		case <-time.After(5 * time.Minute):
			return 0, fmt.Errorf("asynq: %d of %d tasks processed in 5 min", done.Load(), n)
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		return time.Since(start), nil
	}
	if d, err = process(n, false); err != nil {
		return res, err
	}
	res.claimAck = perSecond(n, d)
	if d, err = process(n, true); err != nil {
		return res, err
	}
	res.cycle = perSecond(n, d)
	return res, nil
}
