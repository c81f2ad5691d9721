package lanes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// Issue #3, test 7: after a run with a global rate, lane pacing (default,
// rule and override), pace parks, a 429 park, a delayed retry, a dead
// letter, priority claims over two queues, a pause and wake-ups, every key
// of the store is under its tag and CLUSTER KEYSLOT of each equals the
// tag's slot (on a real cluster node, through a cluster client).
func TestDeliveryKeysShareOneSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := clusterClient(t)
	const tag = "deliv.keys"
	s, err := lanes.New(c, lanes.WithTag(tag),
		lanes.WithGlobalRate(1000, time.Minute),
		lanes.WithLanePace(lanes.Pace{Limit: 2, Period: time.Minute}, lanes.PaceRule{Prefix: "-", Pace: lanes.Pace{Limit: 1, Period: time.Minute}}),
		lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true}))
	require.NoError(t, err)
	require.NoError(t, s.Inspector().SetLanePace(ctx, "7", lanes.Pace{Limit: 3, Period: time.Minute}))
	w := startClaimLoop(t, s, lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 5}, func(j lanes.Job) error {
		switch {
		case j.Group == "-3" && j.Attempts == 0:
			_, err := s.Nack(ctx, j.Lease, time.Minute, "retry later") // delayed set
			return err
		case j.Group == "-4":
			return s.Dead(ctx, j.Lease, "blocked")
		case j.Group == "5" && j.Queue == "reply":
			if _, err := s.Inspector().Park(ctx, j.Queue, j.Group, time.Hour); err != nil { // a 429
				return err
			}
			return s.Release(ctx, j.Lease)
		}
		return s.Ack(ctx, j.Lease)
	})
	m := lanes.NewMinter()
	var items []lanes.Item
	for _, g := range []string{"-1", "-2", "-3", "-4", "5", "6", "7"} {
		for i := 0; i < 4; i++ {
			items = append(items, lanes.Item{Group: g, ID: m.New(), Payload: []byte(g)})
		}
	}
	_, err = s.EnqueueBatch(ctx, "notify", items)
	require.NoError(t, err)
	for _, g := range []string{"5", "6", "7"} {
		_, err = s.Enqueue(ctx, "reply", g, m.New(), []byte("re"))
		require.NoError(t, err)
	}
	// Replies first (5 is 429'd: parked and released), then the broadcast:
	// "-N" lanes 1 job each (rule pace 1), "5" and "6" 1 more (default pace
	// 2, shared with their reply), "7" 2 more (override 3). Then every lane
	// with work is parked (pace or 429) or its job delayed.
	for n := 0; n < 3+4+1+1+2; n++ {
		w.Next(t, 5*time.Second)
	}
	select {
	case j := <-w.Jobs:
		t.Fatalf("unexpected job %s of lane %s", j.ID, j.Group)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, s.Inspector().Pause(ctx, time.Minute))

	keys, err := valkeytest.Keys(ctx, c, "*")
	require.NoError(t, err)
	ks := s.Keys()
	want := slotOf(t, c, ks.Tag())
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, ks.Tag()+":"), "key %q outside the store's tag", k)
		require.Equal(t, want, slotOf(t, c, k), "key %q", k)
	}
	for _, prefix := range []string{ks.Rate(), ks.Pause(), ks.Shared("pacecfg"), ks.Pace("-1"), ks.Pace("7"),
		ks.Queue("notify", "parked"), ks.Queue("reply", "parked"), ks.Queue("notify", "delayed"), ks.Queue("notify", "dead"),
		ks.Job("notify", ""), ks.Lane("notify", ""), ks.Lane("reply", "5")} {
		found := false
		for _, k := range keys {
			found = found || strings.HasPrefix(k, prefix)
		}
		require.True(t, found, "no %s key after the run (keys: %v)", prefix, keys)
	}
	c2, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c2.Jobs)
	require.Greater(t, c2.RetryIn, 59*time.Second, "paused")
	require.NoError(t, s.Inspector().Resume(ctx))
}
