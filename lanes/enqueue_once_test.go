package lanes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// EnqueueOnce enqueues and records the ids under the key in one atomic
// call; a second call with the key (even after the jobs were acked and
// deleted) enqueues nothing and returns the first call's ids.
func TestEnqueueOnceIdempotent(t *testing.T) {
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
