package intake_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/lanes"
)

// Record enqueues only updates at or above the stored offset, advances the
// offset after, and writes nothing without the lease; a claimed update
// round-trips its JSON; Finish raises the lane's handled mark and drops
// the journal, so the same update recorded again is recognised as handled.
func TestInboxRecordsOnceAndFinishesUnderTheLease(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()

	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(1)})
	require.ErrorIs(t, err, intake.ErrLeaseLost, "no lease held: nothing written")
	off, err := in.Offset(ctx)
	require.NoError(t, err)
	require.Zero(t, off)
	n, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	added, next, err := in.Record(ctx, lease.Token(), []intake.Update{update(1), update(2)})
	require.NoError(t, err)
	require.Equal(t, 2, added)
	require.EqualValues(t, 3, next)
	added, _, err = in.Record(ctx, lease.Token(), []intake.Update{update(2), update(3)})
	require.NoError(t, err)
	require.Equal(t, 1, added, "update 2 was recorded already")
	n, err = in.Unhandled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, n)

	ups, errs, _, err := in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.NoError(t, errs[0])
	u := ups[0]
	require.EqualValues(t, 1, u.ID, "a lane is handled in update_id order")
	require.Equal(t, "0", u.Lane, "no chat, no user: lane 0")
	require.JSONEq(t, string(update(1).JSON), string(u.JSON))
	require.WithinDuration(t, time.Now(), u.Recorded, time.Minute)
	done, err := in.Handled(ctx, u)
	require.NoError(t, err)
	require.False(t, done)

	require.NoError(t, in.SaveJournal(ctx, 1, "pre", "-", "out", "[]"))
	j, err := in.LoadJournal(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, intake.Journal{"pre": "-", "out": "[]"}, j)
	require.NoError(t, in.Finish(ctx, u))
	_, mark, err := in.Mark(ctx, "0")
	require.NoError(t, err)
	require.EqualValues(t, 1, mark)
	j, err = in.LoadJournal(ctx, 1)
	require.NoError(t, err)
	require.Empty(t, j, "the journal is dropped once the update is handled")
	n, err = in.Unhandled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, n)

	// Recorded again after it was handled (a webhook resend): enqueued,
	// but its lane's handled mark says it was handled.
	added, err = in.Accept(ctx, []intake.Update{update(1)})
	require.NoError(t, err)
	require.Equal(t, 1, added)
	ups, _, _, err = in.Claim(ctx, time.Minute, 5)
	require.NoError(t, err)
	require.Len(t, ups, 1, "weight 1: one update of the lane per turn")
	require.EqualValues(t, 1, ups[0].ID, "back at its place, before 2 and 3")
	done, err = in.Handled(ctx, ups[0])
	require.NoError(t, err)
	require.True(t, done, "handled before")
	require.NoError(t, in.Finish(ctx, ups[0]))
	ups, _, _, err = in.Claim(ctx, time.Minute, 5)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.EqualValues(t, 2, ups[0].ID)
	done, err = in.Handled(ctx, ups[0])
	require.NoError(t, err)
	require.False(t, done)

	lease.Release(ctx)
	_, _, err = in.Record(ctx, lease.Token(), []intake.Update{update(4)})
	require.ErrorIs(t, err, intake.ErrLeaseLost, "released: the offset is fenced")
	holder, polled, err := in.PollerState(ctx)
	require.NoError(t, err)
	require.Empty(t, holder)
	require.Empty(t, polled)
}

// Rebase follows a server whose update_id sequence went down: only when the
// whole batch is below the offset, it begins epoch E, enqueues the lower
// batch in it and sets the offset past it; an update of the new epoch is
// not taken for one handled already, however low its id. A re-base begun
// and not ended (a crash before the offset was set) resumes with the same
// epoch.
func TestInboxRebaseStartsAnEpochBelowTheOffset(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()
	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(900000000)})
	require.NoError(t, err)
	ups, _, _, err := in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.NoError(t, in.Finish(ctx, ups[0]))

	_, _, err = in.Rebase(ctx, lease.Token(), []intake.Update{update(120000000), update(900000001)})
	require.Error(t, err, "a batch not entirely below the offset is no reset")
	off, err := in.Offset(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 900000001, off, "nothing written")

	next, epoch, err := in.Rebase(ctx, lease.Token(), []intake.Update{update(120000000)})
	require.NoError(t, err)
	require.EqualValues(t, 120000001, next)
	require.EqualValues(t, 1, epoch)
	ups, _, _, err = in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.EqualValues(t, 120000000, ups[0].ID)
	require.EqualValues(t, 1, ups[0].Epoch)
	done, err := in.Handled(ctx, ups[0])
	require.NoError(t, err)
	require.False(t, done, "a new epoch: not taken for a handled update")
	require.NoError(t, in.Finish(ctx, ups[0]))
	e, mark, err := in.Mark(ctx, "0")
	require.NoError(t, err)
	require.Equal(t, [2]int64{1, 120000000}, [2]int64{e, mark})

	// A crash between enqueueing a re-based batch and setting the offset:
	// the same batch is handed out again and re-based in the same epoch.
	c := valkeyClient(t)
	require.NoError(t, c.Do(ctx, c.B().Set().Key(in.Keys().Offset()).Value("900000001").Build()).Error())
	require.NoError(t, c.Do(ctx, c.B().Set().Key(in.Keys().Rebasing()).Value("1").Build()).Error())
	_, epoch, err = in.Rebase(ctx, lease.Token(), []intake.Update{update(120000000)})
	require.NoError(t, err)
	require.EqualValues(t, 1, epoch, "resumed, not a second epoch")
	ups, _, _, err = in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, ups, 1, "enqueued again")
	done, err = in.Handled(ctx, ups[0])
	require.NoError(t, err)
	require.True(t, done, "and recognised as handled")

	lease.Release(ctx)
	_, _, err = in.Rebase(ctx, lease.Token(), []intake.Update{update(5)})
	require.ErrorIs(t, err, intake.ErrLeaseLost, "released: the inbox is fenced")
}

