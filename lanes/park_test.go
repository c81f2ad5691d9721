package lanes_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// 200 lanes that cannot be served (100 at their glimit
// with a job in flight, 100 parked by Park with a future due time) and one
// ready lane: with one lane visit per claim (WithBudgets(16, 1)), the ready
// lane is claimed by the first claim, because none of the 200 is in the ring.
func TestParkedLanesAreNotScanned(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithBudgets(16, 1))
	m := lanes.NewMinter()
	const lease = time.Minute
	for i := 0; i < 100; i++ {
		require.NoError(t, s.Inspector().SetLaneLimit(ctx, "q", fmt.Sprintf("full%d", i), 1))
	}
	fillLanes(t, s, m, "q", "full", 100, 2)
	for i := 0; i < 100; i++ {
		c := claim(t, s, 1, lease, "q")
		require.Len(t, c.Jobs, 1, "claim %d", i)
		require.Equal(t, fmt.Sprintf("full%d", i), c.Jobs[0].Group)
	}
	for i := 0; i < 100; i++ {
		_, err := s.Inspector().Park(ctx, "q", fmt.Sprintf("parked%d", i), time.Hour)
		require.NoError(t, err)
	}
	fillLanes(t, s, m, "q", "parked", 100, 3)
	require.Empty(t, ring(t, s, "q"), "no lane at its glimit or parked is in the ring")
	res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "ready", ID: m.New(), Payload: []byte("r")}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	require.Equal(t, []string{"ready"}, ring(t, s, "q"))

	c := claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1, "the ready lane must be claimed by the first claim (RetryIn %v)", c.RetryIn)
	require.Equal(t, "ready", c.Jobs[0].Group)
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 100, st.Parked)
	require.Equal(t, 101, st.InFlight)
	require.Equal(t, 100+300, st.Pending)
}

// Park of a lane that is in the ring (it has work and headroom) is lazy: the
// lane stays in the list until a claim reaches it and drops it in O(1); so
// each such lane costs one visit, once. With one visit per claim, 200 lanes
// parked in the ring take 200 claims that each answer RetryIn 0 (try again
// at once, never a sleep) before the ready lane; after that the ring holds
// no parked lane. Parking first and then releasing the 429'd job (the order
// a worker should use) never puts the lane back in the ring at all.
func TestParkedLaneInRingIsDroppedOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithBudgets(16, 1))
	m := lanes.NewMinter()
	fillLanes(t, s, m, "q", "p", 200, 1)
	for i := 0; i < 200; i++ {
		_, err := s.Inspector().Park(ctx, "q", fmt.Sprintf("p%d", i), time.Hour)
		require.NoError(t, err)
	}
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "ready", ID: m.New()}})
	require.NoError(t, err)
	require.Len(t, ring(t, s, "q"), 201)
	calls := 0
	for {
		c := claim(t, s, 1, time.Minute, "q")
		calls++
		if len(c.Jobs) > 0 {
			require.Equal(t, "ready", c.Jobs[0].Group)
			break
		}
		require.Equal(t, time.Duration(0), c.RetryIn, "a claim that only dropped parked lanes says: try again now")
		require.LessOrEqual(t, calls, 201)
	}
	require.Equal(t, 201, calls)
	require.Empty(t, ring(t, s, "q"))

	// A 429 on a lane's only job: Park, then Release: the lane stays out of
	// the ring. Release, then Park: it rejoins and is dropped by a claim.
	for _, order := range []string{"park-release", "release-park"} {
		g := "x-" + order
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: g, ID: m.New()}})
		require.NoError(t, err)
		c := claim(t, s, 1, time.Minute, "q")
		require.Len(t, c.Jobs, 1)
		require.Equal(t, g, c.Jobs[0].Group)
		if order == "park-release" {
			_, err = s.Inspector().Park(ctx, "q", g, time.Hour)
			require.NoError(t, err)
			require.NoError(t, s.Release(ctx, c.Jobs[0].Lease))
			require.Empty(t, ring(t, s, "q"))
		} else {
			require.NoError(t, s.Release(ctx, c.Jobs[0].Lease))
			_, err = s.Inspector().Park(ctx, "q", g, time.Hour)
			require.NoError(t, err)
			require.Equal(t, []string{g}, ring(t, s, "q"))
			c = claim(t, s, 1, time.Minute, "q")
			require.Empty(t, c.Jobs)
			require.Empty(t, ring(t, s, "q"))
		}
	}
}

