package lanes_test

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
)

// A private chat's lane with 20 jobs, paced at 5/s, is
// served at 5/s by server time (no 1 s window holds more than 5 of its
// jobs; first to last at least 3 s), while 10 other lanes with work are
// served in between: their jobs are claimed while the paced lane waits,
// parked (out of the ring) until its next pace token, no longer: each park
// the store records ends one window after the oldest of the lane's last 5
// jobs was acked (before the next of them was claimed), and the lane's next
// job is claimed no earlier. (How soon after the park a claimer comes is the
// host's: the claims' spacing is not asserted; it asserted first to last
// under 4 s until issue 32.)
func TestLanePaceServesOtherLanesMeanwhile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// Groups (negative chat ids) at 10/s, so the 10 other lanes last ~4 s;
	// the private chat (lane "420") gets its own pace of 5/s.
	s := newStore(t, lanes.WithLanePace(lanes.Pace{}, lanes.PaceRule{Prefix: "-", Pace: lanes.Pace{Limit: 10, Period: time.Second}}))
	m := lanes.NewMinter()
	fillLanes(t, s, m, "q", "-100", 10, 40)
	fillLanes(t, s, m, "q", "42", 1, 20) // lane "420"
	const paced = "420"
	require.NoError(t, s.Inspector().SetLanePace(ctx, paced, lanes.Pace{Limit: 5, Period: time.Second}))

	// The claimer records the paced lane's park right after settling each
	// of its jobs, before it claims again (a claim after the due time
	// unparks the lane).
	type park struct {
		due    int64 // ms; 0: not parked
		inRing bool
		err    error
	}
	parks := make(chan park, 20)
	w := startClaimLoop(t, s, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1}, func(j lanes.Job) error {
		if err := s.Ack(ctx, j.Lease); err != nil || j.Group != paced {
			return err
		}
		var p park
		if r := rdo(t, s, "ZSCORE", s.Keys().Queue("q", "parked"), paced); !valkey.IsValkeyNil(r.Error()) {
			var score string
			if score, p.err = r.ToString(); p.err == nil {
				p.due, p.err = strconv.ParseInt(score, 10, 64)
			}
		}
		if p.err == nil {
			var ring []string
			ring, p.err = rdo(t, s, "LRANGE", s.Keys().Ring("q"), "0", "-1").AsStrSlice()
			p.inRing = slices.Contains(ring, paced)
		}
		parks <- p
		return nil
	})
	const lease = time.Minute
	var pacedAt, othersAt []int64
	var parkedAfter []int // indexes into pacedAt of the jobs after which the lane was parked
	var dues []int64      // until when (ms)
	deadline := time.After(10 * time.Second)
	for len(pacedAt) < 20 {
		var j lanes.Job
		select {
		case j = <-w.Jobs:
		case <-deadline:
			t.Fatalf("paced lane got %d of 20 jobs in 10 s", len(pacedAt))
		}
		at := claimedAt(j, lease)
		if j.Group != paced {
			othersAt = append(othersAt, at)
			continue
		}
		pacedAt = append(pacedAt, at)
		i := len(pacedAt) - 1
		p := <-parks
		require.NoError(t, p.err)
		if p.due == 0 {
			continue
		}
		// Its budget is spent: it left the ring and is parked until its
		// oldest pace entry leaves the 1 s window. Entries count from the
		// claim until one window after the ack, so the park ends one window
		// after the ack of job i-4 (the oldest of the 5 in the window): no
		// earlier than its claim + 1 s, and no later than job i-3's claim +
		// 1 s (the claimer acks a job before it claims the next).
		parkedAfter, dues = append(parkedAfter, i), append(dues, p.due)
		require.GreaterOrEqual(t, i, 4, "parked after %d jobs: a budget of 5", i+1)
		require.GreaterOrEqual(t, p.due, pacedAt[i-4]+1000, "park after job %d", i)
		require.LessOrEqual(t, p.due, pacedAt[i-3]+1000, "park after job %d", i)
		require.False(t, p.inRing, "a parked lane is out of the ring (after job %d)", i)
	}
	span := pacedAt[19] - pacedAt[0]
	t.Logf("paced lane: 20 jobs in %d ms (server time), busiest 1 s window %d; parked after jobs %v; %d jobs of other lanes meanwhile; %d claims",
		span, maxInWindow(pacedAt, 1000), parkedAfter, len(othersAt), w.Claims.Load())
	require.LessOrEqual(t, maxInWindow(pacedAt, 1000), 5)
	require.GreaterOrEqual(t, span, int64(3000))
	require.Contains(t, parkedAfter, 4, "parked once its first 5 jobs were claimed")
	for k, i := range parkedAfter { // the store holds the lane until the park's end
		if i+1 < len(pacedAt) {
			require.GreaterOrEqual(t, pacedAt[i+1], dues[k], "job %d claimed before the park after job %d ended", i+1, i)
		}
	}
	// While the paced lane waited for its next tokens, other lanes were served.
	for k := 1; k < 4; k++ {
		from, to := pacedAt[5*k-1], pacedAt[5*k]
		n := 0
		for _, at := range othersAt {
			if at > from && at < to {
				n++
			}
		}
		require.Positive(t, n, "no other lane served between paced jobs %d and %d (%d..%d ms)", 5*k, 5*k+1, from, to)
	}
}

