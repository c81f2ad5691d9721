package lanes_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Cancel removes exactly the waiting jobs it is given, across chunks of 500
// ids over 1,200 lanes: a job in flight stays with its claimer, a dead
// letter stays dead, an unknown id is counted gone; the tally hash counts
// the cancelled jobs in the same call; other jobs and lanes are untouched;
// cancelling again cancels nothing; emptied lanes leave the ring at the
// claims that visit them, and once the rest is claimed and acked the
// keyspace is back to its baseline.
func TestCancelRemovesExactlyTheWaitingJobs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	k := s.Keys()
	m := lanes.NewMinter()

	// A fan-out: one copy to each of 1,200 lanes, plus a second job in
	// each of 10 lanes that is not part of it.
	const lanesN = 1200
	var copies, others []lanes.JobID
	var items []lanes.Item
	for i := range lanesN {
		id := m.New()
		copies = append(copies, id)
		items = append(items, lanes.Item{Group: "c" + strconv.Itoa(i), ID: id, Payload: []byte("copy")})
	}
	for i := range 10 {
		id := m.New()
		others = append(others, id)
		items = append(items, lanes.Item{Group: "c" + strconv.Itoa(i), ID: id, Payload: []byte("other")})
	}
	_, err := s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	// Two copies are claimed: one stays in flight, one is dead-lettered.
	c := claim(t, s, 1, time.Minute, "q")
	require.Len(t, c.Jobs, 1)
	held := c.Jobs[0]
	c = claim(t, s, 1, time.Minute, "q")
	require.Len(t, c.Jobs, 1)
	require.NoError(t, s.Dead(ctx, c.Jobs[0].Lease, "blocked"))
	require.Equal(t, lanesN+10-2, rint(t, s, "GET", k.Queue("q", "pending")))

	tally := lanes.Tally{Key: k.Tag() + ":bc:1", Field: "cancelled"}
	ids := append(append([]lanes.JobID{}, copies...), m.New()) // and an id never enqueued
	res, err := s.Cancel(ctx, "q", ids, tally)
	require.NoError(t, err)
	require.Equal(t, lanes.CancelResult{Cancelled: lanesN - 2, InFlight: 1, Gone: 2}, res)
	require.Equal(t, lanesN-2, rint(t, s, "HGET", tally.Key, tally.Field), "the tally counts the cancelled jobs")
	require.Equal(t, 10, rint(t, s, "GET", k.Queue("q", "pending")), "only the other jobs are pending")
	for _, id := range copies {
		if id == held.ID || id == c.Jobs[0].ID {
			continue
		}
		require.Zero(t, rint(t, s, "EXISTS", k.Job("q", id)), "a cancelled job's hash is deleted")
	}
	require.Equal(t, 1, rint(t, s, "EXISTS", k.Job("q", held.ID)), "the job in flight is its claimer's")
	require.Equal(t, 1, rint(t, s, "ZCARD", k.Queue("q", "dead")), "the dead letter stays")

	again, err := s.Cancel(ctx, "q", copies, tally)
	require.NoError(t, err)
	require.Equal(t, lanes.CancelResult{InFlight: 1, Gone: lanesN - 1}, again, "cancelling again cancels nothing")
	require.Equal(t, lanesN-2, rint(t, s, "HGET", tally.Key, tally.Field))

	// The claimer settles its job; then only the other jobs are claimed,
	// in lane order, and the emptied lanes leave the ring on the way.
	require.NoError(t, s.Ack(ctx, held.Lease))
	var got []lanes.JobID
	for range lanesN * 2 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 4})
		require.NoError(t, err)
		if len(c.Jobs) == 0 && c.RetryIn != 0 {
			break
		}
		for _, j := range c.Jobs {
			require.Equal(t, "other", string(j.Payload))
			got = append(got, j.ID)
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	require.ElementsMatch(t, others, got, "every other job, and no cancelled one, was claimed")
	require.Empty(t, ring(t, s, "q"), "emptied lanes left the ring")
	n, err := s.Inspector().PurgeDead(ctx, "q", -time.Hour, 10)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	rdo(t, s, "DEL", tally.Key)
	require.Empty(t, tagKeys(t, s), "the keyspace is back to its baseline")
}

// On an unordered queue a retry waiting in the delayed set is cancelled
// too, and the pending count (which it is not part of) is unchanged.
func TestCancelRemovesADelayedRetry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("u", lanes.QueueConfig{}))
	k := s.Keys()
	m := lanes.NewMinter()
	ids := enqueueN(t, s, m, "u", "A", 2)
	j := claimOne(t, s, time.Minute, "u")
	require.Equal(t, ids[0], j.ID)
	out, err := s.Nack(ctx, j.Lease, time.Hour, "try later")
	require.NoError(t, err)
	require.Equal(t, lanes.Delayed, out)
	require.Equal(t, 1, rint(t, s, "ZCARD", k.Queue("u", "delayed")))

	res, err := s.Cancel(ctx, "u", ids[:1], lanes.Tally{})
	require.NoError(t, err)
	require.Equal(t, lanes.CancelResult{Cancelled: 1}, res)
	require.Zero(t, rint(t, s, "ZCARD", k.Queue("u", "delayed")))
	require.Zero(t, rint(t, s, "EXISTS", k.Job("u", ids[0])))
	require.Equal(t, 1, rint(t, s, "GET", k.Queue("u", "pending")), "the other job is still pending")
	require.Equal(t, []string{string(ids[1])}, laneIDs(t, s, "u", "A"))
}

// Bad input is rejected with ErrInvalid and changes nothing.
func TestCancelRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	ids := enqueueN(t, s, m, "q", "A", 1)
	for name, call := range map[string]func() error{
		"bad queue":         func() error { _, err := s.Cancel(ctx, "", ids, lanes.Tally{}); return err },
		"malformed id":      func() error { _, err := s.Cancel(ctx, "q", []lanes.JobID{ids[0], "nope"}, lanes.Tally{}); return err },
		"tally outside tag": func() error { _, err := s.Cancel(ctx, "q", ids, lanes.Tally{Key: "other", Field: "c"}); return err },
		"tally only the tag": func() error {
			_, err := s.Cancel(ctx, "q", ids, lanes.Tally{Key: s.Keys().Tag() + ":", Field: "c"})
			return err
		},
		"tally no field": func() error { _, err := s.Cancel(ctx, "q", ids, lanes.Tally{Key: s.Keys().Tag() + ":t"}); return err },
	} {
		require.ErrorIs(t, call(), lanes.ErrInvalid, name)
	}
	require.Equal(t, []string{string(ids[0])}, laneIDs(t, s, "q", "A"), "nothing changed")
}
