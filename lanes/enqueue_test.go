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

// Enqueue of an id that exists is a no-op (counted in Duplicates), whether
// the job is pending, in flight or dead: no duplicate is ever claimed.
func TestEnqueueExistingIDIsNoOp(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	id := lanes.NewMinter().New()
	r, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id, Payload: []byte("first")}})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1}, r)
	before := dumpKeys(t, s)
	r, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "other", ID: id, Payload: []byte("second")}})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Duplicates: 1}, r)
	require.Equal(t, before, dumpKeys(t, s), "pending: nothing changed")

	j := claimOne(t, s, time.Minute, "q")
	require.Equal(t, "first", string(j.Payload))
	r, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id, Payload: []byte("third")}})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Duplicates: 1}, r, "in flight")
	c := claim(t, s, 10, time.Minute, "q")
	require.Empty(t, c.Jobs, "no duplicate to claim")

	require.NoError(t, s.Dead(ctx, j.Lease, "x"))
	r, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: id}})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Duplicates: 1}, r, "dead")
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
	r, err := s.Enqueue(ctx, "q", []lanes.Item{
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
		r, err := s.Enqueue(ctx, "q", []lanes.Item{
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

// Enqueue of many items counts Added and Duplicates, across chunks and
// within one call, and a call without items writes nothing.
func TestEnqueueManyCountsAddedAndDuplicates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	r, err := s.Enqueue(ctx, "q", nil)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{}, r)
	require.Empty(t, tagKeys(t, s))

	existing := m.New()
	_, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: existing}})
	require.NoError(t, err)
	items := []lanes.Item{{Group: "g", ID: existing}}
	for i := 0; i < 1100; i++ {
		items = append(items, lanes.Item{Group: "g" + strconv.Itoa(i%7), ID: m.New()})
	}
	items = append(items, items[5], items[700]) // repeats within the batch, in the last chunk
	r, err = s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1100, Duplicates: 3}, r)
	st, err := s.Inspector().Stats(ctx, "q", 10)
	require.NoError(t, err)
	require.Equal(t, 1101, st.Pending)
	require.Len(t, st.Top, 8)
	require.Len(t, ring(t, s, "q"), 8, "each lane joins the ring once")
}

// Enqueue with Dedupe enqueues and records the ids under the key in one
// atomic call; a second call with the key (even after the jobs were acked
// and deleted) enqueues nothing (Deduped) and returns the first call's ids.
func TestEnqueueDedupeIsIdempotent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	key := s.Keys().Tag() + ":test:once:update-7"
	first := []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("1")}, {Group: "A", ID: m.New(), Payload: []byte("2")}}
	r, err := s.Enqueue(ctx, "q", first, lanes.Dedupe(key, time.Minute))
	require.NoError(t, err)
	ids := []lanes.JobID{first[0].ID, first[1].ID}
	require.Equal(t, lanes.EnqueueResult{Added: 2, IDs: ids}, r)
	// Deliver both: the job hashes are deleted.
	for range 2 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1})
		require.NoError(t, err)
		require.Len(t, c.Jobs, 1)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	r, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("1")}}, lanes.Dedupe(key, time.Minute))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Deduped: 1, IDs: ids}, r, "the first call's ids")
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
	r, err = s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: m.New()}}, lanes.Dedupe(key+"b", time.Minute))
	require.NoError(t, err)
	require.Equal(t, 1, r.Added)
	require.Zero(t, r.Deduped)
}

func TestEnqueueDedupeRejectsBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	good := s.Keys().Tag() + ":k"
	one := []lanes.Item{{Group: "A", ID: m.New()}}
	many := make([]lanes.Item, lanes.MaxDedupeItems+1)
	for i := range many {
		many[i] = lanes.Item{Group: "A", ID: m.New()}
	}
	for name, f := range map[string]func() error{
		"key without tag": func() error { _, err := s.Enqueue(ctx, "q", one, lanes.Dedupe("k", time.Minute)); return err },
		"other tag":       func() error { _, err := s.Enqueue(ctx, "q", one, lanes.Dedupe("{x}:k", time.Minute)); return err },
		"bare tag": func() error {
			_, err := s.Enqueue(ctx, "q", one, lanes.Dedupe(s.Keys().Tag()+":", time.Minute))
			return err
		},
		"zero ttl":       func() error { _, err := s.Enqueue(ctx, "q", one, lanes.Dedupe(good, 0)); return err },
		"no items":       func() error { _, err := s.Enqueue(ctx, "q", nil, lanes.Dedupe(good, time.Minute)); return err },
		"too many items": func() error { _, err := s.Enqueue(ctx, "q", many, lanes.Dedupe(good, time.Minute)); return err },
		"bad item": func() error {
			_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "", ID: m.New()}}, lanes.Dedupe(good, time.Minute))
			return err
		},
		"bad queue": func() error { _, err := s.Enqueue(ctx, "", one, lanes.Dedupe(good, time.Minute)); return err },
		"payload too long": func() error {
			_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte(strings.Repeat("x", lanes.DefaultMaxPayload+1))}}, lanes.Dedupe(good, time.Minute))
			return err
		},
	} {
		require.ErrorIs(t, f(), lanes.ErrInvalid, name)
	}
	n, err := s.Client().Do(ctx, s.Client().B().Exists().Key(good).Build()).AsInt64()
	require.NoError(t, err)
	require.Zero(t, n, "nothing written")
}

