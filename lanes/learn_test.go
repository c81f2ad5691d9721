package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// learnBudget is a budget of 40 per minute (a window no test outlives, so
// claims are bounded by the rate alone), either the store's global one or
// the queue's own.
type learnBudget struct {
	name  string
	opts  []lanes.Option
	queue string // the queue whose field Learned reports ("" global)
}

func learnBudgets(learn lanes.LearnConfig) []learnBudget {
	return []learnBudget{
		{name: "global rate", opts: []lanes.Option{lanes.WithGlobalRate(40, time.Minute), lanes.WithLearning(learn)}},
		{name: "queue's own rate", queue: "q", opts: []lanes.Option{
			lanes.WithQueue("q", lanes.QueueConfig{Rate: 40, Window: time.Minute}), lanes.WithLearning(learn)}},
	}
}

// claimAll claims one job at a time from queue q until a claim hands out
// nothing, and returns how many it got.
func claimAll(t *testing.T, s *lanes.Store) int {
	t.Helper()
	return len(claimLeases(t, s))
}

// claimLeases is claimAll returning the leases, in claim order.
func claimLeases(t *testing.T, s *lanes.Store) []lanes.Lease {
	t.Helper()
	var out []lanes.Lease
	for {
		c := claim(t, s, 1, time.Minute, "q")
		if len(c.Jobs) == 0 {
			require.Positive(t, c.RetryIn, "the budget refills by time alone")
			return out
		}
		out = append(out, c.Jobs[0].Lease)
	}
}

// learnedOf returns the learned state of budget b of s.
func learnedOf(t *testing.T, s *lanes.Store, queue string) lanes.LearnedBudget {
	t.Helper()
	ls, err := s.Inspector().Learned(context.Background())
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, queue, ls[0].Queue)
	return ls[0]
}

// A decrease halves what every claimer of the store claims, a process
// started afterwards included: a budget of 40 per minute lowered once
// hands out 20 jobs of 60 to another store on its own client (another
// process, or this one restarted), and Learned says so, why and when.
func TestLowerBudgetHalvesWhatEveryClaimerClaims(t *testing.T) {
	t.Parallel()
	for _, b := range learnBudgets(lanes.LearnConfig{Every: time.Hour}) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, b.opts...)
			m := lanes.NewMinter()
			for g := range 60 {
				enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
			}
			before := learnedOf(t, s, b.queue)
			require.Equal(t, lanes.LearnedBudget{Queue: b.queue, Configured: 40, Window: time.Minute, Rate: 40, Cap: 40}, before, "nothing learned yet")
			t0 := serverNowMS(t, s)
			lowered, rate, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
			require.NoError(t, err)
			require.True(t, lowered)
			require.Equal(t, 20, rate)

			restarted := sibling(t, s, b.opts...)
			require.Equal(t, 20, claimAll(t, restarted), "jobs claimed under the learned rate")
			got := learnedOf(t, restarted, b.queue)
			require.Equal(t, 20, got.Rate)
			require.Equal(t, 40, got.Configured)
			require.Equal(t, 40, got.Hit, "the rate that brought the decrease")
			require.Equal(t, "429 from several chats", got.Why)
			require.Equal(t, int64(1), got.Decreases)
			require.GreaterOrEqual(t, got.Lowered.UnixMilli(), t0)
			require.Equal(t, got.Lowered.Add(lanes.DefaultLearnHold), got.HoldUntil)
			require.Equal(t, 30, got.Cap, "three quarters of the rate that brought it, while the hold runs")
		})
	}
}

// Store.LowerBudget lowers only a budget that binds: its send log counts
// at least rate ÷ LearnBindingDivisor sends in its last window, in flight
// or settled. Below that its sends ran under what the halving would leave,
// so a burst of 429s leaves it alone (chaos seed 7: such bursts took a
// reply budget of 50 down to 4 while replies ran at 7/s);
// Inspector.LowerBudget halves it anyway.
func TestLowerBudgetLowersOnlyABudgetThatBinds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		claims      int // of 40 per minute
		acked       bool
		inspector   bool
		wantLowered bool
		wantRate    int
	}{
		{name: "idle", claims: 0, wantRate: 40},
		{name: "19 in flight", claims: 19, wantRate: 40},
		{name: "20 in flight", claims: 20, wantLowered: true, wantRate: 20},
		{name: "20 delivered within the window", claims: 20, acked: true, wantLowered: true, wantRate: 20},
		{name: "idle, by an operator", claims: 0, inspector: true, wantLowered: true, wantRate: 20},
	}
	for _, b := range learnBudgets(lanes.LearnConfig{Every: time.Hour}) {
		for _, tc := range cases {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newStore(t, b.opts...)
				m := lanes.NewMinter()
				for g := range tc.claims {
					enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
				}
				for range tc.claims {
					j := claimOne(t, s, time.Minute, "q")
					if tc.acked {
						require.NoError(t, s.Ack(ctx, j.Lease))
					}
				}
				lower := s.LowerBudget
				if tc.inspector {
					lower = s.Inspector().LowerBudget
				}
				lowered, rate, err := lower(ctx, "q", "429 from several chats")
				require.NoError(t, err)
				require.Equal(t, tc.wantLowered, lowered)
				require.Equal(t, tc.wantRate, rate)
				got := learnedOf(t, s, b.queue)
				require.Equal(t, tc.wantRate, got.Rate)
				if !tc.wantLowered {
					require.Zero(t, got.Decreases, "nothing recorded")
					require.True(t, got.Lowered.IsZero())
				}
			})
		}
	}
}

