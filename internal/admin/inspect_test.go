package admin

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// FindJob finds a job by id in the queue holding it, its payload shown as
// indented JSON; a malformed id is refused with an answer, an unknown one
// found nowhere. PendingJobs lists the lane's jobs (an unknown queue is
// refused); WeightsPage lists a weight set by SetWeight.
func TestFindJobShowsAJobWhereItStands(t *testing.T) {
	t.Parallel()
	ad := newAdmin(t)
	ctx := context.Background()
	m := lanes.NewMinter()
	id := m.New()
	_, err := ad.cfg.Outbound.Enqueue(ctx, tgjob.QueueNotify, []lanes.Item{{Group: "42", ID: id, Payload: []byte(`{"v":1,"chat":42,"text":"hi"}`)}})
	require.NoError(t, err)
	found, err := ad.FindJob(ctx, " "+string(id)+" ")
	require.NoError(t, err)
	require.Len(t, found, 1)
	require.Equal(t, tgjob.QueueNotify, found[0].Queue)
	require.Equal(t, "42", found[0].Group)
	require.Equal(t, lanes.JobPending, found[0].State)
	require.Equal(t, "{\n  \"v\": 1,\n  \"chat\": 42,\n  \"text\": \"hi\"\n}", found[0].Shown)

	_, err = ad.FindJob(ctx, "nope")
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	found, err = ad.FindJob(ctx, string(m.New()))
	require.NoError(t, err)
	require.Empty(t, found)

	pending, err := ad.PendingJobs(ctx, tgjob.QueueNotify, "42", "")
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.Equal(t, id, pending[0].ID)
	_, err = ad.PendingJobs(ctx, "bogus", "42", "")
	require.True(t, errors.As(err, &ie), "%v", err)

	_, err = ad.SetWeight(ctx, WhoConsole, "42", "5")
	require.NoError(t, err)
	ws, next, err := ad.WeightsPage(ctx, "")
	require.NoError(t, err)
	require.Equal(t, []lanes.GroupWeight{{Group: "42", Weight: 5}}, ws)
	require.Empty(t, next)
}
