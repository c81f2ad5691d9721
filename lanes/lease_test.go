package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A claimer that crashes holding three jobs of one lane (glimit 3, unordered
// queue) never acks; its leases expire on the server clock. After reclaim,
// whichever way reclaims and new claims interleave, each job comes back
// exactly once, in-flight returns to 0, the lane sits in the ring exactly
// once, and Stats counts each job recovered once (the queue's one lasting
// key besides the weights: its counter).
func TestExpiredLeasesReturnEachJobOnce(t *testing.T) {
	t.Parallel()
	type env struct {
		s   *lanes.Store
		ids []lanes.JobID
	}
	cases := []struct {
		name   string
		opts   []lanes.Option
		extra  int // jobs enqueued after the crash, before the reclaim
		before func(t *testing.T, e env)
	}{
		{name: "reclaim then claim"},
		{name: "enqueue then reclaim", extra: 2},
		{name: "one reclaim per claim", opts: []lanes.Option{lanes.WithBudgets(1, 16)}},
		{
			// Park the lane so the reclaiming claim serves nothing: the
			// state right after reclaim is observable; Resume rejoins it.
			name: "observe after reclaim",
			before: func(t *testing.T, e env) {
				ctx := context.Background()
				_, err := e.s.Inspector().Park(ctx, "q", "L", -1)
				require.NoError(t, err)
				c := claim(t, e.s, 3, time.Minute, "q")
				require.Empty(t, c.Jobs)
				require.Equal(t, 0, inflight(t, e.s, "q", "L"))
				require.Equal(t, 0, rint(t, e.s, "HLEN", e.s.Keys().Queue("q", "inflight")))
				require.Equal(t, 0, rint(t, e.s, "ZCARD", e.s.Keys().Queue("q", "leases")))
				require.Equal(t, strIDs(e.ids), laneIDs(t, e.s, "q", "L"))
				require.Empty(t, ring(t, e.s, "q"), "a parked lane does not rejoin")
				require.NoError(t, e.s.Inspector().ResumeLane(ctx, "q", "L"))
				require.Equal(t, []string{"L"}, ring(t, e.s, "q"))
				require.Equal(t, []string{"L"}, rstrs(t, e.s, "SMEMBERS", e.s.Keys().Queue("q", "inring")))
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			opts := append([]lanes.Option{lanes.WithQueue("q", lanes.QueueConfig{LaneLimit: 3})}, tc.opts...)
			s := newStore(t, opts...)
			m := lanes.NewMinter()
			ids := enqueueN(t, s, m, "q", "L", 3)
			require.NoError(t, s.Inspector().SetWeight(ctx, "L", 3))
			crashed := claim(t, s, 3, time.Minute, "q")
			require.Equal(t, ids, jobIDs(crashed.Jobs))
			require.Equal(t, 3, inflight(t, s, "q", "L"))
			require.Empty(t, ring(t, s, "q"), "a lane at its glimit leaves the ring")
			all := append([]lanes.JobID(nil), ids...)
			if tc.extra > 0 {
				more := enqueueN(t, s, m, "q", "L", tc.extra)
				all = append(all, more...)
				require.Empty(t, ring(t, s, "q"), "still at its glimit")
			}
			st, err := s.Inspector().Stats(ctx, "q", 0)
			require.NoError(t, err)
			require.Zero(t, st.Recovered, "no lease expired yet")
			// The crash: the leases end on the server clock (moved to
			// the past directly rather than waited for).
			expireNow(t, s, "q", ids...)
			if tc.before != nil {
				tc.before(t, env{s: s, ids: ids})
			}

			seen := map[lanes.JobID]int{}
			for {
				c := claim(t, s, 1, time.Minute, "q")
				if len(c.Jobs) == 0 {
					require.Equal(t, time.Duration(-1), c.RetryIn)
					break
				}
				j := c.Jobs[0]
				seen[j.ID]++
				if containsID(ids, j.ID) {
					require.Equal(t, "2", j.Token, "second claim of a crashed job")
					require.Equal(t, 1, j.Attempts)
				} else {
					require.Equal(t, "1", j.Token)
				}
				// Structural invariants at every step.
				k := s.Keys()
				require.Equal(t, rint(t, s, "ZCARD", k.Queue("q", "leases")), inflight(t, s, "q", "L"))
				r := ring(t, s, "q")
				require.LessOrEqual(t, len(r), 1)
				require.Equal(t, len(r), rint(t, s, "SCARD", k.Queue("q", "inring")))
				require.NoError(t, s.Ack(ctx, j.Lease))
			}
			for _, id := range all {
				require.Equal(t, 1, seen[id], "job %s back exactly once", id)
			}
			require.Len(t, seen, len(all))
			require.Equal(t, 0, inflight(t, s, "q", "L"))
			require.Empty(t, ring(t, s, "q"))
			st, err = s.Inspector().Stats(ctx, "q", 0)
			require.NoError(t, err)
			require.Equal(t, int64(len(ids)), st.Recovered, "each crashed job recovered once")
			require.ElementsMatch(t, []string{s.Keys().Shared("weight"), s.Keys().Queue("q", "recovered")}, tagKeys(t, s))
		})
	}
}

// Leases are fenced by their token (the job's claim count).
func TestStaleLeaseTokenChangesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("stale ack after expiry and re-claim", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		id := lanes.NewMinter().New()
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id, Payload: []byte("x")}})
		require.NoError(t, err)
		old := claimOne(t, s, 50*time.Millisecond, "q")
		require.Equal(t, "1", old.Token)
		waitServerPast(t, s, old.Deadline)
		cur := claimOne(t, s, time.Minute, "q")
		require.Equal(t, id, cur.ID)
		require.Equal(t, "2", cur.Token)
		require.Equal(t, 1, cur.Attempts)
		before := dumpKeys(t, s)

		err = s.Ack(ctx, old.Lease)
		require.ErrorIs(t, err, lanes.ErrStaleLease)
		_, err = s.Extend(ctx, old.Lease, time.Hour)
		require.ErrorIs(t, err, lanes.ErrStaleLease)
		require.ErrorIs(t, s.Release(ctx, old.Lease), lanes.ErrStaleLease)
		_, err = s.Nack(ctx, old.Lease, 0, "x")
		require.ErrorIs(t, err, lanes.ErrStaleLease)
		require.ErrorIs(t, s.Dead(ctx, old.Lease, "x"), lanes.ErrStaleLease)
		require.Equal(t, before, dumpKeys(t, s), "stale calls change nothing")
		require.Equal(t, cur.Deadline.UnixMilli(), leaseScore(t, s, "q", id), "the new holder keeps its lease")

		require.NoError(t, s.Ack(ctx, cur.Lease))
		require.ErrorIs(t, s.Ack(ctx, cur.Lease), lanes.ErrNoJob, "acked")
		require.Equal(t, []string{s.Keys().Queue("q", "recovered")}, tagKeys(t, s), "only the recovered leases' counter stays")
	})

	t.Run("token of an unknown value", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: lanes.NewMinter().New()}})
		require.NoError(t, err)
		j := claimOne(t, s, time.Minute, "q")
		forged := j.Lease
		forged.Token = "7"
		require.ErrorIs(t, s.Ack(ctx, forged), lanes.ErrStaleLease)
		require.NoError(t, s.Ack(ctx, j.Lease))
	})

	t.Run("extend keeps a slow job past its first deadline", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		id := lanes.NewMinter().New()
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id}})
		require.NoError(t, err)
		j := claimOne(t, s, 80*time.Millisecond, "q")
		lo := serverNowMS(t, s)
		dl, err := s.Extend(ctx, j.Lease, time.Minute)
		require.NoError(t, err)
		hi := serverNowMS(t, s)
		// The script's TIME lies between the server times read around it.
		require.GreaterOrEqual(t, dl.UnixMilli(), lo+time.Minute.Milliseconds(), "a minute from the extend")
		require.LessOrEqual(t, dl.UnixMilli(), hi+time.Minute.Milliseconds(), "a minute from the extend")
		require.Equal(t, dl.UnixMilli(), leaseScore(t, s, "q", id))
		waitServerPast(t, s, j.Deadline)
		c := claim(t, s, 1, time.Minute, "q")
		require.Empty(t, c.Jobs, "the extended lease is live")
		require.Equal(t, dl.UnixMilli(), leaseScore(t, s, "q", id))
		require.Equal(t, 1, inflight(t, s, "q", "g"))
		require.NoError(t, s.Ack(ctx, j.Lease), "the original token still holds")
		require.Empty(t, tagKeys(t, s))
	})
}

