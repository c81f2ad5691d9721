package lanes_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A coalesced job still pending takes each newer payload in place: it keeps
// its id and its place in the lane (before a job enqueued after it), and
// one claim sends only the latest payload.
func TestCoalescePendingJobTakesLatestPayloadInPlace(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	before := m.New()
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: before, Payload: []byte("before")}})
	require.NoError(t, err)

	first := m.New()
	id, replaced, err := coalesce(ctx, s, "q", "board", time.Minute, lanes.Item{Group: "g", ID: first, Payload: []byte("frame 1")})
	require.NoError(t, err)
	require.False(t, replaced)
	require.Equal(t, first, id)
	after := m.New()
	_, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: after, Payload: []byte("after")}})
	require.NoError(t, err)
	for _, frame := range []string{"frame 2", "frame 3"} {
		id, replaced, err = coalesce(ctx, s, "q", "board", time.Minute, lanes.Item{Group: "g", ID: m.New(), Payload: []byte(frame)})
		require.NoError(t, err)
		require.True(t, replaced)
		require.Equal(t, first, id, "the pending job keeps its id")
	}
	require.Equal(t, strIDs([]lanes.JobID{before, first, after}), laneIDs(t, s, "q", "g"), "no new job, same place")

	var got []string
	for range 3 {
		j := claimOne(t, s, time.Minute, "q")
		got = append(got, string(j.Payload))
		require.NoError(t, s.Ack(ctx, j.Lease))
	}
	require.Equal(t, []string{"before", "frame 3", "after"}, got)
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, lanes.Stats{}, st, "nothing left")
}

// A coalesced job already claimed (in flight), acked or dead-lettered is
// never changed: the newer payload is a fresh job, sent after it.
func TestCoalesceAfterClaimEnqueuesFresh(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	co := func(payload string) (lanes.JobID, lanes.JobID, bool) {
		t.Helper()
		want := m.New()
		id, replaced, err := coalesce(ctx, s, "q", "board", time.Minute, lanes.Item{Group: "g", ID: want, Payload: []byte(payload)})
		require.NoError(t, err)
		return want, id, replaced
	}
	want, id, replaced := co("v1")
	require.Equal(t, want, id)
	require.False(t, replaced)
	j1 := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "v1", string(j1.Payload))

	want, id, replaced = co("v2")
	require.False(t, replaced, "in flight: fresh job")
	require.Equal(t, want, id)
	require.Equal(t, "v1", rstrs(t, s, "HMGET", s.Keys().Job("q", j1.ID), "p")[0], "the job in flight is untouched")
	require.Empty(t, claim(t, s, 10, time.Minute, "q").Jobs, "ordered: v2 waits for v1")
	require.NoError(t, s.Ack(ctx, j1.Lease))
	j2 := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "v2", string(j2.Payload))
	require.NoError(t, s.Dead(ctx, j2.Lease, "test"))

	want, id, replaced = co("v3")
	require.False(t, replaced, "dead: fresh job")
	require.Equal(t, want, id)
	j3 := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "v3", string(j3.Payload))
	require.NoError(t, s.Ack(ctx, j3.Lease))

	want, id, replaced = co("v4")
	require.False(t, replaced, "acked: fresh job")
	require.Equal(t, want, id)
}

// The coalesce name is a key of the queue that expires ttl after the last
// call; it names the job last enqueued under it.
func TestCoalesceNameExpiresAfterTTL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	id := lanes.NewMinter().New()
	_, _, err := coalesce(ctx, s, "q", "n", 10*time.Second, lanes.Item{Group: "g", ID: id, Payload: []byte("x")})
	require.NoError(t, err)
	key := s.Keys().Coalesce("q", "n")
	require.Equal(t, []string{string(id)}, rstrs(t, s, "MGET", key))
	ttl := rint(t, s, "PTTL", key)
	require.Positive(t, ttl)
	require.LessOrEqual(t, ttl, 10_000)
}

// Bad arguments are refused with ErrInvalid and write nothing; an id that
// exists already is refused by the script when a fresh job is needed.
func TestCoalesceRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	id := lanes.NewMinter().New()
	ok := lanes.Item{Group: "g", ID: id, Payload: []byte("x")}
	for name, tc := range map[string]struct {
		queue, key string
		ttl        time.Duration
		it         lanes.Item
	}{
		"empty name":   {"q", "", time.Minute, ok},
		"long name":    {"q", strings.Repeat("n", lanes.MaxCoalesceKeyBytes+1), time.Minute, ok},
		"zero ttl":     {"q", "n", 0, ok},
		"bad queue":    {"", "n", time.Minute, ok},
		"empty group":  {"q", "n", time.Minute, lanes.Item{ID: id, Payload: []byte("x")}},
		"malformed id": {"q", "n", time.Minute, lanes.Item{Group: "g", ID: "nope", Payload: []byte("x")}},
	} {
		_, _, err := coalesce(ctx, s, tc.queue, tc.key, tc.ttl, tc.it)
		require.ErrorIs(t, err, lanes.ErrInvalid, name)
	}
	require.Empty(t, tagKeys(t, s))

	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id, Payload: []byte("plain")}})
	require.NoError(t, err)
	_, _, err = coalesce(ctx, s, "q", "n", time.Minute, ok)
	require.ErrorContains(t, err, "exists already")
}

// coalesce is Enqueue of it with Coalesce(name, ttl): it returns the id of
// the job that carries it and whether that job was pending and took the
// payload in place (Coalesced), checking that the result counts the item
// once.
func coalesce(ctx context.Context, s *lanes.Store, queue, name string, ttl time.Duration, it lanes.Item) (lanes.JobID, bool, error) {
	res, err := s.Enqueue(ctx, queue, []lanes.Item{it}, lanes.Coalesce(name, ttl))
	if err != nil {
		return "", false, err
	}
	if len(res.IDs) != 1 || res.Added+res.Coalesced != 1 {
		return "", false, fmt.Errorf("coalesce: result %+v: want one id, Added or Coalesced 1", res)
	}
	return res.IDs[0], res.Coalesced == 1, nil
}