// Pace precedence: a per-lane override (SetLanePace) wins over the prefix
// rules, the first matching rule wins over the default, and the default
// applies to the rest. Each lane gets exactly its budget within one window,
// then Claim reports RetryIn until the earliest budget refills.
func TestLanePaceOverrideBeatsRulesBeatDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithLanePace(lanes.Pace{Limit: 2, Period: time.Minute},
		lanes.PaceRule{Prefix: "-100", Pace: lanes.Pace{Limit: 3, Period: time.Minute}},
		lanes.PaceRule{Prefix: "-", Pace: lanes.Pace{Limit: 1, Period: time.Minute}},
	))
	m := lanes.NewMinter()
	for _, g := range []string{"5", "7", "-1005", "-5"} {
		fillLanes(t, s, m, "q", g, 1, 6) // lanes "50", "70", "-10050", "-50"
	}
	require.NoError(t, s.Inspector().SetLanePace(ctx, "70", lanes.Pace{Limit: 4, Period: time.Minute}))
	got := map[string]int{}
	for {
		c := claim(t, s, 1, time.Minute, "q")
		if len(c.Jobs) == 0 {
			require.Greater(t, c.RetryIn, 59*time.Second, "RetryIn is the earliest budget refill, a minute away")
			break
		}
		got[c.Jobs[0].Group]++
	}
	require.Equal(t, map[string]int{"50": 2, "70": 4, "-10050": 3, "-50": 1}, got)
	st, err := s.Inspector().Stats(ctx, "q", 10)
	require.NoError(t, err)
	require.Equal(t, 4, st.Parked, "every lane with work left is parked until its pace refills")
	require.Equal(t, 0, st.Ring)
	require.Equal(t, 24-10, st.Pending)
}