func TestNackAndDeadSettleToRetryOrDeadLetter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("nack unordered waits in the delayed set", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		m := lanes.NewMinter()
		ids := enqueueN(t, s, m, "q", "g", 2)
		j := claimOne(t, s, time.Minute, "q")
		lo := serverNowMS(t, s)
		out, err := s.Nack(ctx, j.Lease, 10*time.Second, "boom")
		require.NoError(t, err)
		hi := serverNowMS(t, s)
		require.Equal(t, lanes.Delayed, out)
		k := s.Keys()
		due := int64(rint(t, s, "ZSCORE", k.Queue("q", "delayed"), string(ids[0])))
		// Due 10 s after the nack's TIME, which lies between lo and hi.
		require.GreaterOrEqual(t, due, lo+10_000, "due on the server clock")
		require.LessOrEqual(t, due, hi+10_000, "due on the server clock")
		require.Equal(t, "1", rstrs(t, s, "HMGET", k.Job("q", ids[0]), "a")[0], "attempts + 1")
		require.Equal(t, "boom", rstrs(t, s, "HMGET", k.Job("q", ids[0]), "r")[0])
		require.Equal(t, 0, inflight(t, s, "q", "g"))
		// The lane keeps flowing: later jobs overtake the retry.
		j2 := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[1], j2.ID)
		require.NoError(t, s.Ack(ctx, j2.Lease))
		c := claim(t, s, 1, time.Minute, "q")
		require.Empty(t, c.Jobs)
		require.Greater(t, c.RetryIn, 9*time.Second)
		// Make it due now (the state its due time reaches on the server clock).
		rescore(t, s, "q", "delayed", string(ids[0]), 1)
		j3 := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j3.ID)
		require.Equal(t, 1, j3.Attempts)
		require.Equal(t, "2", j3.Token)
		require.NoError(t, s.Ack(ctx, j3.Lease))
		require.Empty(t, tagKeys(t, s))
	})

	t.Run("nack ordered parks the lane", func(t *testing.T) {
		t.Parallel()
		s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
		m := lanes.NewMinter()
		ids := enqueueN(t, s, m, "q", "g", 2)
		enqueueN(t, s, m, "q", "h", 1)
		j := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j.ID)
		lo := serverNowMS(t, s)
		out, err := s.Nack(ctx, j.Lease, 10*time.Second, "429")
		require.NoError(t, err)
		hi := serverNowMS(t, s)
		require.Equal(t, lanes.Delayed, out)
		require.Equal(t, strIDs(ids), laneIDs(t, s, "q", "g"), "back at its place")
		k := s.Keys()
		// Parked until 10 s after the nack's TIME, which lies between lo and hi.
		parked := int64(rint(t, s, "ZSCORE", k.Queue("q", "parked"), "g"))
		require.GreaterOrEqual(t, parked, lo+10_000)
		require.LessOrEqual(t, parked, hi+10_000)
		h := claimOne(t, s, time.Minute, "q")
		require.Equal(t, "h", h.Group, "other lanes keep flowing")
		require.NoError(t, s.Ack(ctx, h.Lease))
		c := claim(t, s, 1, time.Minute, "q")
		require.Empty(t, c.Jobs, "nothing of g overtakes the retry")
		rescore(t, s, "q", "parked", "g", 1)
		for i, id := range ids {
			j := claimOne(t, s, time.Minute, "q")
			require.Equal(t, id, j.ID)
			require.Equal(t, 1-i, j.Attempts)
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
		require.Empty(t, tagKeys(t, s))
	})

	t.Run("nack without delay is queued at its place", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ids := enqueueN(t, s, lanes.NewMinter(), "q", "g", 2)
		j := claimOne(t, s, time.Minute, "q")
		out, err := s.Nack(ctx, j.Lease, 0, "flaky")
		require.NoError(t, err)
		require.Equal(t, lanes.Queued, out)
		j = claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j.ID)
		require.Equal(t, 1, j.Attempts)
		require.NoError(t, s.Release(ctx, j.Lease))
		j = claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j.ID)
		require.Equal(t, 1, j.Attempts, "release uses no attempt")
	})

	t.Run("max attempts dead-letters with the reason", func(t *testing.T) {
		t.Parallel()
		s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{MaxAttempts: 2}))
		m := lanes.NewMinter()
		ids := enqueueN(t, s, m, "q", "g", 2)
		j := claimOne(t, s, time.Minute, "q")
		out, err := s.Nack(ctx, j.Lease, 0, "first")
		require.NoError(t, err)
		require.Equal(t, lanes.Queued, out)
		j = claimOne(t, s, time.Minute, "q")
		out, err = s.Nack(ctx, j.Lease, time.Second, "second")
		require.NoError(t, err)
		require.Equal(t, lanes.DeadLettered, out)
		// The other job dies by expired leases.
		for i := 0; i < 2; i++ {
			j = claimOne(t, s, time.Minute, "q")
			require.Equal(t, ids[1], j.ID)
			expireNow(t, s, "q", j.ID)
		}
		c := claim(t, s, 1, time.Minute, "q") // reclaims: attempts 2 = max
		require.Empty(t, c.Jobs)
		dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 10})
		require.NoError(t, err)
		require.Len(t, dl, 2)
		byID := map[lanes.JobID]lanes.DeadLetter{dl[0].ID: dl[0], dl[1].ID: dl[1]}
		require.Equal(t, "second", byID[ids[0]].Reason)
		require.Equal(t, 2, byID[ids[0]].Attempts)
		require.Equal(t, "lease expired", byID[ids[1]].Reason)
		require.Equal(t, 2, byID[ids[1]].Attempts)
		require.Equal(t, "g", byID[ids[1]].Group)
		require.Equal(t, []byte("g#1"), byID[ids[1]].Payload)
		st, err := s.Inspector().Stats(ctx, "q", 0)
		require.NoError(t, err)
		require.Equal(t, lanes.Stats{Dead: 2, Recovered: 2}, st, "both expiries recovered, the second to the dead letters")
		require.Equal(t, 0, inflight(t, s, "q", "g"))
	})

	t.Run("dead, list newest first, requeue, purge", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		ids := enqueueN(t, s, lanes.NewMinter(), "q", "g", 3)
		var at []time.Time
		var deadHi int64 // server ms read after the last Dead
		for i := range ids {
			j := claimOne(t, s, time.Minute, "q")
			require.Equal(t, ids[i], j.ID)
			if i > 0 {
				// Distinct dead-letter times (ms) on the server clock.
				waitServerPast(t, s, at[i-1].Add(time.Millisecond))
			}
			now, err := s.ServerTime(ctx)
			require.NoError(t, err)
			at = append(at, now)
			reason := []string{"blocked", "bad request", "gone"}[i]
			require.NoError(t, s.Dead(ctx, j.Lease, reason))
			deadHi = serverNowMS(t, s)
		}
		dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 10})
		require.NoError(t, err)
		require.Equal(t, []lanes.JobID{ids[2], ids[1], ids[0]}, []lanes.JobID{dl[0].ID, dl[1].ID, dl[2].ID}, "newest first")
		require.Equal(t, "gone", dl[0].Reason)
		require.Equal(t, 1, dl[0].Attempts, "the claim Dead settles is a failed attempt: dead on its first claim reads 1")
		// Dead at its TIME, between the server times read around the call.
		require.GreaterOrEqual(t, dl[0].At.UnixMilli(), at[2].UnixMilli())
		require.LessOrEqual(t, dl[0].At.UnixMilli(), deadHi)
		two, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 2})
		require.NoError(t, err)
		require.Equal(t, dl[:2], two)

		n, err := s.Inspector().RequeueDead(ctx, "q", ids[1], ids[1], lanes.NewMinter().New())
		require.NoError(t, err)
		require.Equal(t, 1, n, "unknown and repeated ids are skipped")
		j := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[1], j.ID)
		require.Equal(t, 0, j.Attempts)
		require.Equal(t, "g#1", string(j.Payload))
		require.NoError(t, s.Ack(ctx, j.Lease))

		n, err = s.Inspector().PurgeDead(ctx, "q", time.Hour, 10)
		require.NoError(t, err)
		require.Equal(t, 0, n, "none older than an hour")
		n, err = s.Inspector().PurgeDead(ctx, "q", 0, 1)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		dl, err = s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 10})
		require.NoError(t, err)
		require.Equal(t, []lanes.JobID{ids[2]}, []lanes.JobID{dl[0].ID}, "oldest purged first")
		n, err = s.Inspector().PurgeDead(ctx, "q", 0, 10)
		require.NoError(t, err)
		require.Equal(t, 1, n)
		require.Empty(t, tagKeys(t, s))
	})
}

