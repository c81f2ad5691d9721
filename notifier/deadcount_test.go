package notifier_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A broadcast copy dead-lettered where no worker settles it, by its
// chat's DeadLane sweep (a 403 of another copy) or by its lease expiring
// MaxAttempts times inside a claim, is counted failed in its broadcast's
// progress by that same script (the dead tally its enqueue stored): an
// eager broadcast's copy, a lazy one's (which also leaves the lazy window)
// and a paid one's continued free alike, so the progress reaches its total
// with the copy counted exactly once.
func TestACopyDeadLetteredWithoutItsWorkerIsCountedInItsProgress(t *testing.T) {
	t.Parallel()
	type start func(t *testing.T, n *notifier.Notifier, chats []int64, msg notifier.Message) string
	eager := func(t *testing.T, n *notifier.Notifier, chats []int64, msg notifier.Message) string {
		id, err := n.Broadcast(t.Context(), chats, msg)
		require.NoError(t, err)
		return id
	}
	lazy := func(t *testing.T, n *notifier.Notifier, chats []int64, msg notifier.Message) string {
		f, err := n.NewFiller(newListAudience(chats), notifier.FillConfig{})
		require.NoError(t, err)
		id, err := f.Start(t.Context(), msg, notifier.Plan{})
		require.NoError(t, err)
		_, err = f.Fill(t.Context())
		require.NoError(t, err)
		return id
	}
	free := func(t *testing.T, n *notifier.Notifier, chats []int64, msg notifier.Message) string {
		msg.Paid = true
		id := eager(t, n, chats, msg)
		halted, err := n.HaltPaid(t.Context(), id)
		require.NoError(t, err)
		require.True(t, halted)
		moved, err := n.ContinueFree(t.Context(), id, msg)
		require.NoError(t, err)
		require.Equal(t, len(chats), moved)
		return id
	}
	kinds := []struct {
		name  string
		start start
	}{{"eager", eager}, {"lazy", lazy}, {"paid continued free", free}}
	paths := []struct {
		name  string
		swept bool
		code  string
	}{{"swept", true, "forbidden"}, {"lease expired", false, lanes.ReasonLeaseExpired}}
	for _, k := range kinds {
		for _, pth := range paths {
			t.Run(k.name+", "+pth.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				c := valkeytest.Shared(t).Client(t)
				tag := valkeytest.Namespace(t)
				s, err := notifier.NewStore(c, notifier.Limits{}, 1, lanes.WithTag(tag))
				require.NoError(t, err)
				n, err := notifier.New(c, s, notifier.Config{})
				require.NoError(t, err)
				chats := []int64{1, 2, 3}
				id := k.start(t, n, chats, notifier.Message{Text: "hi"})
				require.Equal(t, len(chats), pending(t, n, tgjob.QueueNotify), "every copy waits on the notify queue")
				victim := tgjob.Group(1)
				if pth.swept {
					swept, err := s.Inspector().DeadLane(ctx, tgjob.QueueNotify, victim, "forbidden: blocked", lanes.CountedAs("forbidden"))
					require.NoError(t, err)
					require.Len(t, swept, 1)
				}
				cl, err := s.Claim(ctx, lanes.ClaimRequest{Queues: tgjob.AllQueues(), Lease: time.Minute, Max: 100, Lanes: 10})
				require.NoError(t, err)
				for _, j := range cl.Jobs {
					if j.Group == victim {
						// Its worker stops here: the lease runs out.
						_, err := s.Extend(ctx, j.Lease, time.Millisecond)
						require.NoError(t, err)
						continue
					}
					tally, err := n.SentTally(id, false)
					require.NoError(t, err)
					require.NoError(t, s.Ack(ctx, j.Lease, lanes.Counting(tally)))
				}
				var p notifier.Progress
				require.Eventually(t, func() bool {
					// A claim reclaims the expired lease (one attempt: dead).
					_, err := s.Claim(ctx, lanes.ClaimRequest{Queues: tgjob.AllQueues(), Lease: time.Minute, Max: 1})
					require.NoError(t, err)
					p, err = n.Progress(ctx, id)
					require.NoError(t, err)
					return p.Done()
				}, 10*time.Second, 5*time.Millisecond, "the progress reaches its total")
				require.Equal(t, len(chats)-1, p.Sent)
				require.Equal(t, map[string]int{pth.code: 1}, p.Failed, "the dead copy counted once, under its code")
				out, err := c.Do(ctx, c.B().Zcard().Key("{"+tag+"}:n:bc:"+id+":out").Build()).AsInt64()
				require.NoError(t, err)
				require.Zero(t, out, "no copy left in the lazy window")
			})
		}
	}
}
