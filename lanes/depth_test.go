package lanes_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A bounded queue (QueueConfig.MaxDepth) refuses the items whose lane holds
// MaxDepth pending jobs, with ErrLaneFull and each refusal counted in Full,
// while the same call's items on other lanes are enqueued; a job taken off
// the lane by a claim makes room again; an unbounded queue of the same
// store is not affected.
func TestFullLaneRefusesWithErrLaneFullAndOtherLanesGoOn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true, MaxDepth: 3}), lanes.WithQueue("notify", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	item := func(g string) lanes.Item { return lanes.Item{Group: g, ID: m.New(), Payload: []byte("x")} }
	cases := []struct {
		name                 string
		items                []lanes.Item
		added, full, pending int // pending on lane "flood" after the call
		wantFull             bool
	}{
		{"under the bound", []lanes.Item{item("flood"), item("flood")}, 2, 0, 2, false},
		{"up to the bound, the rest refused, another lane enqueued", []lanes.Item{item("flood"), item("flood"), item("quiet"), item("flood")}, 2, 2, 3, true},
		{"a full lane refuses one item", []lanes.Item{item("flood")}, 0, 1, 3, true},
	}
	for _, tc := range cases {
		res, err := s.Enqueue(ctx, "reply", tc.items)
		require.Equal(t, tc.wantFull, errors.Is(err, lanes.ErrLaneFull), "%s: %v", tc.name, err)
		require.Equal(t, tc.added, res.Added, tc.name)
		require.Equal(t, tc.full, res.Full, tc.name)
		require.Equal(t, len(tc.items), res.Added+res.Duplicates+res.Full, tc.name)
		require.Equal(t, tc.pending, rint(t, s, "ZCARD", fmt.Sprintf("{%s}:q:reply:lane:flood", s.Tag())), tc.name)
	}
	// An id already on the full lane is a duplicate, not a refusal.
	dup := cases[0].items[0]
	res, err := s.Enqueue(ctx, "reply", []lanes.Item{dup})
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Duplicates: 1}, res)

	// A claim takes a job off the lane: one more fits.
	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"reply"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.NotEmpty(t, c.Jobs)
	for c.Jobs[0].Group != "flood" { // the ring may serve "quiet" first
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
		c, err = s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"reply"}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		require.NotEmpty(t, c.Jobs)
	}
	res, err = s.Enqueue(ctx, "reply", []lanes.Item{item("flood")})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	res, err = s.Enqueue(ctx, "reply", []lanes.Item{item("flood")})
	require.ErrorIs(t, err, lanes.ErrLaneFull)
	require.Equal(t, 1, res.Full)

	// The unbounded queue takes any number.
	var many []lanes.Item
	for range 20 {
		many = append(many, item("flood"))
	}
	res, err = s.Enqueue(ctx, "notify", many)
	require.NoError(t, err)
	require.Equal(t, 20, res.Added)
}

// With Dedupe a bounded call is atomic: a call that would put a lane over
// the bound enqueues nothing and sets no key (a retry once there is room
// enqueues it), one that fits enqueues all and sets the key.
func TestFullLaneRefusesADedupedCallWhole(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true, MaxDepth: 2}))
	m := lanes.NewMinter()
	key := "{" + s.Tag() + "}:once:1"
	three := []lanes.Item{{Group: "g", ID: m.New(), Payload: []byte("1")}, {Group: "g", ID: m.New(), Payload: []byte("2")}, {Group: "g", ID: m.New(), Payload: []byte("3")}}
	res, err := s.Enqueue(ctx, "reply", three, lanes.Dedupe(key, time.Minute))
	require.ErrorIs(t, err, lanes.ErrLaneFull)
	require.Equal(t, lanes.EnqueueResult{Full: 3}, res)
	require.Zero(t, rint(t, s, "EXISTS", key), "no key set for a refused call")
	require.Zero(t, rint(t, s, "ZCARD", fmt.Sprintf("{%s}:q:reply:lane:g", s.Tag())))
	res, err = s.Enqueue(ctx, "reply", three[:2], lanes.Dedupe(key, time.Minute))
	require.NoError(t, err)
	require.Equal(t, 2, res.Added)
	require.Equal(t, 1, rint(t, s, "EXISTS", key))
}

// A bound below zero is refused as an option.
func TestNegativeMaxDepthIsInvalid(t *testing.T) {
	t.Parallel()
	c := newStore(t)
	_, err := lanes.New(c.Client(), lanes.WithQueue("q", lanes.QueueConfig{MaxDepth: -1}))
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
