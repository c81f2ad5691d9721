package lanes_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A paused queue is not served, by this store or any other on the tag,
// while the next queue of the same claim is; its jobs wait (and enqueues
// still land) until ResumeQueue, which wakes an idle claimer waiting for a
// wake-up; PausedQueues reads the why back. Pausing twice and resuming
// twice report the second as no change; a pause needs a why.
func TestPausedQueueIsNotServedUntilResumedWhileTheOthersFlow(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	opts := []lanes.Option{lanes.WithQueue("a", lanes.QueueConfig{Ordered: true}), lanes.WithQueue("b", lanes.QueueConfig{Ordered: true})}
	s := newStore(t, opts...)
	m := lanes.NewMinter()
	in := s.Inspector()
	enqueueN(t, s, m, "a", "chat1", 3)
	enqueueN(t, s, m, "b", "chat2", 2)

	first, err := in.PauseQueue(ctx, "a", "paused by the console")
	require.NoError(t, err)
	require.True(t, first)
	again, err := in.PauseQueue(ctx, "a", "paused again")
	require.NoError(t, err)
	require.False(t, again, "already paused: the why replaced")
	paused, err := in.PausedQueues(ctx)
	require.NoError(t, err)
	require.Equal(t, map[string]string{"a": "paused again"}, paused)
	_, err = in.PauseQueue(ctx, "a", "")
	require.ErrorIs(t, err, lanes.ErrInvalid)

	for range 2 {
		c := claim(t, s, 10, time.Minute, "a", "b")
		require.Len(t, c.Jobs, 1, "the paused queue is skipped, the next one served")
		require.Equal(t, "b", c.Jobs[0].Queue)
		require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
	}
	enqueueN(t, s, m, "a", "chat3", 1) // an enqueue lands while paused
	c := claim(t, s, 10, time.Minute, "a", "b")
	require.Empty(t, c.Jobs, "nothing but the paused queue's jobs")
	require.Equal(t, time.Duration(-1), c.RetryIn, "nothing due: wait for a wake-up (the resume)")
	other, err := lanes.New(s.Client(), append(opts, lanes.WithTag(s.Tag()))...)
	require.NoError(t, err)
	require.Empty(t, claim(t, other, 10, time.Minute, "a").Jobs, "another store on the tag sees the pause too")

	w, err := s.NewWaiter(ctx)
	require.NoError(t, err)
	resumed, err := in.ResumeQueue(ctx, "a")
	require.NoError(t, err)
	require.True(t, resumed)
	require.True(t, w.Wait(ctx, time.Minute), "the resume woke the idle claimer")
	resumed, err = in.ResumeQueue(ctx, "a")
	require.NoError(t, err)
	require.False(t, resumed, "not paused any more")
	got := map[string]int{}
	for {
		c := claim(t, s, 10, time.Minute, "a", "b")
		if len(c.Jobs) == 0 {
			break
		}
		for _, j := range c.Jobs {
			got[j.Group]++
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	require.Equal(t, map[string]int{"chat1": 3, "chat3": 1}, got, "every job of the paused queue, once resumed")
	paused, err = in.PausedQueues(ctx)
	require.NoError(t, err)
	require.Empty(t, paused)
}

// PauseGroup holds one lane in every queue until ResumeGroup, while the
// other lanes flow; a later 429-like Park of an hour does not shorten it,
// PausedGroups lists it, and ResumeGroup serves it again.
func TestPausedGroupWaitsInEveryQueueUntilResumed(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := newStore(t, lanes.WithQueue("a", lanes.QueueConfig{Ordered: true}), lanes.WithQueue("b", lanes.QueueConfig{Ordered: true}))
	m := lanes.NewMinter()
	in := s.Inspector()
	for _, q := range []string{"a", "b"} {
		enqueueN(t, s, m, q, "held", 2)
		enqueueN(t, s, m, q, "free", 1)
	}
	require.NoError(t, in.PauseGroup(ctx, "held"))
	until, err := in.Park(ctx, "a", "held", time.Hour)
	require.NoError(t, err)
	require.True(t, until.IsZero(), "the pause stands: parked until resumed")
	for _, q := range []string{"a", "b"} {
		gs, err := in.PausedGroups(ctx, q, 10)
		require.NoError(t, err)
		require.Equal(t, []string{"held"}, gs, "queue %s", q)
	}
	served := func() map[string]int {
		got := map[string]int{}
		for {
			c := claim(t, s, 10, time.Minute, "a", "b")
			if len(c.Jobs) == 0 {
				return got
			}
			for _, j := range c.Jobs {
				got[j.Queue+"/"+j.Group]++
				require.NoError(t, s.Ack(ctx, j.Lease))
			}
		}
	}
	require.Equal(t, map[string]int{"a/free": 1, "b/free": 1}, served(), "the paused lane waits in both queues")
	require.NoError(t, in.ResumeGroup(ctx, "held"))
	require.Equal(t, map[string]int{"a/held": 2, "b/held": 2}, served())
	gs, err := in.PausedGroups(ctx, "a", 10)
	require.NoError(t, err)
	require.Empty(t, gs)
}