// A lane parked for 10,072 s (a 429's retry_after, no cap)
// stays parked: its due time in the parked set is server now + 10,072,000 ms
// and Claim's RetryIn says so; other lanes flow meanwhile. A later shorter
// Park never shortens it (and Park reports the park that holds); ResumeLane
// ends it. Pause stops every lane until its time (RetryIn ≈ the pause left),
// a shorter Pause does not shorten it, Resume ends it; an indefinite Pause
// answers RetryIn -1 until Resume.
func TestParkAndPauseHoldUntilDueAndOnlyExtend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	const lease = time.Minute
	const long = 10072 * time.Second
	fillLanes(t, s, m, "q", "x", 1, 3) // lane x0
	fillLanes(t, s, m, "q", "y", 1, 3) // lane y0

	before := serverNowMS(t, s)
	end, err := s.Inspector().Park(ctx, "q", "x0", long)
	after := serverNowMS(t, s)
	require.NoError(t, err)
	require.GreaterOrEqual(t, end.UnixMilli(), before+long.Milliseconds())
	require.LessOrEqual(t, end.UnixMilli(), after+long.Milliseconds())
	require.Equal(t, strconv.FormatInt(end.UnixMilli(), 10), parkedScore(t, s, "q", "x0"))

	for i := 0; i < 3; i++ {
		c := claim(t, s, 1, lease, "q")
		require.Len(t, c.Jobs, 1)
		require.Equal(t, "y0", c.Jobs[0].Group, "only the other lane is served")
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	c := claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs)
	require.InDelta(t, long.Milliseconds(), c.RetryIn.Milliseconds(), 1000, "RetryIn is the park's end")

	// A later, shorter park changes nothing, and Park reports the park in force.
	end2, err := s.Inspector().Park(ctx, "q", "x0", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, end.UnixMilli(), end2.UnixMilli(), "Park returns the park's end, which a shorter park does not move")
	require.Equal(t, strconv.FormatInt(end.UnixMilli(), 10), parkedScore(t, s, "q", "x0"))
	// A longer one extends it.
	end3, err := s.Inspector().Park(ctx, "q", "x0", long+time.Hour)
	require.NoError(t, err)
	require.Greater(t, end3.UnixMilli(), end.UnixMilli()+3599_000)

	// ResumeLane ends the park at once.
	require.NoError(t, s.Inspector().ResumeLane(ctx, "q", "x0"))
	require.Equal(t, "", parkedScore(t, s, "q", "x0"))
	c = claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1)
	require.Equal(t, "x0", c.Jobs[0].Group)
	require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))

	// An indefinite park holds against a later finite one.
	end4, err := s.Inspector().Park(ctx, "q", "x0", -1)
	require.NoError(t, err)
	require.True(t, end4.IsZero())
	end5, err := s.Inspector().Park(ctx, "q", "x0", time.Second)
	require.NoError(t, err)
	require.True(t, end5.IsZero(), "the lane is still parked until resumed, got %v", end5)
	require.Equal(t, "inf", parkedScore(t, s, "q", "x0"))
	c = claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs)
	require.Equal(t, time.Duration(-1), c.RetryIn, "nothing is scheduled: wait for a wake-up")
	require.NoError(t, s.Inspector().ResumeLane(ctx, "q", "x0"))

	// Pause: everything stops until its time.
	// RetryIn is the pause's end (3 s after the Pause, on the server clock
	// between lo and the claim) less the claim's time (before hi): at least
	// lo + 3 s - hi however slow the round trips.
	lo := serverNowMS(t, s)
	require.NoError(t, s.Inspector().Pause(ctx, 3*time.Second))
	c = claim(t, s, 1, lease, "q")
	hi := serverNowMS(t, s)
	require.Empty(t, c.Jobs)
	require.GreaterOrEqual(t, c.RetryIn.Milliseconds(), lo+3000-hi)
	require.LessOrEqual(t, c.RetryIn, 3*time.Second)
	require.NoError(t, s.Inspector().Pause(ctx, 100*time.Millisecond)) // never shortens
	c2 := claim(t, s, 1, lease, "q")
	hi = serverNowMS(t, s)
	require.Empty(t, c2.Jobs)
	require.GreaterOrEqual(t, c2.RetryIn.Milliseconds(), lo+3000-hi)
	require.NoError(t, s.Inspector().Resume(ctx))
	c = claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1, "Resume ends the pause")
	require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))

	// A pause ends by itself: after RetryIn the next claim gets the job.
	require.NoError(t, s.Inspector().Pause(ctx, 150*time.Millisecond))
	c = claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs)
	require.Positive(t, c.RetryIn)
	time.Sleep(c.RetryIn + time.Millisecond)
	c = claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1, "the pause is over after RetryIn")
	require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))

	// An indefinite pause: RetryIn -1 until Resume; a lane park survives it.
	_, err = s.Inspector().Park(ctx, "q", "y0", long)
	require.NoError(t, err)
	fillLanes(t, s, m, "q", "z", 1, 1)
	require.NoError(t, s.Inspector().Pause(ctx, -1))
	require.NoError(t, s.Inspector().Pause(ctx, time.Second)) // does not end an indefinite pause
	c = claim(t, s, 1, lease, "q")
	require.Empty(t, c.Jobs)
	require.Equal(t, time.Duration(-1), c.RetryIn)
	require.NoError(t, s.Inspector().Resume(ctx))
	c = claim(t, s, 1, lease, "q")
	require.Len(t, c.Jobs, 1)
	require.Equal(t, "z0", c.Jobs[0].Group)
	require.NotEqual(t, "", parkedScore(t, s, "q", "y0"), "Resume ends the global pause, not a lane's park")
}