// Only the last window's sends make a budget bind: 2 sends of a budget of
// 4 per 300 ms bind while they are in it, and no longer once delivered a
// window ago.
func TestLowerBudgetCountsOnlyTheLastWindowsSends(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const window = 300 * time.Millisecond
	s := newStore(t, lanes.WithGlobalRate(4, window), lanes.WithLearning(lanes.LearnConfig{Every: time.Hour}))
	m := lanes.NewMinter()
	for g := range 2 {
		enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
	}
	var leases []lanes.Lease
	for range 2 {
		leases = append(leases, claimOne(t, s, time.Minute, "q").Lease)
	}
	for _, l := range leases {
		require.NoError(t, s.Ack(ctx, l))
	}
	t0 := serverNowMS(t, s)
	for serverNowMS(t, s) < t0+window.Milliseconds()+20 {
		time.Sleep(20 * time.Millisecond)
	}
	lowered, rate, err := s.LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.False(t, lowered, "the sends left the window")
	require.Equal(t, 4, rate)

	enqueueN(t, s, m, "q", "g2", 1)
	enqueueN(t, s, m, "q", "g3", 1)
	claimOne(t, s, time.Minute, "q")
	claimOne(t, s, time.Minute, "q")
	lowered, rate, err = s.LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered, "2 of 4 in the window: it binds")
	require.Equal(t, 2, rate)
}

// A global pause (the worker's for a 429's retry_after) sends nothing, so
// the sends since it ended are judged against the time since then (at
// least a quarter window), not the whole window: 12 sends of a budget of
// 40 per 2 s right after a pause bind (at least 40 ÷ 2 × ¼), the same 12
// with no pause before them do not (fewer than 20), nor with a pause
// running now (its sends came before it: the whole window counts).
func TestLowerBudgetJudgesTheSendsSinceTheLastPauseEnded(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name        string
		pauseBefore bool
		pauseNow    bool
		wantLowered bool
	}{
		{name: "right after a pause", pauseBefore: true, wantLowered: true},
		{name: "no pause"},
		{name: "after a pause, paused again now", pauseBefore: true, pauseNow: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithGlobalRate(40, 2*time.Second), lanes.WithLearning(lanes.LearnConfig{Every: time.Hour}))
			m := lanes.NewMinter()
			for g := range 12 {
				enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
			}
			if tc.pauseBefore {
				require.NoError(t, s.Inspector().PauseWhy(ctx, 50*time.Millisecond, "429 from several chats"))
				require.Eventually(t, func() bool {
					p, err := s.Inspector().Paused(ctx)
					require.NoError(t, err)
					return p.Left == 0
				}, 10*time.Second, 10*time.Millisecond)
			}
			for range 12 {
				claimOne(t, s, time.Minute, "q")
			}
			if tc.pauseNow {
				require.NoError(t, s.Inspector().PauseWhy(ctx, time.Minute, "429 from several chats"))
			}
			lowered, rate, err := s.LowerBudget(ctx, "q", "429 from several chats")
			require.NoError(t, err)
			require.Equal(t, tc.wantLowered, lowered)
			want := 40
			if tc.wantLowered {
				want = 20
			}
			require.Equal(t, want, rate)
		})
	}
}

