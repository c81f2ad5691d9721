package lanes_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

func TestClaimServesLanesInTurnAndAckLeavesNoKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	for i := 0; i < 3; i++ {
		res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("a")}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Added)
	}
	res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "B{x}: é", ID: m.New(), Payload: []byte("b")}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	var got []string
	for i := 0; i < 4; i++ {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		got = append(got, c.Jobs[0].Group)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	require.Equal(t, []string{"A", "B{x}: é", "A", "A"}, got)
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c.Jobs)
	require.Equal(t, time.Duration(-1), c.RetryIn)
	keys, err := valkeytest.Keys(ctx, s.Client(), s.Keys().Pattern())
	require.NoError(t, err)
	require.Empty(t, keys)
}

// A burst of 10,000 jobs in lane A cannot starve ten one-job lanes enqueued
// after it: with Max 1 and weight 1, each of B..K is claimed within the
// first 11 claims (one turn of the ring).
func TestClaimBurstInOneLaneDoesNotStarveOthers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	enqueueN(t, s, m, "q", "A", 10_000)
	small := map[string]bool{}
	for c := 'B'; c <= 'K'; c++ {
		g := string(c)
		small[g] = true
		res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(g)}})
		require.NoError(t, err)
		require.Equal(t, 1, res.Added)
	}
	require.Len(t, ring(t, s, "q"), 11)

	var order []string
	for i := 0; i < 11; i++ {
		j := claimOne(t, s, time.Minute, "q")
		order = append(order, j.Group)
		delete(small, j.Group)
		require.NoError(t, s.Ack(ctx, j.Lease))
	}
	require.Empty(t, small, "lanes not served in the first 11 claims; order %v", order)
	require.Equal(t, []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}, order)
	// Only A is left, still in the ring once.
	require.Equal(t, []string{"A"}, ring(t, s, "q"))
	st, err := s.Inspector().Stats(ctx, "q", 1)
	require.NoError(t, err)
	require.Equal(t, 9_999, st.Pending)
}

// Weight w means up to w jobs per turn: A (weight 5) and B (weight 1), 600
// jobs each, one claimer with Max large enough: of the first 120 jobs handed
// out, A got 100 and B 20 (within one job), counting jobs, not calls.
func TestClaimWeightIsJobsPerTurn(t *testing.T) {
	t.Parallel()
	for _, max := range []int{5, 8, 1000} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t)
			m := lanes.NewMinter()
			require.NoError(t, s.Inspector().SetWeight(ctx, "A", 5))
			enqueueN(t, s, m, "q", "A", 600)
			enqueueN(t, s, m, "q", "B", 600)
			count := map[string]int{}
			total, calls := 0, 0
			for total < 120 {
				c := claim(t, s, max, time.Minute, "q")
				require.NotEmpty(t, c.Jobs)
				calls++
				for _, j := range c.Jobs {
					require.Equal(t, c.Jobs[0].Group, j.Group, "one claim serves one lane")
					if total < 120 {
						count[j.Group]++
					}
					total++
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				if c.Jobs[0].Group == "A" {
					require.Len(t, c.Jobs, 5, "A gets its weight per turn")
				} else {
					require.Len(t, c.Jobs, 1)
				}
			}
			require.InDelta(t, 100, count["A"], 1, "counts %v", count)
			require.InDelta(t, 20, count["B"], 1, "counts %v", count)
			require.Equal(t, 40, calls, "20 turns of two lanes")
		})
	}
}