// Retry dead-letters an update that failed MaxAttempts times, with its
// reason, and forgets it as unhandled; its lane goes on with the next.
func TestInboxDeadLettersAnUpdateThatKeepsFailing(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()
	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(7), update(8)})
	require.NoError(t, err)
	for attempt := 1; attempt <= intake.DefaultMaxAttempts; attempt++ {
		var ups []intake.Claimed
		require.Eventually(t, func() bool {
			ups, _, _, err = in.Claim(ctx, time.Minute, 1)
			return err == nil && len(ups) == 1
		}, 5*time.Second, 5*time.Millisecond)
		require.EqualValues(t, 7, ups[0].ID, "the lane waits behind its failing head")
		dead, err := in.Retry(ctx, ups[0], time.Millisecond, "panic: boom")
		require.NoError(t, err)
		require.Equal(t, attempt == intake.DefaultMaxAttempts, dead)
	}
	var ups []intake.Claimed
	require.Eventually(t, func() bool {
		ups, _, _, err = in.Claim(ctx, time.Minute, 1)
		return err == nil && len(ups) == 1
	}, 5*time.Second, 5*time.Millisecond)
	require.EqualValues(t, 8, ups[0].ID, "the chat's next update")
	b, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, b.Dead)
	dl, err := in.Store().Inspector().DeadLetters(ctx, intake.QueueName, lanesNewest(1))
	require.NoError(t, err)
	require.Len(t, dl, 1)
	require.Equal(t, "panic: boom", dl[0].Reason)
	n, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "only update 8 is left")
}

// Webhook updates arrive out of order: an id below its lane's handled mark
// that was never handled is not taken for handled; a finished id is, also
// once it was trimmed from the lane's bounded finished set.
func TestInboxHandledDoesNotAssumeInOrderArrival(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	in, _ := newInbox(t)
	handle := func(id int64) (wasHandled bool) {
		t.Helper()
		_, err := in.Accept(ctx, []intake.Update{update(id)})
		require.NoError(t, err)
		ups, _, _, err := in.Claim(ctx, time.Minute, 1)
		require.NoError(t, err)
		require.Len(t, ups, 1)
		require.Equal(t, id, ups[0].ID)
		done, err := in.Handled(ctx, ups[0])
		require.NoError(t, err)
		require.NoError(t, in.Finish(ctx, ups[0]))
		return done
	}
	require.False(t, handle(1020))
	require.False(t, handle(1019), "older, arrived later: not handled yet")
	require.True(t, handle(1019), "a resend")
	require.True(t, handle(1020), "a resend")
	_, mark, err := in.Mark(ctx, "0")
	require.NoError(t, err)
	require.EqualValues(t, 1020, mark)

	for i := range int64(intake.SeenCap + 10) { // even ids from 2000
		require.False(t, handle(2000+2*i))
	}
	require.True(t, handle(1019), "trimmed from the finished set: below the lane's floor")
	require.True(t, handle(2000), "trimmed: below the floor")
	require.False(t, handle(2041), "never handled, below the mark, among finished ids still in the set")
	n, err := valkeyClient(t).Do(ctx, valkeyClient(t).B().Zcard().Key(in.Keys().Seen("0")).Build()).AsInt64()
	require.NoError(t, err)
	require.EqualValues(t, intake.SeenCap+1, n, "bounded per lane: SeenCap finished ids and the floor")
}