// Decreases within the cooldown count once (every process, and every 429 of
// a burst, report the same push-back); past it each halves the rate, never
// below ceil(40 / 4) = 10 (LearnFloorDivisor); a call at the floor
// changes nothing (no decrease counted, no hold renewed).
func TestLowerBudgetCountsABurstOnceAndStopsAtTheFloor(t *testing.T) {
	t.Parallel()
	// The cooldown is long enough that two calls of one step's burst land
	// within it on a loaded host (50 ms did not, once: step 1 lowered), and
	// short enough that the four waits past it cost seconds.
	const cooldown = 2 * time.Second
	for _, b := range learnBudgets(lanes.LearnConfig{Every: time.Hour, Cooldown: cooldown}) {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, b.opts...)
			other := sibling(t, s, b.opts...)
			steps := []struct {
				store       *lanes.Store
				waitCool    bool
				wantLowered bool
				wantRate    int
			}{
				{s, false, true, 20},
				{other, false, false, 20}, // the same burst, seen by another process
				{s, false, false, 20},
				{other, true, true, 10}, // at the floor
				{s, true, false, 10},    // nothing lowered: nothing counted
			}
			decreases := int64(0)
			for i, st := range steps {
				if st.waitCool {
					waitServerPast(t, s, learnedOf(t, s, b.queue).Lowered.Add(cooldown))
				}
				lowered, rate, err := st.store.Inspector().LowerBudget(ctx, "q", "429 from several chats")
				require.NoError(t, err)
				require.Equal(t, st.wantLowered, lowered, "step %d", i)
				require.Equal(t, st.wantRate, rate, "step %d", i)
				if lowered {
					decreases++
				}
				require.Equal(t, decreases, learnedOf(t, s, b.queue).Decreases, "step %d", i)
			}
		})
	}
}

// After a decrease the rate climbs back by ceil(40 / 20) = 2 per step: with
// a hold running, to three quarters of the rate that brought the decrease
// (30) and no further, however many steps pass; without one, to the
// configured 40, never above. Each rate read is one the claims use (the
// same Lua), and it never goes down while nothing lowers it.
func TestLearnedRateClimbsBackToTheCeiling(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		hold time.Duration
		want int
	}{
		{"held below the rate that hit the limit", time.Hour, 30},
		{"hold over: up to the configured rate", time.Millisecond, 40},
	}
	for _, tc := range cases {
		for _, b := range learnBudgets(lanes.LearnConfig{Every: 20 * time.Millisecond, Hold: tc.hold}) {
			t.Run(tc.name+", "+b.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newStore(t, b.opts...)
				_, rate, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
				require.NoError(t, err)
				require.Equal(t, 20, rate)
				last := 20
				require.Eventually(t, func() bool {
					got := learnedOf(t, s, b.queue)
					require.GreaterOrEqual(t, got.Rate, last, "never down while nothing lowers it")
					require.Zero(t, (got.Rate-20)%2, "steps of 2")
					last = got.Rate
					return got.Rate == tc.want
				}, 10*time.Second, 5*time.Millisecond)
				// Ten more steps: still there (the ceiling, or the hold's cap).
				waitServerPast(t, s, learnedOf(t, s, b.queue).Lowered.Add(20*20*time.Millisecond+200*time.Millisecond))
				require.Equal(t, tc.want, learnedOf(t, s, b.queue).Rate)
				m := lanes.NewMinter()
				for g := range 50 {
					enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
				}
				require.Equal(t, tc.want, claimAll(t, s), "what the claims use")
			})
		}
	}
}

// A store with no budget has nothing to learn: LowerBudget changes nothing
// and Learned lists nothing.
func TestLowerBudgetWithoutABudgetChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	lowered, rate, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.False(t, lowered)
	require.Zero(t, rate)
	ls, err := s.Inspector().Learned(ctx)
	require.NoError(t, err)
	require.Empty(t, ls)
	require.Empty(t, tagKeys(t, s), "nothing written")
	_, _, err = s.Inspector().LowerBudget(ctx, "bad queue", "x")
	require.ErrorIs(t, err, lanes.ErrInvalid)
}

// probeStore is a store whose global rate of 40 per minute (a window no
// test outlives: claims are bounded by the rate alone) is probed from 10,
// with the given probe period and hold.
func probeStore(t *testing.T, probe, hold time.Duration, extra ...lanes.Option) (*lanes.Store, []lanes.Option) {
	t.Helper()
	opts := append([]lanes.Option{lanes.WithGlobalRate(40, time.Minute), lanes.WithGlobalRateStart(10),
		lanes.WithLearning(lanes.LearnConfig{Every: time.Hour, Probe: probe, Hold: hold, Cooldown: time.Hour})}, extra...)
	return newStore(t, opts...), opts
}

// globalOf returns the learned state of s's global budget.
func globalOf(t *testing.T, s *lanes.Store) lanes.LearnedBudget {
	t.Helper()
	ls, err := s.Inspector().Learned(context.Background())
	require.NoError(t, err)
	require.NotEmpty(t, ls)
	require.Equal(t, "", ls[0].Queue)
	return ls[0]
}

