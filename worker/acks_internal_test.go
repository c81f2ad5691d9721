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