// Enqueue with Unless enqueues every chunk while its stop key is absent and
// none once it exists (each chunk checks it atomically): the refused jobs
// are counted, reach no lane and leave no key. A stop key outside the
// store's hash tag is refused with ErrInvalid, nothing written.
func TestEnqueueUnlessRefusesOnceTheStopKeyExists(t *testing.T) {
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
	r, err := s.Enqueue(ctx, "q", items(1200), lanes.Unless(stop)) // three chunks
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1200}, r)

	rdo(t, s, "SET", stop, "1")
	before := dumpKeys(t, s)
	r, err = s.Enqueue(ctx, "q", items(1200), lanes.Unless(stop))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Refused: 1200}, r)
	require.Equal(t, before, dumpKeys(t, s), "nothing written")

	for _, bad := range []string{"", "stop", "{other}:stop", "{" + s.Tag() + "}:"} {
		_, err = s.Enqueue(ctx, "q", items(1), lanes.Unless(bad))
		require.ErrorIs(t, err, lanes.ErrInvalid, "stop key %q", bad)
	}
	require.Equal(t, before, dumpKeys(t, s), "nothing written for a bad stop key")
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 1200, st.Pending)
}

// Dedupe and Unless combine in one atomic call: while the stop key exists
// nothing is enqueued and the dedupe key is not set (Refused, so a later
// call may still enqueue); once it is gone the call enqueues and sets the
// dedupe key, and a repeat is Deduped.
func TestEnqueueDedupeWithUnlessChecksTheStopKeyFirst(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	once := s.Keys().Tag() + ":test:once:7"
	stop := s.Keys().Tag() + ":test:stop"
	items := []lanes.Item{{Group: "A", ID: m.New(), Payload: []byte("1")}, {Group: "B", ID: m.New(), Payload: []byte("2")}}
	ids := []lanes.JobID{items[0].ID, items[1].ID}

	rdo(t, s, "SET", stop, "1")
	before := dumpKeys(t, s)
	r, err := s.Enqueue(ctx, "q", items, lanes.Dedupe(once, time.Minute), lanes.Unless(stop))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Refused: 2}, r)
	require.Equal(t, before, dumpKeys(t, s), "nothing written, the dedupe key not set")

	rdo(t, s, "DEL", stop)
	r, err = s.Enqueue(ctx, "q", items, lanes.Dedupe(once, time.Minute), lanes.Unless(stop))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 2, IDs: ids}, r)
	r, err = s.Enqueue(ctx, "q", items, lanes.Unless(stop), lanes.Dedupe(once, time.Minute))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Deduped: 2, IDs: ids}, r, "the options' order does not matter")
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 2, st.Pending)
}

// An Enqueue whose options do not fit its items or each other is refused
// with ErrInvalid before anything is written: Coalesce takes exactly one
// item and no other option, Dedupe at least one item; of an option given
// twice the last wins, and a nil option is ignored.
func TestEnqueueRefusesOptionsThatDoNotCombine(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	key := s.Keys().Tag() + ":test:k"
	one := []lanes.Item{{Group: "A", ID: m.New()}}
	two := []lanes.Item{{Group: "A", ID: m.New()}, {Group: "B", ID: m.New()}}
	for name, tc := range map[string]struct {
		items []lanes.Item
		opts  []lanes.EnqueueOption
	}{
		"coalesce with dedupe":   {one, []lanes.EnqueueOption{lanes.Coalesce("n", time.Minute), lanes.Dedupe(key, time.Minute)}},
		"coalesce with unless":   {one, []lanes.EnqueueOption{lanes.Unless(key), lanes.Coalesce("n", time.Minute)}},
		"coalesce of two items":  {two, []lanes.EnqueueOption{lanes.Coalesce("n", time.Minute)}},
		"coalesce of no item":    {nil, []lanes.EnqueueOption{lanes.Coalesce("n", time.Minute)}},
		"dedupe of no item":      {nil, []lanes.EnqueueOption{lanes.Dedupe(key, time.Minute)}},
		"last dedupe is checked": {one, []lanes.EnqueueOption{lanes.Dedupe(key, time.Minute), lanes.Dedupe("k", time.Minute)}},
		"empty stop key":         {one, []lanes.EnqueueOption{lanes.Unless("")}},
	} {
		_, err := s.Enqueue(ctx, "q", tc.items, tc.opts...)
		require.ErrorIs(t, err, lanes.ErrInvalid, name)
	}
	require.Empty(t, tagKeys(t, s), "nothing written")

	r, err := s.Enqueue(ctx, "q", nil, lanes.Unless(key))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{}, r, "no items with a stop key: a no-op")
	r, err = s.Enqueue(ctx, "q", one, nil)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1}, r, "a nil option is ignored")
}