// probeOnce waits one probe period past the global budget's last change on
// the server clock, then claims until a claim hands out nothing: it returns
// how many it got and the learned global budget after.
func probeOnce(t *testing.T, s *lanes.Store, probe time.Duration) (int, lanes.LearnedBudget) {
	t.Helper()
	ls, b := probeLeases(t, s, probe)
	return len(ls), b
}

// probeLeases is probeOnce returning the leases claimed.
func probeLeases(t *testing.T, s *lanes.Store, probe time.Duration) ([]lanes.Lease, lanes.LearnedBudget) {
	t.Helper()
	now, err := s.ServerTime(context.Background())
	require.NoError(t, err)
	waitServerPast(t, s, now.Add(probe))
	ls := claimLeases(t, s)
	return ls, globalOf(t, s)
}

// A probed global rate claims at its start, and goes up only when a claim
// finds it spent while lanes wait, at once the first time, then at most
// once per probe period, by a step that doubles (10, 11, 13, 17, 25, then
// the ceiling 40). Every claimer (another process included) claims at the
// raised rate, and with no lane waiting a spent budget is not raised.
func TestAProbedGlobalRateStartsAtItsStartAndRisesOnlyWhileLanesWait(t *testing.T) {
	t.Parallel()
	const probe = 500 * time.Millisecond
	s, opts := probeStore(t, probe, time.Hour)
	m := lanes.NewMinter()
	for g := range 60 {
		enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
	}
	b := learnedOf(t, s, "")
	require.Equal(t, lanes.LearnedBudget{Configured: 40, Window: time.Minute, Rate: 10, Cap: 40, Start: 10}, b, "nothing learned: the start")
	require.Equal(t, 11, claimAll(t, s), "claims at the start, raised by 1 when first spent")
	require.Equal(t, 11, learnedOf(t, s, "").Rate, "one raise per probe period")
	other := sibling(t, s, opts...)
	total := 11
	for _, want := range []int{13, 17, 25, 40} {
		n, b := probeOnce(t, other, probe)
		total += n
		require.Equal(t, want, b.Rate, "one raise per probe period, the step doubling")
		require.Equal(t, want, total, "every claimer claims at the raised rate")
		require.Zero(t, b.Decreases)
	}
	n, b := probeOnce(t, s, probe)
	require.Zero(t, n, "at the ceiling")
	require.Equal(t, 40, b.Rate)

	// No lane waiting: spent, but no demand above the budget.
	idle, _ := probeStore(t, probe, time.Hour)
	for g := range 10 {
		enqueueN(t, idle, m, "q", "i"+strconv.Itoa(g), 1)
	}
	require.Equal(t, 10, claimAll(t, idle))
	for range 3 {
		n, b := probeOnce(t, idle, probe)
		require.Equal(t, 10, b.Rate, "no raise without lanes waiting")
		require.Zero(t, n)
	}
}