// Clock skew. The API takes no client time at all: ClaimRequest.Lease and
// Extend's d are durations, and every deadline is computed inside the
// scripts from the server's TIME. So a claimer whose local clock is 30 s
// ahead or behind has no way to make a live lease look expired: there is no
// input through which its clock could reach the server. The test shows (1)
// the lease deadline is server TIME + lease, (2) a second store on a second
// client cannot claim the job while the lease is live on the server clock,
// whatever the local clock says (we compare against time.Now shifted by
// ±30 s only to document that it plays no part), and (3) it can once the
// lease has expired on the server clock.
// A postponed job (Postpone) comes back after its delay with no attempt
// used, however often it is postponed (a queue of at most 1 attempt never
// dead-letters it); on an ordered queue its lane is parked meanwhile (no
// later job of it overtakes, other lanes flow), on an unordered one it
// waits alone in the delayed set (later jobs of its lane go on). A delay
// under 1 ms is refused and changes nothing.
func TestAPostponedJobComesBackAfterItsDelayWithNoAttemptUsed(t *testing.T) {
	t.Parallel()
	for _, ordered := range []bool{true, false} {
		t.Run(map[bool]string{true: "ordered", false: "unordered"}[ordered], func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: ordered, MaxAttempts: 1}))
			m := lanes.NewMinter()
			ids := enqueueN(t, s, m, "q", "g", 2)
			enqueueN(t, s, m, "q", "h", 1)
			k := s.Keys()
			for round := range 3 {
				j := claimOne(t, s, time.Minute, "q")
				require.Equal(t, ids[0], j.ID, "round %d", round)
				require.Zero(t, j.Attempts, "round %d: no attempt used", round)
				require.ErrorIs(t, s.Postpone(ctx, j.Lease, 0), lanes.ErrInvalid)
				lo := serverNowMS(t, s)
				require.NoError(t, s.Postpone(ctx, j.Lease, 10*time.Second))
				hi := serverNowMS(t, s)
				require.Equal(t, 0, inflight(t, s, "q", "g"))
				set, member := "delayed", string(ids[0])
				if ordered {
					set, member = "parked", "g"
					require.Equal(t, strIDs(ids), laneIDs(t, s, "q", "g"), "back at its place")
				}
				due := int64(rint(t, s, "ZSCORE", k.Queue("q", set), member))
				require.GreaterOrEqual(t, due, lo+10_000, "due on the server clock")
				require.LessOrEqual(t, due, hi+10_000, "due on the server clock")
				if round == 0 {
					h := claimOne(t, s, time.Minute, "q")
					require.Equal(t, "h", h.Group, "other lanes keep flowing")
					require.NoError(t, s.Ack(ctx, h.Lease))
				}
				if !ordered && round == 0 {
					j2 := claimOne(t, s, time.Minute, "q")
					require.Equal(t, ids[1], j2.ID, "unordered: the lane's later job goes on")
					require.NoError(t, s.Ack(ctx, j2.Lease))
				}
				c := claim(t, s, 1, time.Minute, "q")
				require.Empty(t, c.Jobs, "round %d: nothing before its delay", round)
				require.Greater(t, c.RetryIn, 9*time.Second)
				rescore(t, s, "q", set, member, 1)
			}
			j := claimOne(t, s, time.Minute, "q")
			require.Equal(t, ids[0], j.ID)
			require.Zero(t, j.Attempts)
			require.NoError(t, s.Ack(ctx, j.Lease))
			if ordered {
				j2 := claimOne(t, s, time.Minute, "q")
				require.Equal(t, ids[1], j2.ID)
				require.NoError(t, s.Ack(ctx, j2.Lease))
			}
			dead, err := s.Inspector().Stats(ctx, "q", 0)
			require.NoError(t, err)
			require.Zero(t, dead.Dead)
			require.Empty(t, tagKeys(t, s))
		})
	}
}