// A weight is the group's in every queue of the store: set once (no queue
// named), it governs the group's lane in a configured ordered queue, a
// configured unordered one and one the store has no config for, and Stats
// shows it in each; set back to 1 it is gone everywhere, and so is its key.
func TestWeightSetOnceGovernsEveryQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	queues := []string{"ord", "unord", "plain"}
	s := newStore(t,
		lanes.WithQueue("ord", lanes.QueueConfig{Ordered: true}),
		lanes.WithQueue("unord", lanes.QueueConfig{}))
	m := lanes.NewMinter()
	require.NoError(t, s.Inspector().SetWeight(ctx, "heavy", 3))
	for _, q := range queues {
		enqueueN(t, s, m, q, "heavy", 30)
		enqueueN(t, s, m, q, "light", 30)
	}
	// served claims turns of the ring in q and returns each lane's batch sizes.
	served := func(q string, turns int) map[string][]int {
		out := map[string][]int{}
		for range 2 * turns {
			c := claim(t, s, 100, time.Minute, q)
			require.NotEmpty(t, c.Jobs, q)
			out[c.Jobs[0].Group] = append(out[c.Jobs[0].Group], len(c.Jobs))
			for _, j := range c.Jobs {
				require.NoError(t, s.Ack(ctx, j.Lease))
			}
		}
		return out
	}
	for _, q := range queues {
		require.Equal(t, map[string][]int{"heavy": {3, 3, 3}, "light": {1, 1, 1}}, served(q, 3), "queue %s: weight 3 per turn", q)
		st, err := s.Inspector().Stats(ctx, q, 2)
		require.NoError(t, err)
		for _, l := range st.Top {
			want := map[string]int{"heavy": 3, "light": 1}[l.Group]
			require.Equal(t, want, l.Weight, "queue %s lane %s: Stats shows the applied weight", q, l.Group)
		}
	}
	require.NoError(t, s.Inspector().SetWeight(ctx, "heavy", 1))
	for _, q := range queues {
		require.Equal(t, map[string][]int{"heavy": {1, 1}, "light": {1, 1}}, served(q, 2), "queue %s: back to weight 1", q)
	}
	w, err := s.Inspector().Weights(ctx)
	require.NoError(t, err)
	require.Empty(t, w)
	require.NotContains(t, tagKeys(t, s), s.Keys().Shared("weight"), "weight 1 leaves no key behind")
}

// Jobs of one lane come out in id (mint) order, also when an expired lease
// returns a job: it goes back to its place, ahead of later jobs. The leases
// expire on the server clock (150 ms) and the next Claim reclaims them.
func TestClaimKeepsLaneOrderAfterLeaseExpiry(t *testing.T) {
	t.Parallel()
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: ordered}))
			m := lanes.NewMinter()
			// Short enough to wait for, long enough that the steps before
			// the wait finish first even under -race.
			const lease = 150 * time.Millisecond
			require.NoError(t, s.Inspector().SetWeight(ctx, "A", 3))
			ids := enqueueN(t, s, m, "q", "A", 10)
			// Interleave another lane so the ring has to rotate.
			other := enqueueN(t, s, m, "q", "B", 3)

			first := claim(t, s, 3, lease, "q")
			require.Equal(t, ids[:3], jobIDs(first.Jobs))
			var got []lanes.JobID // order of A's jobs as finally delivered (acked)
			if ordered {
				// The lane is held until its batch settles: only B flows.
				for range other {
					j := claimOne(t, s, time.Minute, "q")
					require.Equal(t, "B", j.Group)
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				c := claim(t, s, 3, time.Minute, "q")
				require.Empty(t, c.Jobs)
				require.Greater(t, c.RetryIn, time.Duration(0), "retry when the lease ends")
				require.LessOrEqual(t, c.RetryIn, lease)
			} else {
				// Ack the middle job; 0 and 2 will expire.
				require.NoError(t, s.Ack(ctx, first.Jobs[1].Lease))
				got = append(got, first.Jobs[1].ID)
				b := claim(t, s, 3, time.Minute, "q")
				require.Equal(t, "B", b.Jobs[0].Group)
				for _, j := range b.Jobs {
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				c := claim(t, s, 3, time.Minute, "q")
				require.Equal(t, ids[3:6], jobIDs(c.Jobs))
				for _, j := range c.Jobs {
					require.NoError(t, s.Ack(ctx, j.Lease))
					got = append(got, j.ID)
				}
			}
			waitServerPast(t, s, first.Jobs[0].Deadline)
			for {
				c := claim(t, s, 3, time.Minute, "q")
				if len(c.Jobs) == 0 {
					break
				}
				for _, j := range c.Jobs {
					if j.Group != "A" {
						require.NoError(t, s.Ack(ctx, j.Lease))
						continue
					}
					got = append(got, j.ID)
					want := 0
					for _, f := range first.Jobs {
						if f.ID == j.ID {
							want = 1
						}
					}
					require.Equal(t, want, j.Attempts, "an expired lease counts an attempt")
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
			}
			if ordered {
				// The whole batch came back and was delivered again in order.
				require.Equal(t, ids, got)
			} else {
				// 1 acked first, then 3..5; the expired 0 and 2 went back
				// ahead of 6..9 and came out first, in id order.
				want := []lanes.JobID{ids[1], ids[3], ids[4], ids[5], ids[0], ids[2], ids[6], ids[7], ids[8], ids[9]}
				require.Equal(t, want, got)
			}
			require.ElementsMatch(t, []string{s.Keys().Shared("weight"), s.Keys().Queue("q", "recovered")}, tagKeys(t, s),
				"the weight and the recovered leases' counter stay")
		})
	}
}

