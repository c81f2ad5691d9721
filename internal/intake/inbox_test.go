package intake_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
)

// Record appends only updates at or above the stored offset, advances the
// offset, and writes nothing without the lease; Finish pops the head,
// raises the handled mark and drops the journal.
func TestInboxRecordsOnceAndFinishesUnderTheLease(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()

	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(1)})
	require.ErrorIs(t, err, intake.ErrLeaseLost, "no lease held: nothing written")
	off, err := in.Offset(ctx)
	require.NoError(t, err)
	require.Zero(t, off)

	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	added, next, err := in.Record(ctx, lease.Token(), []intake.Update{update(1), update(2)})
	require.NoError(t, err)
	require.Equal(t, 2, added)
	require.EqualValues(t, 3, next)
	added, _, err = in.Record(ctx, lease.Token(), []intake.Update{update(2), update(3)})
	require.NoError(t, err)
	require.Equal(t, 1, added, "update 2 was recorded already")
	depth, err := in.Depth(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, depth)

	head, ok, err := in.Head(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 1, head.ID)
	require.JSONEq(t, string(update(1).JSON), string(head.JSON))

	require.NoError(t, in.SaveJournal(ctx, 1, "pre", "-", "out", "[]"))
	j, err := in.LoadJournal(ctx, 1)
	require.NoError(t, err)
	require.Equal(t, intake.Journal{Exists: true, Pre: "-", Out: "[]"}, j)

	require.NoError(t, in.Finish(ctx, lease.Token(), 1))
	handled, err := in.Handled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 1, handled)
	j, err = in.LoadJournal(ctx, 1)
	require.NoError(t, err)
	require.False(t, j.Exists, "the journal is dropped once the update is handled")
	head, _, err = in.Head(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, head.ID)

	lease.Release(ctx)
	require.ErrorIs(t, in.Finish(ctx, lease.Token(), 2), intake.ErrLeaseLost, "released: the inbox is fenced")
	holder, polled, err := in.PollerState(ctx)
	require.NoError(t, err)
	require.Empty(t, holder)
	require.Empty(t, polled)
}

// Rebase follows a server whose update_id sequence went down: it writes a
// marker and the lower batch and sets the offset past it, atomically and
// only when the whole batch is below the offset; StartEpoch pops the marker
// and resets the handled mark, so the lower id is not taken for one handled
// already.
func TestInboxRebaseStartsAnEpochBelowTheOffset(t *testing.T) {
	t.Parallel()
	in, lease := newInbox(t)
	ctx := t.Context()
	require.NoError(t, lease.Acquire(ctx, func(bool) {}))
	_, _, err := in.Record(ctx, lease.Token(), []intake.Update{update(900000000)})
	require.NoError(t, err)
	require.NoError(t, in.Finish(ctx, lease.Token(), 900000000))

	_, _, err = in.Rebase(ctx, lease.Token(), []intake.Update{update(120000000), update(900000001)})
	require.Error(t, err, "a batch not entirely below the offset is no reset")
	off, err := in.Offset(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 900000001, off, "nothing written")

	next, epoch, err := in.Rebase(ctx, lease.Token(), []intake.Update{update(120000000)})
	require.NoError(t, err)
	require.EqualValues(t, 120000001, next)
	require.EqualValues(t, 1, epoch)
	head, ok, err := in.Head(ctx)
	require.NoError(t, err)
	require.True(t, ok)
	require.EqualValues(t, 1, head.Rebase, "the marker comes first")

	handled, e, err := in.Mark(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 900000000, handled)
	require.Zero(t, e)
	require.NoError(t, in.StartEpoch(ctx, lease.Token(), 1))
	handled, e, err = in.Mark(ctx)
	require.NoError(t, err)
	require.EqualValues(t, -1, handled, "the handled mark starts afresh")
	require.EqualValues(t, 1, e)
	head, _, err = in.Head(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 120000000, head.ID)
	require.Zero(t, head.Rebase)

	lease.Release(ctx)
	_, _, err = in.Rebase(ctx, lease.Token(), []intake.Update{update(5)})
	require.ErrorIs(t, err, intake.ErrLeaseLost, "released: the inbox is fenced")
}