func TestClockSkewCannotStealLease(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	other := sibling(t, s)
	id := lanes.NewMinter().New()
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id}})
	require.NoError(t, err)

	const lease = 150 * time.Millisecond
	before, err := s.ServerTime(ctx)
	require.NoError(t, err)
	j := claimOne(t, s, lease, "q")
	after, err := s.ServerTime(ctx)
	require.NoError(t, err)
	dl := j.Deadline.UnixMilli()
	require.GreaterOrEqual(t, dl, before.Add(lease).UnixMilli())
	require.LessOrEqual(t, dl, after.Add(lease).UnixMilli()+1)
	require.Equal(t, dl, leaseScore(t, s, "q", id))

	for _, skew := range []time.Duration{-30 * time.Second, 0, 30 * time.Second} {
		local := time.Now().Add(skew)
		_ = local // a skewed claimer's idea of "now": nothing in the API accepts it
		c, err := other.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: lease, Max: 1})
		require.NoError(t, err)
		require.Empty(t, c.Jobs, "skew %v: the lease is live on the server clock", skew)
		require.Greater(t, c.RetryIn, time.Duration(0))
		require.LessOrEqual(t, c.RetryIn, lease)
	}
	require.Equal(t, dl, leaseScore(t, s, "q", id), "untouched")

	waitServerPast(t, s, j.Deadline)
	c, err := other.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1, "expired on the server clock: the second claimer takes it")
	require.Equal(t, id, c.Jobs[0].ID)
	require.ErrorIs(t, s.Ack(ctx, j.Lease), lanes.ErrStaleLease)
	require.NoError(t, other.Ack(ctx, c.Jobs[0].Lease))
}