// While a global rate binds, the budget refills one job at a time, so most
// claims could take only one job: a lane's turn cut short is finished
// before the ring moves on, and a lane of weight 5 still gets 5 times the
// share of a lane of weight 1 (the seed's promise). Ordered queue, as the
// bot uses.
func TestWeightHoldsWhileGlobalRateBinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t,
		lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}),
		lanes.WithGlobalRate(20, 100*time.Millisecond))
	m := lanes.NewMinter()
	groups := []string{"heavy", "b", "c", "d", "e", "f"}
	var items []lanes.Item
	for i := 0; i < 400; i++ {
		for _, g := range groups {
			items = append(items, lanes.Item{Group: g, ID: m.New(), Payload: []byte("x")})
		}
	}
	_, err := s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	require.NoError(t, s.Inspector().SetWeight(ctx, "heavy", 5))

	counts := map[string]int{}
	total := 0
	for total < 600 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 8})
		require.NoError(t, err)
		if len(c.Jobs) == 0 {
			require.GreaterOrEqual(t, c.RetryIn, time.Duration(0))
			time.Sleep(c.RetryIn)
			continue
		}
		for _, j := range c.Jobs {
			counts[j.Group]++
			total++
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	light := 0
	for _, g := range groups[1:] {
		light += counts[g]
	}
	ratio := float64(counts["heavy"]) / (float64(light) / 5)
	t.Logf("of %d jobs: heavy %d, the five others %v (ratio %.2f)", total, counts["heavy"], counts, ratio)
	require.InDelta(t, 5.0, ratio, 0.5, "weight 5 against weight 1 while the global rate binds")
}

// A reply enqueued after a 10,000-chat broadcast is
// claimed within the next 2 claims of a worker claiming ["reply", "notify"].
func TestClaimReplyOvertakesBroadcast(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	items := make([]lanes.Item, 10000)
	for i := range items {
		items[i] = lanes.Item{Group: fmt.Sprintf("-100%d", i), ID: m.New(), Payload: []byte("news")}
	}
	r, err := s.Enqueue(ctx, "notify", items)
	require.NoError(t, err)
	require.Equal(t, 10000, r.Added)
	req := lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 1}
	for i := 0; i < 3; i++ { // the broadcast is under way
		c, err := s.Claim(ctx, req)
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		require.Equal(t, "notify", c.Jobs[0].Queue)
	}
	// The user of chat -1009999 (still waiting for its broadcast) sends a command.
	_, err = s.Enqueue(ctx, "reply", []lanes.Item{{Group: "-1009999", ID: m.New(), Payload: []byte("answer")}})
	require.NoError(t, err)
	for i := 1; ; i++ {
		require.LessOrEqual(t, i, 2, "the reply was not claimed within 2 claims")
		c, err := s.Claim(ctx, req)
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		if c.Jobs[0].Queue == "reply" {
			require.Equal(t, "-1009999", c.Jobs[0].Group)
			require.Equal(t, []byte("answer"), c.Jobs[0].Payload)
			t.Logf("reply claimed by claim %d after the broadcast", i)
			break
		}
	}
}