// A paced lane of weight w whose pace runs out mid-turn keeps the rest of
// its turn: when its pace allows again it rejoins the ring's head and is
// served before the unpaced lanes that kept the ring busy meanwhile, so a
// weight raises a paced lane's share too, never beyond its pace. Once its
// turn is over it rejoins at the tail, behind them.
func TestPacedLaneKeepsTheRestOfItsTurn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const period = 200 * time.Millisecond
	s := newStore(t, lanes.WithLanePace(lanes.Pace{}, lanes.PaceRule{Prefix: "p", Pace: lanes.Pace{Limit: 1, Period: period}}))
	m := lanes.NewMinter()
	require.NoError(t, s.Inspector().SetWeight(ctx, "pA", 3))
	enqueueN(t, s, m, "q", "pA", 12)
	enqueueN(t, s, m, "q", "B", 50)
	enqueueN(t, s, m, "q", "C", 50)
	var settled time.Time // server time just after pA's last ack
	next := func() string {
		c := claim(t, s, 10, time.Minute, "q")
		require.NotEmpty(t, c.Jobs)
		for _, j := range c.Jobs {
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
		if c.Jobs[0].Group == "pA" {
			now, err := s.ServerTime(ctx)
			require.NoError(t, err)
			settled = now
		}
		return c.Jobs[0].Group + ":" + strconv.Itoa(len(c.Jobs))
	}
	// paceOver waits until pA's pace park is over on the server clock and
	// its last send has left the pace window (a send counts until one period
	// after it settles, which may be a little after the park, set at the
	// claim, ends); the next claim then unparks it.
	paceOver := func() {
		sc := parkedScore(t, s, "q", "pA")
		require.NotEmpty(t, sc, "pA is parked for its pace")
		due, err := strconv.ParseInt(sc, 10, 64)
		require.NoError(t, err)
		waitServerPast(t, s, time.UnixMilli(due))
		waitServerPast(t, s, settled.Add(period))
	}
	require.Equal(t, "pA:1", next(), "its pace allows one job at a time")
	for turn := range 2 {
		for job := 2; job <= 3; job++ {
			require.Equal(t, "B:1", next())
			require.Equal(t, "C:1", next())
			paceOver()
			require.Equal(t, "pA:1", next(), "turn %d job %d: back from its pace park, it takes the rest of its turn first", turn, job)
		}
		// Its turn is over: back at the ring's tail, behind B and C.
		paceOver()
		got := []string{next(), next()}
		require.ElementsMatch(t, []string{"B:1", "C:1"}, got, "turn %d: a finished turn rejoins at the tail", turn)
		require.Equal(t, "pA:1", next(), "turn %d: then its next turn", turn)
	}
}

// A store WithoutSendLimits on the tag of a paced store is not paced by a
// lane's pace override nor stopped by the global pause, which are kept per
// tag: its claims are not sends.
func TestStoreWithoutSendLimitsIgnoresPaceOverridesAndThePause(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	paced := newStore(t)
	free := sibling(t, paced, lanes.WithoutSendLimits())
	m := lanes.NewMinter()
	fillLanes(t, free, m, "u", "-7", 1, 10) // lane "-70", 10 jobs
	require.NoError(t, paced.Inspector().SetLanePace(ctx, "-70", lanes.Pace{Limit: 1, Period: time.Hour}))
	require.NoError(t, paced.Inspector().Pause(ctx, time.Hour))
	for i := range 10 {
		c, err := free.Claim(ctx, lanes.ClaimRequest{Queues: []string{"u"}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1, "claim %d: neither the override nor the pause applies", i)
		require.NoError(t, free.Ack(ctx, c.Jobs[0].Lease))
	}
	fillLanes(t, paced, m, "q", "-7", 1, 2)
	c, err := paced.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c.Jobs, "the paced store is paused")
}

// A lane parked for its pace (its chat's sends on another queue spent it)
// by a claim that goes on to serve another lane is served once its pace
// refills: the claim keeps the park's due time, so its new leases' later
// deadline does not postpone the unpark scan to the lease's end.
func TestPaceParkedLaneIsServedWhenItsPaceRefills(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const period = 200 * time.Millisecond
	s := newStore(t, lanes.WithLanePace(lanes.Pace{Limit: 1, Period: period}))
	m := lanes.NewMinter()
	// Chat a's one send per period goes on queue r.
	_, err := s.Enqueue(ctx, "r", []lanes.Item{{Group: "a", ID: m.New(), Payload: []byte("r")}})
	require.NoError(t, err)
	require.NoError(t, s.Ack(ctx, claimOne(t, s, time.Minute, "r").Lease))
	start, err := s.ServerTime(ctx)
	require.NoError(t, err)

	_, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "a", ID: m.New()}, {Group: "b", ID: m.New()}})
	require.NoError(t, err)
	j := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "b", j.Group, "a is paced out: parked, and b served in the same claim")
	for i := range 5 {
		_, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "c" + strconv.Itoa(i), ID: m.New()}})
		require.NoError(t, err)
	}
	waitServerPast(t, s, start.Add(period+10*time.Millisecond))
	var got []string
	for range 6 {
		for _, j := range claim(t, s, 1, time.Minute, "q").Jobs {
			got = append(got, j.Group)
		}
	}
	require.Contains(t, got, "a", "a's pace refilled: it is served among the next claims (got %v)", got)
}