// A dead letter's attempts are the claims of it that failed: Dead counts
// its own claim (a job dead on its first send reads 1, after a Nack 2),
// DeadUntried does not (a claimed job never tried reads what it had).
func TestDeadLetterAttemptsCountTheFailedClaims(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		nacks int
		dead  func(context.Context, *lanes.Store, lanes.Lease) error
		want  int
	}{
		{"Dead on the first claim", 0, func(ctx context.Context, s *lanes.Store, l lanes.Lease) error { return s.Dead(ctx, l, "r") }, 1},
		{"Dead after a Nack", 1, func(ctx context.Context, s *lanes.Store, l lanes.Lease) error { return s.Dead(ctx, l, "r") }, 2},
		{"DeadUntried on the first claim", 0, func(ctx context.Context, s *lanes.Store, l lanes.Lease) error { return s.DeadUntried(ctx, l, "r") }, 0},
		{"DeadUntried after a Nack", 1, func(ctx context.Context, s *lanes.Store, l lanes.Lease) error { return s.DeadUntried(ctx, l, "r") }, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			ids := enqueueN(t, s, lanes.NewMinter(), "q", "g", 1)
			for range tc.nacks {
				_, err := s.Nack(ctx, claimOne(t, s, time.Minute, "q").Lease, 0, "transient")
				require.NoError(t, err)
			}
			j := claimOne(t, s, time.Minute, "q")
			require.Equal(t, tc.nacks, j.Attempts)
			require.NoError(t, tc.dead(ctx, s, j.Lease))
			dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: ids})
			require.NoError(t, err)
			require.Len(t, dl, 1)
			require.Equal(t, tc.want, dl[0].Attempts)
			require.Equal(t, "r", dl[0].Reason)
		})
	}
}
