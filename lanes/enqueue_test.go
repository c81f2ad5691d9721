package lanes_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Enqueue of an id that exists is a no-op (Added false), whether the job is
// pending, in flight or dead: no duplicate is ever claimed.
func TestEnqueueExistingIDIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	id := lanes.NewMinter().New()
	ok, err := s.Enqueue(ctx, "q", "g", id, []byte("first"))
	require.NoError(t, err)
	require.True(t, ok)
	before := dumpKeys(t, s)
	ok, err = s.Enqueue(ctx, "q", "other", id, []byte("second"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Equal(t, before, dumpKeys(t, s), "pending: nothing changed")

	j := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "first", string(j.Payload))
	ok, err = s.Enqueue(ctx, "q", "g", id, []byte("third"))
	require.NoError(t, err)
	require.False(t, ok, "in flight")
	c := claim(t, s, 10, time.Minute, "q")
	require.Empty(t, c.Jobs, "no duplicate to claim")

	require.NoError(t, s.Dead(ctx, j.Lease, "x"))
	ok, err = s.Enqueue(ctx, "q", "g", id, nil)
	require.NoError(t, err)
	require.False(t, ok, "dead")
	require.Empty(t, claim(t, s, 10, time.Minute, "q").Jobs)
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, lanes.Stats{Dead: 1}, st)
}

// A repeated id leaves the first job exactly as it was, wherever that job
// is: repeated later in the same call (with another lane and payload), or
// repeated in a later call while the job is pending, delayed for a retry or
// in flight. Nothing is written for the repeat: no lane gets the id, no
// payload or lane field changes, the ring and counts stay put.
func TestEnqueueRepeatedIDKeepsTheFirstJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	id, other := m.New(), m.New()
	r, err := s.EnqueueBatch(ctx, "q", []lanes.Item{
		{Group: "A", ID: id, Payload: []byte("first")},
		{Group: "B", ID: id, Payload: []byte("second")},
		{Group: "D", ID: other, Payload: []byte("other")},
		{Group: "B", ID: other, Payload: []byte("other again")},
		{Group: "B", ID: id, Payload: []byte("third")},
	})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 2, Duplicates: 3}, r)
	require.Equal(t, []string{string(id)}, laneIDs(t, s, "q", "A"))
	require.Equal(t, []string{string(other)}, laneIDs(t, s, "q", "D"))
	require.Empty(t, laneIDs(t, s, "q", "B"), "the repeats reached no lane")
	require.Equal(t, []string{"A", "D"}, ring(t, s, "q"))

	repeat := func(state string) {
		t.Helper()
		before := dumpKeys(t, s)
		r, err := s.EnqueueBatch(ctx, "q", []lanes.Item{
			{Group: "C" + state, ID: m.New(), Payload: []byte("fresh")}, // the call is not all repeats
			{Group: "B", ID: id, Payload: []byte("again")},
		})
		require.NoError(t, err)
		require.Equal(t, lanes.EnqueueResult{Added: 1, Duplicates: 1}, r, state)
		after := dumpKeys(t, s)
		for k, v := range before {
			if strings.Contains(k, ":lane:C") || strings.HasSuffix(k, ":ring") || strings.HasSuffix(k, ":inring") || strings.HasSuffix(k, ":pending") {
				continue // changed by the fresh job
			}
			require.Equal(t, v, after[k], "%s: %s unchanged", state, k)
		}
		require.Empty(t, laneIDs(t, s, "q", "B"), "%s: the repeat reached no lane", state)
	}
	repeat("pending")

	j := claimOne(t, s, time.Minute, "q")
	require.Equal(t, id, j.ID)
	require.Equal(t, "first", string(j.Payload))
	o := claimOne(t, s, time.Minute, "q")
	require.Equal(t, other, o.ID)
	require.Equal(t, "other", string(o.Payload))
	require.NoError(t, s.Release(ctx, o.Lease))
	repeat("in flight")

	out, err := s.Nack(ctx, j.Lease, time.Hour, "retry later")
	require.NoError(t, err)
	require.Equal(t, lanes.Delayed, out)
	repeat("delayed")
}

// EnqueueBatch counts Added and Duplicates, across chunks and within one
// batch, and an empty batch writes nothing.
func TestEnqueueBatchCountsAddedAndDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	r, err := s.EnqueueBatch(ctx, "q", nil)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{}, r)
	require.Empty(t, tagKeys(t, s))

	existing := m.New()
	_, err = s.Enqueue(ctx, "q", "g", existing, nil)
	require.NoError(t, err)
	items := []lanes.Item{{Group: "g", ID: existing}}
	for i := 0; i < 1100; i++ {
		items = append(items, lanes.Item{Group: "g" + strconv.Itoa(i%7), ID: m.New()})
	}
	items = append(items, items[5], items[700]) // repeats within the batch, in the last chunk
	r, err = s.EnqueueBatch(ctx, "q", items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1100, Duplicates: 3}, r)
	st, err := s.Inspector().Stats(ctx, "q", 10)
	require.NoError(t, err)
	require.Equal(t, 1101, st.Pending)
	require.Len(t, st.Top, 8)
	require.Len(t, ring(t, s, "q"), 8, "each lane joins the ring once")
}