// RetryIn is exact for every timed event: it is the ms from the claim's
// server time to the earliest parked lane, delayed retry or lease deadline,
// so a worker that sleeps RetryIn wakes when it falls due, not later.
func TestClaimRetryInIsExact(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	check := func(t *testing.T, q string, due int64) {
		t.Helper()
		before := serverNowMS(t, s)
		c := claim(t, s, 1, time.Minute, q)
		after := serverNowMS(t, s)
		require.Empty(t, c.Jobs)
		require.Positive(t, c.RetryIn)
		at := due - c.RetryIn.Milliseconds() // the script's now
		require.GreaterOrEqual(t, at, before)
		require.LessOrEqual(t, at, after)
	}
	t.Run("parked", func(t *testing.T) {
		fillLanes(t, s, m, "q1", "a", 1, 1)
		end, err := s.Inspector().Park(ctx, "q1", "a0", 700*time.Millisecond)
		require.NoError(t, err)
		check(t, "q1", end.UnixMilli())
	})
	t.Run("delayed", func(t *testing.T) {
		fillLanes(t, s, m, "q2", "b", 1, 1)
		j := claim(t, s, 1, time.Minute, "q2").Jobs[0]
		_, err := s.Nack(ctx, j.Lease, 800*time.Millisecond, "retry")
		require.NoError(t, err)
		v, err := rdo(t, s, "ZSCORE", s.Keys().Queue("q2", "delayed"), string(j.ID)).AsFloat64()
		require.NoError(t, err)
		check(t, "q2", int64(v))
	})
	t.Run("lease", func(t *testing.T) {
		fillLanes(t, s, m, "q3", "c", 1, 1)
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q3"}, Lease: 500 * time.Millisecond, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		check(t, "q3", c.Jobs[0].Deadline.UnixMilli())
	})
	t.Run("pace", func(t *testing.T) {
		require.NoError(t, s.Inspector().SetLanePace(ctx, "d0", lanes.Pace{Limit: 1, Period: 900 * time.Millisecond}))
		fillLanes(t, s, m, "q4", "d", 1, 2)
		j := claim(t, s, 1, time.Minute, "q4").Jobs[0]
		require.NoError(t, s.Ack(ctx, j.Lease))
		due, err := strconv.ParseInt(parkedScore(t, s, "q4", "d0"), 10, 64)
		require.NoError(t, err)
		require.Equal(t, claimedAt(j, time.Minute)+900, due)
		check(t, "q4", due)
	})
}

// A claim that carries acks settles them first, exactly as Ack would, and
// hands out the next batch in the same call: the acked jobs are gone, their
// lanes' in-flight counts dropped (so an ordered lane is served again at
// once), a stale or unknown lease is reported per ack and changes nothing,
// and acks are applied even when nothing is claimable or the store is
// paused.
func TestClaimWithAcksSettlesThenClaimsInOneCall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("ord", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	a := enqueueN(t, s, m, "ord", "A", 3)
	b := enqueueN(t, s, m, "q", "B", 1)
	req := lanes.ClaimRequest{Queues: []string{"ord", "q"}, Lease: time.Minute, Max: 1}

	first, err := s.Claim(ctx, req)
	require.NoError(t, err)
	require.Equal(t, []lanes.JobID{a[0]}, jobIDs(first.Jobs))
	require.Nil(t, first.Acked)

	// The ordered lane is held while a[0] is in flight, so the next claim
	// serves B; with the ack of a[0] in the same call it serves A again.
	req.Ack = []lanes.Lease{first.Jobs[0].Lease}
	second, err := s.Claim(ctx, req)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, second.Acked)
	require.Equal(t, []lanes.JobID{a[1]}, jobIDs(second.Jobs))
	require.Zero(t, rint(t, s, "EXISTS", s.Keys().Job("ord", a[0])), "acked job deleted")
	require.Equal(t, 1, inflight(t, s, "ord", "A"))

	// A stale lease (already acked) and a forged token are reported and
	// change nothing; the good ack in the same call still applies.
	forged := second.Jobs[0].Lease
	forged.Token = "9"
	req.Ack = []lanes.Lease{first.Jobs[0].Lease, forged, second.Jobs[0].Lease}
	third, err := s.Claim(ctx, req)
	require.NoError(t, err)
	require.Len(t, third.Acked, 3)
	require.ErrorIs(t, third.Acked[0], lanes.ErrNoJob)
	require.ErrorIs(t, third.Acked[1], lanes.ErrStaleLease)
	require.NoError(t, third.Acked[2])
	require.Equal(t, []lanes.JobID{a[2]}, jobIDs(third.Jobs))

	// Paused: the ack applies, nothing is handed out.
	require.NoError(t, s.Inspector().Pause(ctx, time.Minute))
	req.Ack = []lanes.Lease{third.Jobs[0].Lease}
	fourth, err := s.Claim(ctx, req)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, fourth.Acked)
	require.Empty(t, fourth.Jobs)
	require.Greater(t, fourth.RetryIn, 59*time.Second)
	require.NoError(t, s.Inspector().Resume(ctx))

	last := claimOne(t, s, time.Minute, "q")
	require.Equal(t, b[0], last.ID)
	// Nothing claimable: the ack applies and RetryIn says wait for a wake-up.
	req.Ack = []lanes.Lease{last.Lease}
	fifth, err := s.Claim(ctx, req)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, fifth.Acked)
	require.Empty(t, fifth.Jobs)
	require.Equal(t, time.Duration(-1), fifth.RetryIn)
	require.Empty(t, tagKeys(t, s), "every job acked: the keyspace is back at its baseline")

	// A lease of a queue the claim does not name is refused before any call.
	_, err = s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1, Ack: []lanes.Lease{third.Jobs[0].Lease}})
	require.ErrorIs(t, err, lanes.ErrInvalid)
}