// Enqueue with AtCursor is one atomic producer step: it enqueues only while
// the cursor holds its expected value and, in the same call, moves the
// cursor, counts the jobs added, applies the extra increments and tracks
// the added ids; a step repeated (a crash before the producer saw the
// answer, or a second producer) writes nothing and returns ErrCursorMoved;
// a step of no item still moves the cursor; the stop key (Unless) is
// checked first; a lane at its MaxDepth refuses the whole step and the
// cursor stays.
func TestEnqueueAtCursorTakesEachStepOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true, MaxDepth: 3}))
	c := s.Client()
	m := lanes.NewMinter()
	tag := "{" + s.Tag() + "}:test:"
	rec, track, stop := tag+"rec", tag+"out", tag+"stop"
	require.NoError(t, c.Do(ctx, c.B().Hset().Key(rec).FieldValue().FieldValue("t", "9").Build()).Error())
	require.NoError(t, c.Do(ctx, c.B().Pexpire().Key(rec).Milliseconds(60_000).Build()).Error())
	step := func(from, to string, groups ...string) []lanes.Item {
		out := make([]lanes.Item, len(groups))
		for i, g := range groups {
			out[i] = lanes.Item{Group: g, ID: m.New(), Payload: []byte(from)}
		}
		return out
	}
	at := func(from, to string) lanes.EnqueueOption {
		return lanes.AtCursor(lanes.Cursor{Key: rec, Field: "cur", From: from, To: to, Count: "q", Incr: map[string]int64{"sk": 2}, Track: track})
	}
	first := step("", "b1", "a", "b")
	r, err := s.Enqueue(ctx, "q", first, at("", "b1"), lanes.Unless(stop))
	require.NoError(t, err)
	require.Equal(t, 2, r.Added)

	// The same step again (new ids, as a producer re-reading its audience
	// would mint): nothing written.
	r, err = s.Enqueue(ctx, "q", step("", "b1", "a", "b"), at("", "b1"))
	require.ErrorIs(t, err, lanes.ErrCursorMoved)
	require.Equal(t, 2, r.Moved)

	// A step of no item moves the cursor.
	_, err = s.Enqueue(ctx, "q", nil, at("b1", "b2"))
	require.NoError(t, err)

	// A lane at its MaxDepth (3) refuses the whole step; the cursor stays.
	for i := 0; i < 2; i++ {
		_, err = s.Enqueue(ctx, "q", step("x", "", "a"))
		require.NoError(t, err)
	}
	r, err = s.Enqueue(ctx, "q", step("b2", "b3", "a", "c"), at("b2", "b3"))
	require.ErrorIs(t, err, lanes.ErrLaneFull)
	require.Equal(t, 2, r.Full)

	// Once the stop key exists nothing is enqueued and the cursor stays.
	require.NoError(t, c.Do(ctx, c.B().Set().Key(stop).Value("1").Build()).Error())
	r, err = s.Enqueue(ctx, "q", step("b2", "b3", "c"), at("b2", "b3"), lanes.Unless(stop))
	require.NoError(t, err)
	require.Equal(t, 1, r.Refused)

	h, err := c.Do(ctx, c.B().Hgetall().Key(rec).Build()).AsStrMap()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"t": "9", "cur": "b2", "q": "2", "sk": "4"}, h)
	ids, err := c.Do(ctx, c.B().Zrange().Key(track).Min("0").Max("-1").Build()).AsStrSlice()
	require.NoError(t, err)
	require.Equal(t, []string{string(first[0].ID), string(first[1].ID)}, ids)
	ttl, err := c.Do(ctx, c.B().Pttl().Key(track).Build()).AsInt64()
	require.NoError(t, err)
	require.Positive(t, ttl, "the track set takes the cursor hash's TTL")

	for _, bad := range []lanes.Cursor{
		{Key: "nottagged", Field: "cur", To: "x"},
		{Key: rec, Field: "", To: "x"},
		{Key: rec, Field: "cur", From: "x", To: "x"},
		{Key: rec, Field: "cur", To: "y", Track: "nottagged"},
	} {
		_, err = s.Enqueue(ctx, "q", nil, lanes.AtCursor(bad))
		require.ErrorIs(t, err, lanes.ErrInvalid, "%+v", bad)
	}
	_, err = s.Enqueue(ctx, "q", step("", "", "a"), at("b2", "b3"), lanes.Dedupe(tag+"once", time.Minute))
	require.ErrorIs(t, err, lanes.ErrInvalid, "AtCursor does not combine with Dedupe")
}
