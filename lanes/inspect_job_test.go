package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Job reads where a job stands, as the store holds it: pending with its
// place in its lane; in flight with its lease's end; back at its lane's
// head with an attempt, its reason and its lane parked after an ordered
// queue's Nack; retrying until its due time after an unordered queue's
// Nack (RetryingJobs lists it); dead with its time; and no job for an id
// the queue does not hold.
func TestJobReadsWhereAJobStands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}), lanes.WithQueue("u", lanes.QueueConfig{}))
	in := s.Inspector()
	m := lanes.NewMinter()
	a := []lanes.JobID{m.New(), m.New(), m.New()}
	for i, id := range a {
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: id, Payload: []byte{'p', byte('0' + i)}}})
		require.NoError(t, err)
	}
	v, ok, err := in.Job(ctx, "q", a[2])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, lanes.JobView{ID: a[2], Queue: "q", Group: "A", Payload: []byte("p2"), State: lanes.JobPending, Position: 2}, v)

	c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	v, _, err = in.Job(ctx, "q", a[0])
	require.NoError(t, err)
	require.Equal(t, lanes.JobInFlight, v.State)
	require.Equal(t, 1, v.Claims)
	require.Equal(t, c.Jobs[0].Lease.Deadline, v.LeaseUntil, "the lease's end")
	require.Equal(t, -1, v.Position)

	_, err = s.Nack(ctx, c.Jobs[0].Lease, time.Hour, "try later")
	require.NoError(t, err)
	v, _, err = in.Job(ctx, "q", a[0])
	require.NoError(t, err)
	require.Equal(t, lanes.JobPending, v.State)
	require.Equal(t, 0, v.Position, "back at its lane's head")
	require.Equal(t, 1, v.Attempts)
	require.Equal(t, "try later", v.Reason)
	require.True(t, v.Parked, "its lane parked for the retry's delay")
	require.WithinDuration(t, time.Now().Add(time.Hour), v.ParkedUntil, time.Minute)

	u := m.New()
	_, err = s.Enqueue(ctx, "u", []lanes.Item{{Group: "B", ID: u, Payload: []byte("u")}})
	require.NoError(t, err)
	c, err = s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"u"}, Lease: time.Hour, Max: 1})
	require.NoError(t, err)
	require.Len(t, c.Jobs, 1)
	_, err = s.Nack(ctx, c.Jobs[0].Lease, time.Hour, "flaky")
	require.NoError(t, err)
	v, _, err = in.Job(ctx, "u", u)
	require.NoError(t, err)
	require.Equal(t, lanes.JobRetrying, v.State)
	require.Equal(t, "flaky", v.Reason)
	require.WithinDuration(t, time.Now().Add(time.Hour), v.Due, time.Minute)
	retrying, err := in.RetryingJobs(ctx, "u", 0, 10)
	require.NoError(t, err)
	require.Equal(t, []lanes.JobView{v}, retrying, "RetryingJobs lists it as Job reads it")

	dead, err := in.DeadLane(ctx, "q", "A", "gone")
	require.NoError(t, err)
	require.Len(t, dead, 3)
	v, _, err = in.Job(ctx, "q", a[1])
	require.NoError(t, err)
	require.Equal(t, lanes.JobDead, v.State)
	require.Equal(t, "gone", v.Reason)
	require.False(t, v.DeadAt.IsZero())

	_, ok, err = in.Job(ctx, "q", m.New())
	require.NoError(t, err)
	require.False(t, ok, "an id the queue does not hold")
	_, ok, err = in.Job(ctx, "u", a[0])
	require.NoError(t, err)
	require.False(t, ok, "another queue's job")
	_, _, err = in.Job(ctx, "q", "job_nope")
	require.ErrorIs(t, err, lanes.ErrInvalid)
}

// PendingJobs pages through a lane in the order its jobs will be sent,
// each page after the last id of the one before, to the end; RetryingJobs
// pages by skip.
func TestPendingJobsPageThroughALaneInSendOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
	in := s.Inspector()
	m := lanes.NewMinter()
	var want []lanes.JobID
	for range 7 {
		id := m.New()
		want = append(want, id)
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "C", ID: id, Payload: []byte("x")}})
		require.NoError(t, err)
	}
	_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "D", ID: m.New(), Payload: []byte("other lane")}})
	require.NoError(t, err)
	var got []lanes.JobID
	var after lanes.JobID
	pages := 0
	for {
		page, err := in.PendingJobs(ctx, "q", "C", after, 3)
		require.NoError(t, err)
		if len(page) == 0 {
			break
		}
		pages++
		require.LessOrEqual(t, len(page), 3)
		for _, v := range page {
			require.Equal(t, lanes.JobPending, v.State)
			require.Equal(t, "C", v.Group)
			got = append(got, v.ID)
		}
		after = page[len(page)-1].ID
	}
	require.Equal(t, want, got)
	require.Equal(t, 3, pages)
	none, err := in.RetryingJobs(ctx, "q", 0, 5)
	require.NoError(t, err)
	require.Empty(t, none)
	_, err = in.PendingJobs(ctx, "q", "C", "", 0)
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