// EnqueueOnce enqueues and records the ids under the key in one atomic
// call; a second call with the key (even after the jobs were acked and
// deleted) enqueues nothing and returns the first call's ids.
func TestEnqueueOnceIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	key := s.Keys().Tag() + ":test:once:update-7"
	first := []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("1")}, {Group: "A", ID: m.New(), Payload: []byte("2")}}
	ids, fresh, err := s.EnqueueOnce(ctx, "q", key, time.Minute, first)
	require.NoError(t, err)
	require.True(t, fresh)
	require.Equal(t, []lanes.JobID{first[0].ID, first[1].ID}, ids)
	// Deliver both: the job hashes are deleted.
	for range 2 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	again, fresh, err := s.EnqueueOnce(ctx, "q", key, time.Minute, []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("1")}})
	require.NoError(t, err)
	require.False(t, fresh)
	require.Equal(t, ids, again, "the first call's ids")
	st, err := s.Inspector().Stats(ctx, "q", 10)
	require.NoError(t, err)
	require.Zero(t, st.Pending, "nothing enqueued the second time")

	pttl, err := s.Client().Do(ctx, s.Client().B().Pttl().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	require.Greater(t, pttl, int64(50_000))
	require.LessOrEqual(t, pttl, int64(60_000))
	v, err := s.Client().Do(ctx, s.Client().B().Get().Key(key).Build()).ToString()
	require.NoError(t, err)
	require.Equal(t, string(ids[0])+","+string(ids[1]), v)

	// A different key enqueues.
	_, fresh, err = s.EnqueueOnce(ctx, "q", key+"b", time.Minute, []lanes.Item{{Group: "A", ID: m.New()}})
	require.NoError(t, err)
	require.True(t, fresh)
}

func TestEnqueueOnceRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	good := s.Keys().Tag() + ":k"
	one := []lanes.Item{{Group: "A", ID: m.New()}}
	many := make([]lanes.Item, lanes.MaxOnceItems+1)
	for i := range many {
		many[i] = lanes.Item{Group: "A", ID: m.New()}
	}
	for name, f := range map[string]func() error{
		"key without tag": func() error { _, _, err := s.EnqueueOnce(ctx, "q", "k", time.Minute, one); return err },
		"other tag":       func() error { _, _, err := s.EnqueueOnce(ctx, "q", "{x}:k", time.Minute, one); return err },
		"bare tag":        func() error { _, _, err := s.EnqueueOnce(ctx, "q", s.Keys().Tag()+":", time.Minute, one); return err },
		"zero ttl":        func() error { _, _, err := s.EnqueueOnce(ctx, "q", good, 0, one); return err },
		"no items":        func() error { _, _, err := s.EnqueueOnce(ctx, "q", good, time.Minute, nil); return err },
		"too many items":  func() error { _, _, err := s.EnqueueOnce(ctx, "q", good, time.Minute, many); return err },
		"bad item": func() error {
			_, _, err := s.EnqueueOnce(ctx, "q", good, time.Minute, []lanes.Item{{Group: "", ID: m.New()}})
			return err
		},
		"bad queue": func() error { _, _, err := s.EnqueueOnce(ctx, "", good, time.Minute, one); return err },
		"payload too long": func() error {
			_, _, err := s.EnqueueOnce(ctx, "q", good, time.Minute, []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte(strings.Repeat("x", lanes.DefaultMaxPayload+1))}})
			return err
		},
	} {
		require.ErrorIs(t, f(), lanes.ErrInvalid, name)
	}
	n, err := s.Client().Do(ctx, s.Client().B().Exists().Key(good).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "nothing written")
}

// EnqueueBatchUnless enqueues every chunk while its stop key is absent and
// none once it exists (each chunk checks it atomically): the refused jobs
// are counted, reach no lane and leave no key. A stop key outside the
// store's hash tag is refused with ErrInvalid, nothing written.
func TestEnqueueBatchUnlessRefusesOnceTheStopKeyExists(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	stop := "{" + s.Tag() + "}:test:stop"
	items := func(n int) []lanes.Item {
		out := make([]lanes.Item, n)
		for i := range out {
			out[i] = lanes.Item{Group: "g" + strconv.Itoa(i), ID: m.New(), Payload: []byte("x")}
		}
		return out
	}
	r, err := s.EnqueueBatchUnless(ctx, "q", stop, items(1200)) // three chunks
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1200}, r)

	rdo(t, s, "SET", stop, "1")
	before := dumpKeys(t, s)
	r, err = s.EnqueueBatchUnless(ctx, "q", stop, items(1200))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Refused: 1200}, r)
	require.Equal(t, before, dumpKeys(t, s), "nothing written")

	for _, bad := range []string{"", "stop", "{other}:stop", "{" + s.Tag() + "}:"} {
		_, err = s.EnqueueBatchUnless(ctx, "q", bad, items(1))
		require.ErrorIs(t, err, lanes.ErrInvalid, "stop key %q", bad)
	}
	require.Equal(t, before, dumpKeys(t, s), "nothing written for a bad stop key")
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 1200, st.Pending)
}