// A claim of several lanes (ClaimRequest.Lanes) serves each lane as a
// claim of its own would, within the budgets the lanes before it left: the
// global rate, the queue's own budget and each lane's pace bound the call
// as they bound consecutive calls, a lane gets at most Max, and a later
// queue is not served by a call that served an earlier one. Each case
// fills lanes g0..g(n-1) of "b" (and "a" for the priority case) and makes
// one claim of want.lanes lanes, then a second, which finds nothing.
func TestClaimOfSeveralLanesKeepsEveryBudget(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		opts     []lanes.Option
		lanes    int // lanes filled in "b"
		per      int // jobs per lane
		first    int // lanes filled in "a", claimed before "b"
		weight0  int // g0's weight (0: 1)
		req      lanes.ClaimRequest
		want     []string // groups of the first claim's jobs, in order
		thenNone bool     // the second claim hands out nothing
	}{
		{name: "the global rate caps the call", opts: []lanes.Option{lanes.WithGlobalRate(5, time.Minute)},
			lanes: 10, per: 1, req: lanes.ClaimRequest{Max: 16, Lanes: 10},
			want: []string{"g0", "g1", "g2", "g3", "g4"}, thenNone: true},
		{name: "the queue's own budget caps the call",
			opts:  []lanes.Option{lanes.WithQueue("b", lanes.QueueConfig{Rate: 3, Window: time.Minute})},
			lanes: 10, per: 1, req: lanes.ClaimRequest{Max: 16, Lanes: 10},
			want: []string{"g0", "g1", "g2"}, thenNone: true},
		{name: "each lane's pace caps it, once per call",
			opts:  []lanes.Option{lanes.WithLanePace(lanes.Pace{Limit: 1, Period: time.Minute}), lanes.WithQueue("b", lanes.QueueConfig{LaneLimit: 10})},
			lanes: 3, per: 3, req: lanes.ClaimRequest{Max: 16, Lanes: 10},
			want: []string{"g0", "g1", "g2"}, thenNone: true},
		{name: "Lanes bounds the lanes served",
			lanes: 6, per: 1, req: lanes.ClaimRequest{Max: 16, Lanes: 4},
			want: []string{"g0", "g1", "g2", "g3"}},
		{name: "Max bounds each lane, and a lane keeping its turn ends the call",
			opts: []lanes.Option{lanes.WithQueue("b", lanes.QueueConfig{LaneLimit: 10})}, weight0: 3,
			lanes: 2, per: 3, req: lanes.ClaimRequest{Max: 2, Lanes: 2},
			want: []string{"g0", "g0"}},
		{name: "lanes of weight 1 in ring order", opts: []lanes.Option{lanes.WithQueue("b", lanes.QueueConfig{LaneLimit: 10})},
			lanes: 3, per: 2, req: lanes.ClaimRequest{Max: 16, Lanes: 5},
			want: []string{"g0", "g1", "g2", "g0", "g1"}},
		{name: "an earlier queue's lanes only", lanes: 5, per: 1, first: 1,
			req: lanes.ClaimRequest{Max: 16, Lanes: 10}, want: []string{"a0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, tc.opts...)
			m := lanes.NewMinter()
			queues := []string{"b"}
			if tc.first > 0 {
				fillLanes(t, s, m, "a", "a", tc.first, 1)
				queues = []string{"a", "b"}
			}
			if tc.weight0 > 0 {
				require.NoError(t, s.Inspector().SetWeight(ctx, "g0", tc.weight0))
			}
			fillLanes(t, s, m, "b", "g", tc.lanes, tc.per)
			req := tc.req
			req.Queues, req.Lease = queues, time.Minute
			c, err := s.Claim(ctx, req)
			require.NoError(t, err)
			var got []string
			for _, j := range c.Jobs {
				got = append(got, j.Group)
			}
			require.Equal(t, tc.want, got)
			require.Len(t, c.Batches(), len(slices.Compact(slices.Clone(tc.want))), "one batch per lane served")
			if tc.thenNone {
				c, err = s.Claim(ctx, req)
				require.NoError(t, err)
				require.Empty(t, c.Jobs, "a second claim within the same budgets")
				require.NotZero(t, c.RetryIn)
			}
		})
	}
}
