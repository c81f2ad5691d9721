package worker

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// ackEnv is a store on a dedicated server (its script calls counted alone)
// with n one-job lanes of the paced queue "q" claimed.
func ackEnv(t *testing.T, n int) (valkey.Client, *lanes.Store, []lanes.Job, func() float64) {
	t.Helper()
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	s, err := lanes.New(c, lanes.WithTag("acks"), lanes.WithQueue("q", lanes.QueueConfig{Ordered: true, Rate: 1000, Window: time.Second}),
		lanes.WithLanePace(lanes.Pace{Limit: 1, Period: time.Second}))
	require.NoError(t, err)
	m := lanes.NewMinter()
	items := make([]lanes.Item, n)
	for i := range items {
		items[i] = lanes.Item{Group: strconv.Itoa(1000 + i), ID: m.New(), Payload: []byte("x")}
	}
	_, err = s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	cl, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1, Lanes: n})
	require.NoError(t, err)
	require.Len(t, cl.Jobs, n)
	// The ack scripts loaded (an ack of no job each), so that a call
	// counts once (not EVALSHA, NOSCRIPT, then EVAL).
	none := lanes.Lease{Queue: "q", ID: m.New(), Token: "1"}
	require.ErrorIs(t, s.Ack(ctx, none), lanes.ErrNoJob)
	_, err = s.AckAll(ctx, []lanes.Acking{{Lease: none}})
	require.NoError(t, err)
	scripts := func() float64 {
		st := valkeytest.CommandStats(ctx, t, c)
		return st["evalsha"].Calls + st["eval"].Calls
	}
	return c, s, cl.Jobs, scripts
}

// At a high rate the acks of many senders at once share calls (Store.AckAll):
// 40 acks asked for together at 1,130/s (up to 19 a call) take at most a
// fifth as many script calls, every one acked with its tally counted; at
// the bulk rate (30/s) each ack is a call of its own, as before.
func TestAcksOfManySendersShareCallsAtAHighRateOnly(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		rate     int
		maxCalls float64
	}{{1130, 8}, {30, 40}} {
		t.Run(strconv.Itoa(tc.rate), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			c, s, jobs, scripts := ackEnv(t, 40)
			k := newAcker(s, tc.rate)
			rctx, stop := context.WithCancel(ctx)
			var wg sync.WaitGroup
			if k.size > 1 {
				wg.Go(func() { k.run(rctx) })
			}
			before := scripts()
			tally := lanes.SettleTally{Key: "{acks}:progress", Fields: []string{"sent"}}
			require.NoError(t, c.Do(ctx, c.B().Hset().Key(tally.Key).FieldValue().FieldValue("sent", "0").Build()).Error())
			errs := make([]error, len(jobs))
			var senders sync.WaitGroup
			for i, j := range jobs {
				senders.Go(func() { errs[i] = k.ack(ctx, j.Lease, tally) })
			}
			senders.Wait()
			calls := scripts() - before
			stop()
			wg.Wait()
			for i, err := range errs {
				require.NoError(t, err, "ack %d", i)
			}
			require.LessOrEqual(t, calls, tc.maxCalls)
			sent, err := c.Do(ctx, c.B().Hget().Key(tally.Key).Field("sent").Build()).AsInt64()
			require.NoError(t, err)
			require.EqualValues(t, len(jobs), sent, "every copy counted once")
			for _, j := range jobs {
				require.ErrorIs(t, s.Ack(ctx, j.Lease), lanes.ErrNoJob, "acked")
			}
		})
	}
}