// A 429 to a send claimed while the probed rate ran at a raise takes it
// back to the rate before that raise, at once, even when later raises came
// before the answer (11 then 13: a send claimed at 11 takes it back to 10),
// and it stays there for the hold (no raise while lanes wait), doubled for
// a second failed probe in a row; LowerBudget within the cooldown of it
// changes nothing (the probe explains the 429s). A send claimed at no raise
// (at the start), one claimed at a raise already taken back, a queue
// outside the global rate, or a store not probed change nothing.
func TestRevertProbeTakesTheRateBackToBeforeTheRaiseTheSendWasClaimedAt(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const probe, hold = 300 * time.Millisecond, 1500 * time.Millisecond
	s, _ := probeStore(t, probe, hold, lanes.WithQueue("paid", lanes.QueueConfig{Rate: 100, Window: time.Minute, OutsideGlobal: true}))
	m := lanes.NewMinter()
	for g := range 60 {
		enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
	}
	enqueueN(t, s, m, "paid", "p", 1)
	paidLease := claimOne(t, s, time.Minute, "paid")
	first := claimLeases(t, s)
	require.Len(t, first, 11, "10 at the start, 1 at the first raise")
	atStart, atRaise := first[0], first[10]
	later, b := probeLeases(t, s, probe)
	require.Equal(t, 13, b.Rate)
	require.Len(t, later, 2)

	no, rate, err := s.RevertProbe(ctx, atStart, "429 while probing")
	require.NoError(t, err)
	require.False(t, no, "claimed at the start: no raise to take back")
	require.Equal(t, 13, rate)
	t0 := serverNowMS(t, s)
	reverted, rate, err := s.RevertProbe(ctx, atRaise, "429 while probing")
	require.NoError(t, err)
	require.True(t, reverted)
	require.Equal(t, 10, rate, "back to before the raise the send was claimed at, 13 came after it")
	b = globalOf(t, s)
	require.Equal(t, 10, b.Rate)
	require.Equal(t, 11, b.Hit, "the raise that was answered")
	require.Equal(t, 10, b.Cap, "held there")
	require.Equal(t, "429 while probing", b.Why)
	require.Equal(t, int64(1), b.Decreases)
	require.GreaterOrEqual(t, b.Lowered.UnixMilli(), t0)
	require.Equal(t, hold, b.HoldUntil.Sub(b.Lowered))

	again, rate, err := s.RevertProbe(ctx, later[0], "429 while probing")
	require.NoError(t, err)
	require.False(t, again, "claimed at 13, already taken back below it")
	require.Equal(t, 10, rate)
	lowered, _, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.False(t, lowered, "within the cooldown of the revert")
	paid, rate, err := s.RevertProbe(ctx, paidLease.Lease, "429 while probing")
	require.NoError(t, err)
	require.False(t, paid)
	require.Zero(t, rate, "a queue outside the global rate")

	_, b = probeOnce(t, s, probe)
	require.Equal(t, 10, b.Rate, "no raise while the hold runs")
	waitServerPast(t, s, b.HoldUntil)
	_, b = probeOnce(t, s, probe)
	require.Equal(t, 11, b.Rate, "after the hold the probe starts again from a step of 1")
	// (The minute's window still holds 13 sends: none claimed at 11. A
	// job with no claim time is judged at now, at the raise to 11.)
	pending := enqueueN(t, s, m, "q", "late", 1)[0]
	reverted, rate, err = s.RevertProbe(ctx, lanes.Lease{Queue: "q", ID: pending, Token: "1"}, "429 while probing")
	require.NoError(t, err)
	require.True(t, reverted)
	require.Equal(t, 10, rate)
	b = globalOf(t, s)
	require.Equal(t, 2*hold, b.HoldUntil.Sub(b.Lowered), "a second failed probe in a row holds twice as long")

	plain := newStore(t, lanes.WithGlobalRate(40, time.Minute))
	enqueueN(t, plain, m, "q", "x", 1)
	no, rate, err = plain.RevertProbe(ctx, claimOne(t, plain, time.Minute, "q").Lease, "429 while probing")
	require.NoError(t, err)
	require.False(t, no)
	require.Zero(t, rate, "not probed")
	_, _, err = s.RevertProbe(ctx, lanes.Lease{Queue: "bad queue"}, "x")
	require.ErrorIs(t, err, lanes.ErrInvalid)
}

// A 429 to a send claimed at a rate a revert went back to takes the
// rate one step further down, to the rate below it among its changes: a
// revert lands on a rate a raise reached, which a 429 there shows does not
// hold either. It never goes below the start this way (10, 11, 13, 17 by
// probes; then 13, 11, 10 by one 429 each; then no lower rate).
func TestRevertProbeTakesARateARevertWentBackToOneStepLower(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const probe, hold = 300 * time.Millisecond, time.Hour
	// Proof epochs of a day: none ends during the test, so no window's
	// sends become a proof that forgives a 429 (busy CI: with the 10-s
	// default an epoch ended mid-test, proved 11, and 429 number 3 was
	// forgiven instead of taking 11 back to 10).
	s := newStore(t, lanes.WithGlobalRate(40, time.Minute), lanes.WithGlobalRateStart(10),
		lanes.WithLearning(lanes.LearnConfig{Every: time.Hour, Probe: probe, Hold: hold, Cooldown: time.Hour, Epoch: 24 * time.Hour}))
	m := lanes.NewMinter()
	for g := range 60 {
		enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
	}
	require.Len(t, claimLeases(t, s), 11, "10 at the start, 1 at the first raise")
	_, b := probeOnce(t, s, probe)
	require.Equal(t, 13, b.Rate)
	_, b = probeOnce(t, s, probe)
	require.Equal(t, 17, b.Rate)

	// Each 429 is to a send judged at now (a job with no claim time): at
	// 17 a raise, then at the rate each revert left.
	for i, want := range []struct {
		reverted bool
		rate     int
	}{{true, 13}, {true, 11}, {true, 10}, {false, 10}} {
		pending := enqueueN(t, s, m, "q", "late"+strconv.Itoa(i), 1)[0]
		reverted, rate, err := s.RevertProbe(ctx, lanes.Lease{Queue: "q", ID: pending, Token: "1"}, "429 while probing")
		require.NoError(t, err)
		require.Equal(t, want.reverted, reverted, "429 number %d", i+1)
		require.Equal(t, want.rate, rate, "429 number %d", i+1)
		b = globalOf(t, s)
		require.Equal(t, want.rate, b.Rate)
		require.Equal(t, hold, b.HoldUntil.Sub(b.Lowered), "429 number %d: only a failed probe lengthens the hold", i+1)
	}
}

