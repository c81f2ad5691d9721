package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A later queue's minimum share (QueueConfig.MinShare) of the global
// budget holds while an earlier queue could take the whole of it: with a
// global rate of 10 per window, ["reply", "notify"] both holding more work
// than that and notify's share 20%, the window's claims are 8 replies and
// then 2 notifications (replies first, bulk not starved; chaos seed 7 lost
// a broadcast's copies to strict priority when the learned budget fell
// below the replies' demand). A share already used in the window reserves
// nothing more (bulk claimed 2 before the replies came: the replies take
// the other 8), a queue with no work reserves nothing (the other one takes
// the whole budget), and a share of 0 is strict priority.
// The window is a minute, so no part of the budget refills during the test.
func TestMinShareKeepsALaterQueueServedWhileAnEarlierOneSaturatesTheBudget(t *testing.T) {
	t.Parallel()
	const rate = 10
	for _, tc := range []struct {
		name          string
		share         int
		lanes         int      // ClaimRequest.Lanes
		before        int      // notify jobs claimed before the replies are enqueued
		reply, notify int      // jobs enqueued, one per lane
		want          []string // the claims after before's
	}{
		{name: "both busy", share: 20, lanes: 1, reply: 20, notify: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "notify", "notify"}},
		{name: "both busy, several lanes per claim", share: 20, lanes: 16, reply: 20, notify: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "notify", "notify"}},
		{name: "a share rounds up", share: 1, lanes: 1, reply: 20, notify: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "notify"}},
		{name: "a share used: replies take the rest", share: 20, lanes: 1, before: 2, reply: 20, notify: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply"}},
		{name: "bulk idle: replies take it all", share: 20, lanes: 1, reply: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply"}},
		{name: "replies idle: bulk takes it all", share: 20, lanes: 1, notify: 20,
			want: []string{"notify", "notify", "notify", "notify", "notify", "notify", "notify", "notify", "notify", "notify"}},
		{name: "no share: strict priority", share: 0, lanes: 1, reply: 20, notify: 20,
			want: []string{"reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply", "reply"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithGlobalRate(rate, time.Minute),
				lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true}),
				lanes.WithQueue("notify", lanes.QueueConfig{Ordered: true, MinShare: tc.share}))
			m := lanes.NewMinter()
			req := lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 1, Lanes: tc.lanes}
			if tc.notify > 0 {
				fillLanes(t, s, m, "notify", "200", tc.notify, 1)
			}
			for range tc.before {
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: req.Queues, Lease: time.Minute, Max: 1})
				require.NoError(t, err)
				require.Len(t, c.Jobs, 1)
				require.Equal(t, "notify", c.Jobs[0].Queue)
				require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
			}
			if tc.reply > 0 {
				fillLanes(t, s, m, "reply", "-100", tc.reply, 1)
			}
			var got []string
			for range 2 * rate {
				c, err := s.Claim(ctx, req)
				require.NoError(t, err)
				if len(c.Jobs) == 0 {
					require.Positive(t, c.RetryIn, "the budget is spent: it refills in time")
					break
				}
				for _, j := range c.Jobs {
					got = append(got, j.Queue)
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
			}
			require.Equal(t, tc.want, got, "the queues of one window's claims, in order")
		})
	}
}

// A queue outside the global rate is served while the global budget is
// spent and its claims are not counted in it: with a global rate of 5 and
// paid's own 20 (per minute), a claim of [q, paid] hands out 5 of q's and
// then 20 of paid's, and q's 5 are still all the global log holds.
func TestAQueueOutsideTheGlobalRateIsNeitherCountedNorHeldByIt(t *testing.T) {
	t.Parallel()
	s := newStore(t, lanes.WithGlobalRate(5, time.Minute),
		lanes.WithQueue("paid", lanes.QueueConfig{Rate: 20, Window: time.Minute, OutsideGlobal: true}))
	m := lanes.NewMinter()
	for g := range 10 {
		enqueueN(t, s, m, "q", "q"+strconv.Itoa(g), 1)
	}
	for g := range 30 {
		enqueueN(t, s, m, "paid", "p"+strconv.Itoa(g), 1)
	}
	got := map[string]int{}
	for {
		c := claim(t, s, 1, time.Minute, "q", "paid")
		if len(c.Jobs) == 0 {
			require.Positive(t, c.RetryIn, "both budgets refill by time alone")
			break
		}
		got[c.Jobs[0].Queue]++
	}
	require.Equal(t, map[string]int{"q": 5, "paid": 20}, got)
	require.Equal(t, 5, rint(t, s, "ZCARD", "{"+s.Tag()+"}:s:rate"), "paid's claims are not in the global log")

	_, err := lanes.New(nil, lanes.WithQueue("paid", lanes.QueueConfig{MinShare: 10, OutsideGlobal: true}))
	require.ErrorIs(t, err, lanes.ErrInvalid, "a share of a budget the queue is outside")
	_, err = lanes.New(nil, lanes.WithGlobalRate(5, time.Minute), lanes.WithGlobalRateStart(6))
	require.ErrorIs(t, err, lanes.ErrInvalid, "a start above the rate")
}