// An ack that waited in its batch counts its send from when it was asked
// for (its wait added to its floor), not from when the batch was flushed:
// the send's entry in its budget's log is scored no later than the server
// time when the ack was asked for. (Without the wait in the floor it would
// be scored at the flush, the batch's whole wait later.)
func TestAnAckThatWaitedInItsBatchCountsFromWhenItWasAskedFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c, s, jobs, _ := ackEnv(t, 1)
	k := newAcker(s, 1130)
	k.gap = 300 * time.Millisecond // a lone ack waits it out
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	go k.run(rctx)
	tm, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
	require.NoError(t, err)
	sec, err := strconv.ParseInt(tm[0], 10, 64)
	require.NoError(t, err)
	usec, err := strconv.ParseInt(tm[1], 10, 64)
	require.NoError(t, err)
	asked := time.Unix(sec, usec*1000)
	t0 := time.Now()
	require.NoError(t, k.ack(ctx, jobs[0].Lease, lanes.SettleTally{}))
	require.GreaterOrEqual(t, time.Since(t0), k.gap, "the lone ack waited for others")
	member := string(jobs[0].ID) + ":" + jobs[0].Lease.Token
	score, err := c.Do(ctx, c.B().Zscore().Key("{acks}:q:q:rate").Member(member).Build()).AsFloat64()
	require.NoError(t, err)
	require.LessOrEqual(t, score, float64(asked.UnixMilli()+20), "scored from the ask (server %d), not the flush", asked.UnixMilli())
}

// A batch rides the next claim: acks waiting in a batch that is neither
// full nor at its gap (an hour here) are flushed as soon as the claim loop
// issues a claim (acker.claimed), in one call; a claim issued while no ack
// waited does not cut the next batch short.
func TestABatchOfAcksIsFlushedWhenAClaimIsIssued(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s, jobs, scripts := ackEnv(t, 6)
	k := newAcker(s, 1130)
	k.gap = time.Hour
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { k.run(rctx); close(ran) }()
	defer func() {
		stop()
		select { // a batch that never flushes holds run for its hour-long gap
		case <-ran:
		case <-time.After(5 * time.Second):
		}
	}()

	k.claimed() // no ack waits: a claim with nothing to carry
	before := scripts()
	reqs := make([]*ackReq, 3)
	for i, j := range jobs[:3] { // as ack asks, all three queued before the acker looks
		reqs[i] = &ackReq{a: lanes.Acking{Lease: j.Lease}, at: time.Now(), done: make(chan error, 1)}
		k.add(reqs[i])
	}
	time.Sleep(50 * time.Millisecond) // the acker woke for the batch and waits for its gap
	for _, r := range reqs {
		require.Empty(t, r.done, "no flush before a claim: the earlier claim did not count")
	}
	k.claimed()
	for _, r := range reqs {
		select {
		case err := <-r.done:
			require.NoError(t, err)
		case <-time.After(5 * time.Second):
			t.Fatal("a claim was issued and the batch was not flushed")
		}
	}
	require.InDelta(t, 1, scripts()-before, 0, "one call for the three acks")
}

// A full batch is flushed at once, not at its gap (an hour here), and acks
// beyond a full batch begin the next: 7 acks asked for before the acker
// looks, 3 a call, are two calls of 3 at once and a third ack that waits.
func TestAFullBatchOfAcksIsFlushedWithoutWaitingForItsGap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	_, s, jobs, scripts := ackEnv(t, 7)
	k := newAcker(s, 1130)
	k.size, k.gap = 3, time.Hour
	before := scripts()
	reqs := make([]*ackReq, len(jobs))
	for i, j := range jobs {
		reqs[i] = &ackReq{a: lanes.Acking{Lease: j.Lease}, at: time.Now(), done: make(chan error, 1)}
		k.add(reqs[i])
	}
	rctx, stop := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() { k.run(rctx); close(ran) }()
	defer func() {
		stop()
		select { // the last ack's batch holds run for its hour-long gap
		case <-ran:
		case <-time.After(5 * time.Second):
		}
	}()
	for i, r := range reqs[:6] {
		select {
		case err := <-r.done:
			require.NoError(t, err, "ack %d", i)
		case <-time.After(5 * time.Second):
			t.Fatalf("ack %d: its batch was full and was not flushed", i)
		}
	}
	time.Sleep(50 * time.Millisecond)
	require.Empty(t, reqs[6].done, "the seventh ack waits for its batch to fill or its gap")
	require.InDelta(t, 2, scripts()-before, 0, "two calls of three acks")
}