// A rate no raise reached (a halving's) is not gone below by a 429 there:
// 10, halved to 5, probed 6, 8, 12, 20, halved to 10; a 429 at 10 leaves
// it (the 8 before it was not how 10 was reached).
func TestRevertProbeNeverStepsBelowARateAHalvingSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const probe = 200 * time.Millisecond
	s := newStore(t, lanes.WithGlobalRate(40, time.Minute), lanes.WithGlobalRateStart(10),
		lanes.WithLearning(lanes.LearnConfig{Every: time.Hour, Probe: probe, Hold: time.Millisecond, Cooldown: time.Millisecond}))
	m := lanes.NewMinter()
	for g := range 60 {
		enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
	}
	lowered, rate, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	require.Equal(t, 5, rate)
	for _, want := range []int{6, 8, 12, 20} {
		_, b := probeOnce(t, s, probe)
		require.Equal(t, want, b.Rate)
	}
	waitServerPast(t, s, time.Now().Add(5*time.Millisecond))
	lowered, rate, err = s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	require.Equal(t, 10, rate)
	pending := enqueueN(t, s, m, "q", "late", 1)[0]
	reverted, rate, err := s.RevertProbe(ctx, lanes.Lease{Queue: "q", ID: pending, Token: "1"}, "429 while probing")
	require.NoError(t, err)
	require.False(t, reverted, "10 was set by a halving, not reached by a raise")
	require.Equal(t, 10, rate)
}

// LowerBudget halves every budget that holds the queue's sends, its own
// and the global one (a probed one stays probed: back from the halved
// rate by probes), and returns the lowest; a queue outside the global
// rate lowers only its own.
func TestLowerBudgetHalvesEveryBudgetThatHoldsTheQueue(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := probeStore(t, time.Hour, time.Hour,
		lanes.WithQueue("q", lanes.QueueConfig{Rate: 30, Window: time.Minute}),
		lanes.WithQueue("paid", lanes.QueueConfig{Rate: 100, Window: time.Minute, OutsideGlobal: true}))
	lowered, rate, err := s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	require.Equal(t, 5, rate, "the global rate, at its start 10, halved")
	ls, err := s.Inspector().Learned(ctx)
	require.NoError(t, err)
	require.Len(t, ls, 3)
	require.Equal(t, "", ls[0].Queue)
	require.Equal(t, 5, ls[0].Rate)
	require.Equal(t, 10, ls[0].Hit)
	require.Equal(t, 10, ls[0].Start, "still probed")
	require.Equal(t, "paid", ls[1].Queue)
	require.Equal(t, 100, ls[1].Rate, "not lowered")
	require.Equal(t, "q", ls[2].Queue)
	require.Equal(t, 15, ls[2].Rate, "its own halved")

	lowered, rate, err = s.Inspector().LowerBudget(ctx, "paid", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	require.Equal(t, 50, rate)
	ls, err = s.Inspector().Learned(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, ls[0].Rate, "the global rate does not hold paid's sends")
}

// epochEnd is when the proof epoch holding server time now (ms) ends.
func epochEnd(now int64, ep time.Duration) time.Time {
	e := ep.Milliseconds()
	return time.UnixMilli((now/e + 1) * e)
}

// A binding burst is weighed against the budget's proof: the most sends a
// window of it held in an epoch that ended with no burst. A budget of 40
// per minute whose window held 40 in a clean epoch keeps its rate through
// one burst (forgiven, the proof spent), and a second burst before another
// clean epoch halves it; a proof of 30 is the most a burst takes it down
// to; an epoch with a burst in it (even one that did not bind) proves
// nothing; an operator's decrease ignores the proof; a proof the budget
// has not renewed for six epochs is dropped. Each step's sends are claimed
// at the start of an epoch (2 s, so a busy host's claims stay in it; 200
// ms for the stale proof, whose claims may straddle two epochs).
func TestABurstIsWeighedAgainstTheRateACleanEpochProved(t *testing.T) {
	t.Parallel()
	const cooldown = 300 * time.Millisecond
	type want struct {
		lowered  bool
		rate     int
		forgiven int64
	}
	cases := []struct {
		name      string
		proved    int  // claimed in the first epoch (noted by the claims)
		burstAt   int  // > 0: a burst (not binding) after this many of them
		stale     bool // the budget idles six epochs after them
		then      int  // claimed in the epoch of the burst
		inspector bool
		proven    int   // the proof before the burst
		first     want  // the burst
		second    *want // a second one after the cooldown
	}{
		{name: "a clean epoch at the rate forgives one burst", proved: 40, proven: 40,
			first: want{false, 40, 1}, second: &want{true, 20, 1}},
		{name: "a proof below the rate is the most it goes down to", proved: 30, then: 10, proven: 30,
			first: want{true, 30, 0}},
		{name: "no clean epoch yet: halved", then: 40,
			first: want{true, 20, 0}},
		{name: "an epoch with a burst proves nothing", proved: 40, burstAt: 10,
			first: want{true, 20, 0}},
		{name: "an operator's decrease ignores the proof", proved: 40, proven: 40, inspector: true,
			first: want{true, 20, 0}},
		{name: "a proof not renewed for six epochs is dropped", proved: 40, stale: true,
			first: want{true, 20, 0}},
	}
	for bi := range learnBudgets(lanes.LearnConfig{}) {
		for _, tc := range cases {
			ep := 2 * time.Second
			if tc.stale {
				ep = 200 * time.Millisecond
			}
			b := learnBudgets(lanes.LearnConfig{Every: time.Hour, Cooldown: cooldown, Epoch: ep})[bi]
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newStore(t, b.opts...)
				m := lanes.NewMinter()
				for g := range tc.proved + tc.then {
					enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
				}
				lower := s.LowerBudget
				if tc.inspector {
					lower = s.Inspector().LowerBudget
				}
				// At the start of an epoch: the claims stay in it.
				waitServerPast(t, s, epochEnd(serverNowMS(t, s), ep))
				for i := range tc.proved {
					if tc.burstAt > 0 && i == tc.burstAt {
						lowered, _, err := s.LowerBudget(ctx, "q", "429 from several chats")
						require.NoError(t, err)
						require.False(t, lowered, "%d of 40 in flight do not bind", i)
					}
					claimOne(t, s, time.Minute, "q")
				}
				last := serverNowMS(t, s)
				if tc.stale {
					last += 6 * ep.Milliseconds()
				}
				waitServerPast(t, s, epochEnd(last, ep))
				for range tc.then {
					claimOne(t, s, time.Minute, "q")
				}
				require.Equal(t, tc.proven, learnedOf(t, s, b.queue).Proven, "the proof before the burst")
				lowered, rate, err := lower(ctx, "q", "429 from several chats")
				require.NoError(t, err)
				got := learnedOf(t, s, b.queue)
				require.Equal(t, tc.first, want{lowered, rate, got.Forgiven}, "the burst")
				require.Zero(t, got.Proven, "the burst spent the proof")
				if tc.second == nil {
					return
				}
				waitServerPast(t, s, time.UnixMilli(serverNowMS(t, s)).Add(cooldown))
				lowered, rate, err = s.LowerBudget(ctx, "q", "429 from several chats")
				require.NoError(t, err)
				require.Equal(t, *tc.second, want{lowered, rate, learnedOf(t, s, b.queue).Forgiven}, "the second burst")
			})
		}
	}
}