// ClaimAndAck acks a handled update's job and claims in one call: the
// lane's next update, held back while the first was in flight, is claimed
// by the same call that acks the first; acking it again afterwards (as a
// handler does when a claim carrying acks failed) answers nil.
func TestInboxClaimAndAckAcksThenClaimsTheLanesNext(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()
	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(1), update(2)})
	require.NoError(t, err)

	c, err := in.ClaimAndAck(ctx, time.Minute, 1, nil)
	require.NoError(t, err)
	require.Len(t, c.Updates, 1)
	require.Empty(t, c.Acked)
	first := c.Updates[0]
	require.EqualValues(t, 1, first.ID)
	require.NoError(t, in.MarkHandled(ctx, first))
	ups, _, _, err := in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Empty(t, ups, "update 2 waits while update 1's job is in flight (marked handled, not acked)")
	_, mark, err := in.Mark(ctx, "0")
	require.NoError(t, err)
	require.EqualValues(t, 1, mark, "marked handled before its ack")

	c, err = in.ClaimAndAck(ctx, time.Minute, 1, []intake.Claimed{first})
	require.NoError(t, err)
	require.Equal(t, []error{nil}, c.Acked, "update 1's job acked")
	require.Len(t, c.Updates, 1, "and the lane's next claimed in the same call")
	require.EqualValues(t, 2, c.Updates[0].ID)
	require.NoError(t, in.Ack(ctx, first), "acked already: no error")

	require.NoError(t, in.Finish(ctx, c.Updates[0]))
	bl, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Zero(t, bl.InFlight+bl.Pending, "both jobs gone")
}

// An update too large for the update queue is refused with lanes.ErrInvalid
// before anything is written: no job and no recorded time (which would
// count as an update waiting forever).
func TestInboxRefusesAnOversizedUpdateWritingNothing(t *testing.T) {
	t.Parallel()
	in, _ := newInbox(t)
	ctx := t.Context()
	big := intake.Update{ID: 7, JSON: json.RawMessage(`{"update_id":7,"x":"` + strings.Repeat("a", intake.MaxUpdateBytes) + `"}`)}
	_, err := in.Accept(ctx, []intake.Update{update(6), big})
	require.ErrorIs(t, err, lanes.ErrInvalid)
	n, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "no recorded time")
	bl, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Zero(t, bl.Pending, "no job")
}

// An update recorded again while its job is being handled, after its
// handler marked it handled but before the job's ack, adds no job and
// leaves no recorded time behind (one would count as an update waiting
// forever).
func TestInboxRecordedAgainBeforeItsAckLeavesNothingWaiting(t *testing.T) {
	t.Parallel()
	in, _ := newInbox(t)
	ctx := t.Context()
	_, err := in.Accept(ctx, []intake.Update{update(1)})
	require.NoError(t, err)
	ups, _, _, err := in.Claim(ctx, time.Minute, 1)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.NoError(t, in.MarkHandled(ctx, ups[0]))

	added, err := in.Accept(ctx, []intake.Update{update(1)})
	require.NoError(t, err)
	require.Zero(t, added, "its job is still in flight")
	n, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "no recorded time left behind")

	c, err := in.ClaimAndAck(ctx, time.Minute, 1, ups)
	require.NoError(t, err)
	require.Equal(t, []error{nil}, c.Acked)
	require.Empty(t, c.Updates)
	bl, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Zero(t, bl.Pending+bl.InFlight)
}

// A getUpdates batch recorded again (the offset not moved: a crash or a
// failed offset write) that mixes an update marked handled but not yet
// acked with a new one enqueues only the new one and leaves no recorded
// time behind for the handled one.
func TestInboxRecordedAgainInAMixedBatchLeavesNoTimeBehind(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()
	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(1)})
	require.NoError(t, err)
	c := valkeyClient(t)
	require.NoError(t, c.Do(ctx, c.B().Del().Key(in.Keys().Offset()).Build()).Error())
	ups, _, _, err := in.Claim(ctx, time.Minute, 16)
	require.NoError(t, err)
	require.Len(t, ups, 1)
	require.NoError(t, in.MarkHandled(ctx, ups[0]))

	added, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(1), update(2)})
	require.NoError(t, err)
	require.Equal(t, 1, added, "only update 2 is new")
	n, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "update 2 waits with its time; update 1 left none")

	cl, err := in.ClaimAndAck(ctx, time.Minute, 16, ups)
	require.NoError(t, err)
	require.Len(t, cl.Updates, 1)
	require.NoError(t, in.Finish(ctx, cl.Updates[0]))
	n, err = in.Unhandled(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "no recorded time left behind")
}

// Two records of one update at once (a webhook resend racing the first
// delivery) leave its waiting job with its recorded time, whichever of them
// enqueued it.
func TestInboxConcurrentRecordsKeepTheWaitingUpdatesTime(t *testing.T) {
	t.Parallel()
	in, _ := newInbox(t)
	ctx := t.Context()
	const n = 200
	for i := int64(1); i <= n; i++ {
		errs := make(chan error, 2)
		for range 2 {
			go func() { _, err := in.Accept(ctx, []intake.Update{update(i)}); errs <- err }()
		}
		require.NoError(t, <-errs)
		require.NoError(t, <-errs)
	}
	bl, err := in.Backlog(ctx)
	require.NoError(t, err)
	require.Equal(t, n, bl.Pending)
	un, err := in.Unhandled(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), un, "every waiting update has its recorded time")
}
