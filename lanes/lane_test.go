package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// MoveLane moves every pending job to the target in id order (merging with
// the target's own jobs), then the weight, glimit and pace override; jobs
// in flight stay. DeadLane dead-letters every pending job with the reason.
// Both work in chunks of 1,000.
func TestMoveLaneAndDeadLaneTakeEveryPendingJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("move", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		m := lanes.NewMinter()
		old := enqueueN(t, s, m, "q", "old", 1200)
		target := enqueueN(t, s, m, "q", "new", 3)
		old = append(old, enqueueN(t, s, m, "q", "old", 1300)...)
		require.NoError(t, s.Inspector().SetWeight(ctx, "old", 4))
		require.NoError(t, s.Inspector().SetLaneLimit(ctx, "q", "old", 9))
		require.NoError(t, s.Inspector().SetLanePace(ctx, "old", lanes.Pace{Limit: 1000, Period: time.Second}))
		held := claim(t, s, 4, time.Minute, "q")
		require.Equal(t, "old", held.Jobs[0].Group)
		require.Len(t, held.Jobs, 4)

		n, err := s.Inspector().MoveLane(ctx, "q", "old", "new")
		require.NoError(t, err)
		require.Equal(t, 2496, n)
		want := append(strIDs(old[4:1200]), strIDs(target)...)
		want = append(want, strIDs(old[1200:])...)
		require.Equal(t, want, laneIDs(t, s, "q", "new"), "id order kept")
		require.Empty(t, laneIDs(t, s, "q", "old"))
		w, err := s.Inspector().Weights(ctx)
		require.NoError(t, err)
		require.Equal(t, map[string]int{"new": 4}, w)
		glimit, err := rdo(t, s, "HGETALL", s.Keys().Queue("q", "glimit")).AsStrMap()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"new": "9"}, glimit)
		pace, err := rdo(t, s, "HGETALL", s.Keys().Shared("pacecfg")).AsStrMap()
		require.NoError(t, err)
		require.Equal(t, map[string]string{"new": "1000:1000"}, pace)
		require.Equal(t, 4, inflight(t, s, "q", "old"), "in flight untouched")

		c := claim(t, s, 10, time.Minute, "q")
		require.Equal(t, "new", c.Jobs[0].Group)
		require.Equal(t, want[:4], strIDs(jobIDs(c.Jobs)), "weight 4 served in order")
		require.NoError(t, s.Release(ctx, held.Jobs[0].Lease))
		require.Equal(t, []string{string(held.Jobs[0].ID)}, laneIDs(t, s, "q", "old"), "a released job goes to its own lane")
	})

	t.Run("dead", func(t *testing.T) {
		t.Parallel()
		s := newStore(t)
		m := lanes.NewMinter()
		ids := enqueueN(t, s, m, "q", "chat", 1500)
		other := enqueueN(t, s, m, "q", "x", 1)
		j := claimOne(t, s, time.Minute, "q")
		require.Equal(t, ids[0], j.ID)
		dead, err := s.Inspector().DeadLane(ctx, "q", "chat", "bot blocked")
		require.NoError(t, err)
		require.Len(t, dead, 1499)
		st, err := s.Inspector().Stats(ctx, "q", 10)
		require.NoError(t, err)
		require.Equal(t, 1, st.Pending)
		require.Equal(t, 1499, st.Dead)
		require.Equal(t, 1, st.InFlight)
		dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 2000})
		require.NoError(t, err)
		require.Len(t, dl, 1499)
		for _, d := range dl {
			require.Equal(t, "bot blocked", d.Reason)
			require.Equal(t, "chat", d.Group)
		}
		c := claimOne(t, s, time.Minute, "q")
		require.Equal(t, other[0], c.ID, "the dead lane is gone from the rotation")
		require.Empty(t, claim(t, s, 10, time.Minute, "q").Jobs)
		require.NoError(t, s.Ack(ctx, j.Lease))
		dead, err = s.Inspector().DeadLane(ctx, "q", "nobody", "r")
		require.NoError(t, err)
		require.Empty(t, dead)
	})
}