// A 429 to a send claimed at a raise the budget's proof covers takes
// nothing back (RevertProbe): the probed total, started at 10, raised to
// 11 by a claim that found it spent, ran 11 sends in a window through a
// clean epoch (its proof 11); a 429 to the send claimed at the raise is
// forgiven, and so is the rest of its burst within the cooldown (the proof
// it spent); one after the cooldown, with no clean epoch since, takes the
// raise back to 10. With no clean epoch before the 429 (the epoch of the
// claims), the raise is taken back at once.
func TestARaiseAProofCoversIsNotTakenBackByA429(t *testing.T) {
	t.Parallel()
	const ep, cooldown = 2 * time.Second, 500 * time.Millisecond
	for _, tc := range []struct {
		name  string
		clean bool // a clean epoch ends between the claims and the 429
	}{
		{name: "after a clean epoch", clean: true},
		{name: "in the epoch of the claims"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithGlobalRate(40, time.Minute), lanes.WithGlobalRateStart(10),
				lanes.WithLearning(lanes.LearnConfig{Every: time.Hour, Probe: time.Hour, Hold: time.Hour, Cooldown: cooldown, Epoch: ep}))
			m := lanes.NewMinter()
			for g := range 20 {
				enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
			}
			waitServerPast(t, s, epochEnd(serverNowMS(t, s), ep))
			leases := claimLeases(t, s)
			require.Len(t, leases, 11, "10 at the start, 1 at the raise")
			raised := leases[10]
			if !tc.clean {
				reverted, rate, err := s.RevertProbe(ctx, raised, "429 while probing")
				require.NoError(t, err)
				require.True(t, reverted, "no proof yet")
				require.Equal(t, 10, rate)
				require.Zero(t, globalOf(t, s).Forgiven)
				return
			}
			waitServerPast(t, s, epochEnd(serverNowMS(t, s), ep))
			require.Equal(t, 11, globalOf(t, s).Proven)
			for i := range 2 {
				reverted, rate, err := s.RevertProbe(ctx, raised, "429 while probing")
				require.NoError(t, err)
				require.False(t, reverted, "429 %d of the burst: the raise held a clean epoch", i)
				require.Equal(t, 11, rate)
				require.Equal(t, int64(i+1), globalOf(t, s).Forgiven)
			}
			waitServerPast(t, s, time.UnixMilli(serverNowMS(t, s)).Add(cooldown))
			reverted, rate, err := s.RevertProbe(ctx, raised, "429 while probing")
			require.NoError(t, err)
			require.True(t, reverted, "a 429 after the burst, the proof spent")
			require.Equal(t, 10, rate)
		})
	}
}