// Paused reads the global pause and its why: nothing before any Pause, the
// time left of a finite one (at most what was asked, by the server's clock)
// with its why, a longer pause's why replacing it and a shorter one's
// leaving it, -1 for an indefinite one, nothing again after Resume; a
// PauseWhy without a why is refused.
func TestPausedReadsThePauseAndItsWhy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	in := newStore(t).Inspector()
	p, err := in.Paused(ctx)
	require.NoError(t, err)
	require.Equal(t, lanes.GlobalPause{}, p, "not paused")

	require.NoError(t, in.PauseWhy(ctx, time.Minute, "401 unauthorized"))
	p, err = in.Paused(ctx)
	require.NoError(t, err)
	require.Positive(t, p.Left)
	require.LessOrEqual(t, p.Left, time.Minute)
	require.Equal(t, "401 unauthorized", p.Why)

	require.NoError(t, in.PauseWhy(ctx, time.Second, "429 from several chats"))
	p, err = in.Paused(ctx)
	require.NoError(t, err)
	require.Greater(t, p.Left, time.Second, "a shorter pause does not shorten it")
	require.Equal(t, "401 unauthorized", p.Why, "nor replace its why")

	require.NoError(t, in.PauseWhy(ctx, time.Hour, "429 from several chats"))
	p, err = in.Paused(ctx)
	require.NoError(t, err)
	require.Greater(t, p.Left, time.Minute)
	require.Equal(t, "429 from several chats", p.Why, "the pause that extends it writes its why")

	require.NoError(t, in.Pause(ctx, -1))
	p, err = in.Paused(ctx)
	require.NoError(t, err)
	require.Equal(t, lanes.GlobalPause{Left: -1, Why: "paused"}, p, "paused until Resume")

	require.NoError(t, in.Resume(ctx))
	p, err = in.Paused(ctx)
	require.NoError(t, err)
	require.Equal(t, lanes.GlobalPause{}, p, "resumed")

	require.ErrorIs(t, in.PauseWhy(ctx, time.Second, ""), lanes.ErrInvalid)
}