// A binding burst at a budget's floor lowers nothing and releases the hold
// that keeps it there (LearnedBudget.Released, its cap back to the
// configured rate): a burst at the floor shows no limit, so the decreases
// that brought it there showed none either. Two operator decreases take a
// budget of 40 per minute (a probed one: started at 40 of 80) to its floor
// 10 under a hold capped at max(10, ¾ × 20) = 15; then a burst answers the
// floor's 10 sends in the window. A burst that does not bind (no sends),
// an operator's decrease, or one after the hold ended release nothing.
func TestABindingBurstAtTheFloorReleasesTheHold(t *testing.T) {
	t.Parallel()
	const cooldown = 50 * time.Millisecond
	cases := []struct {
		name        string
		sends       bool // the floor's sends claimed before the burst
		inspector   bool // the burst is an operator's decrease
		holdEnded   bool
		wantRelease bool
	}{
		{name: "a binding burst releases the hold", sends: true, wantRelease: true},
		{name: "a burst that does not bind keeps it"},
		{name: "an operator's decrease keeps it", sends: true, inspector: true},
		{name: "no hold running: nothing to release", sends: true, holdEnded: true},
	}
	for _, tc := range cases {
		hold := time.Hour
		if tc.holdEnded {
			hold = 300 * time.Millisecond
		}
		lc := lanes.LearnConfig{Every: time.Hour, Probe: time.Hour, Hold: hold, Cooldown: cooldown}
		budgets := append(learnBudgets(lc), learnBudget{name: "probed global rate", opts: []lanes.Option{
			lanes.WithGlobalRate(80, time.Minute), lanes.WithGlobalRateStart(40), lanes.WithLearning(lc)}})
		for _, b := range budgets {
			t.Run(b.name+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := context.Background()
				s := newStore(t, b.opts...)
				for _, want := range []int{20, 10} {
					if l := learnedOf(t, s, b.queue).Lowered; !l.IsZero() {
						waitServerPast(t, s, l.Add(cooldown))
					}
					lowered, rate, err := s.Inspector().LowerBudget(ctx, "q", "operator")
					require.NoError(t, err)
					require.True(t, lowered)
					require.Equal(t, want, rate)
				}
				before := learnedOf(t, s, b.queue)
				require.Equal(t, 15, before.Cap, "the hold's cap: max(10, ¾ × 20)")
				if tc.holdEnded {
					waitServerPast(t, s, before.HoldUntil)
				} else {
					waitServerPast(t, s, before.Lowered.Add(cooldown))
				}
				if tc.sends {
					m := lanes.NewMinter()
					for g := range 12 {
						enqueueN(t, s, m, "q", "g"+strconv.Itoa(g), 1)
					}
					require.Equal(t, 10, claimAll(t, s), "the floor's sends")
				}
				var o lanes.Lowering
				var err error
				if tc.inspector {
					o.Lowered, o.Rate, err = s.Inspector().LowerBudget(ctx, "q", "429 from several chats")
				} else {
					o, err = s.LowerBudgetOutcome(ctx, "q", "429 from several chats")
				}
				require.NoError(t, err)
				require.Equal(t, lanes.Lowering{Rate: 10, Released: tc.wantRelease}, o, "nothing goes below the floor")
				got := learnedOf(t, s, b.queue)
				require.Equal(t, int64(2), got.Decreases, "no decrease counted")
				require.Equal(t, 10, got.Rate)
				if !tc.wantRelease {
					require.Zero(t, got.Released)
					if !tc.holdEnded {
						require.Equal(t, 15, got.Cap, "the hold runs on")
					}
					return
				}
				require.Equal(t, int64(1), got.Released)
				require.Equal(t, got.Configured, got.Cap, "no cap left: it climbs to the configured rate")
				require.False(t, got.HoldUntil.After(time.UnixMilli(serverNowMS(t, s))), "the hold ended")
			})
		}
	}
}
