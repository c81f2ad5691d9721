package notifier_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// StoreOptions maps each limit onto the store's budgets: BudgetUse reports
// each queue's budget (its own, else the store's global rate, else none),
// every window stretched by Slack. Source of the figures: Limits' doc.
func TestStoreOptionsFromLimits(t *testing.T) {
	t.Parallel()
	const w = time.Second + 10*time.Millisecond
	type budgets struct{ reply, paid, notify lanes.Budget }
	for _, tc := range []struct {
		name   string
		limits notifier.Limits
		want   budgets
	}{
		{"default: one global rate over every queue but paid", notifier.DefaultLimits(),
			budgets{lanes.Budget{Limit: 30, Window: w, Rate: 30}, lanes.Budget{}, lanes.Budget{Limit: 30, Window: w, Rate: 30}}},
		{"two budgets and a paid one", notifier.Limits{GlobalPerSecond: 30, ReplyPerSecond: 100, PaidPerSecond: 1000, Slack: 10 * time.Millisecond},
			budgets{lanes.Budget{Limit: 100, Window: w, Rate: 100}, lanes.Budget{Limit: 1000, Window: w, Rate: 1000}, lanes.Budget{Limit: 30, Window: w, Rate: 30}}},
		{"replies' budget alone, no slack", notifier.Limits{ReplyPerSecond: 100},
			budgets{reply: lanes.Budget{Limit: 100, Window: time.Second, Rate: 100}}},
		{"negative slack is none", notifier.Limits{GlobalPerSecond: 30, Slack: -time.Second},
			budgets{lanes.Budget{Limit: 30, Window: time.Second, Rate: 30}, lanes.Budget{}, lanes.Budget{Limit: 30, Window: time.Second, Rate: 30}}},
		{"zero limits: no budget", notifier.Limits{}, budgets{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := valkeytest.Shared(t).Client(t)
			s, err := lanes.New(c, append(tc.limits.StoreOptions(0), lanes.WithTag(valkeytest.Namespace(t)))...)
			require.NoError(t, err)
			var got budgets
			for q, b := range map[string]*lanes.Budget{tgjob.QueueReply: &got.reply, tgjob.QueuePaid: &got.paid, tgjob.QueueNotify: &got.notify} {
				*b, err = s.Inspector().BudgetUse(t.Context(), q)
				require.NoError(t, err, q)
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// The lanes' paces follow the limits: a private chat gets PrivatePerSecond
// sends, a group (chat id < 0) GroupPerMinute, then each waits for its own
// window while the global budget (30/s) still has room.
func TestStoreOptionsPaceChats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		chat  string
		sends int           // what the chat gets in one window of its pace
		least time.Duration // RetryIn then is over this (a group waits longer than the global window)
		wait  time.Duration // and at most this plus DefaultSlack
	}{
		{"private chat: 1/s", "7", 1, 0, time.Second},
		{"group: 20/min", "-7", 20, 30 * time.Second, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			c := valkeytest.Shared(t).Client(t)
			s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(valkeytest.Namespace(t)))
			require.NoError(t, err)
			m := lanes.NewMinter()
			items := make([]lanes.Item, tc.sends+2)
			for i := range items {
				items[i] = lanes.Item{Group: tc.chat, ID: m.New(), Payload: []byte("x")}
			}
			_, err = s.Enqueue(ctx, tgjob.QueueNotify, items)
			require.NoError(t, err)
			const lease = time.Minute
			req := lanes.ClaimRequest{Queues: []string{tgjob.QueueNotify}, Lease: lease, Max: 10}
			var at []int64 // each claim's server time, ms
			period := (tc.wait + notifier.DefaultSlack).Milliseconds()
			for len(at) < len(items) {
				cl, err := s.Claim(ctx, req)
				require.NoError(t, err)
				if len(cl.Jobs) == 0 {
					// The lane waits for its own pace's window (1 s or 1 min,
					// plus DefaultSlack): until one window after the oldest
					// send of it (acked after its claim), from this claim
					// (before now).
					tm, err := c.Do(ctx, c.B().Time().Build()).AsStrSlice()
					require.NoError(t, err)
					require.Len(t, tm, 2)
					sec, err1 := strconv.ParseInt(tm[0], 10, 64)
					usec, err2 := strconv.ParseInt(tm[1], 10, 64)
					require.NoError(t, errors.Join(err1, err2))
					now := time.UnixMicro(sec*1_000_000 + usec)
					require.GreaterOrEqual(t, len(at), tc.sends)
					oldest := at[len(at)-tc.sends]
					require.GreaterOrEqual(t, cl.RetryIn.Milliseconds(), oldest+period-now.UnixMilli())
					require.Greater(t, cl.RetryIn, tc.least)
					require.LessOrEqual(t, cl.RetryIn, tc.wait+notifier.DefaultSlack)
					break
				}
				req.Ack = nil
				for _, j := range cl.Jobs {
					req.Ack = append(req.Ack, j.Lease)
					at = append(at, j.Deadline.UnixMilli()-lease.Milliseconds())
				}
			}
			// The chat gets its sends at once, and never more in one window
			// of its pace (a host slow enough to outlast the window gets
			// more claims, each in a window of its own).
			require.GreaterOrEqual(t, len(at), tc.sends)
			for i := tc.sends; i < len(at); i++ {
				require.GreaterOrEqual(t, at[i]-at[i-tc.sends], period, "send %d within one pace window of send %d", i, i-tc.sends)
			}
		})
	}
}

// maxAttempts is the attempts before a failing message is dead-lettered on
// every queue: the argument, or DefaultMaxAttempts for 0.
func TestStoreOptionsMaxAttempts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ arg, want int }{{3, 3}, {0, notifier.DefaultMaxAttempts}} {
		for _, q := range []string{tgjob.QueueReply, tgjob.QueuePaid, tgjob.QueueNotify} {
			t.Run(fmt.Sprintf("%s/%d", q, tc.arg), func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				c := valkeytest.Shared(t).Client(t)
				s, err := lanes.New(c, append(notifier.Limits{}.StoreOptions(tc.arg), lanes.WithTag(valkeytest.Namespace(t)))...)
				require.NoError(t, err)
				_, err = s.Enqueue(ctx, q, []lanes.Item{{Group: "7", ID: lanes.NewMinter().New(), Payload: []byte("x")}})
				require.NoError(t, err)
				for attempt := 1; ; attempt++ {
					cl, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{q}, Lease: time.Minute, Max: 1})
					require.NoError(t, err)
					require.Len(t, cl.Jobs, 1, "attempt %d", attempt)
					out, err := s.Nack(ctx, cl.Jobs[0].Lease, 0, "failed")
					require.NoError(t, err)
					if out == lanes.DeadLettered {
						require.Equal(t, tc.want, attempt, "dead-lettered after attempt %d", attempt)
						return
					}
					require.Less(t, attempt, tc.want, "still %s after attempt %d", out, attempt)
				}
			})
		}
	}
}

// With two budgets (ReplyPerSecond > 0) the reply lanes keep their depth
// bound (ReplyLaneDepth): the third reply queued to one chat is refused
// with lanes.ErrLaneFull, a notification to it is not.
func TestTwoBudgetsKeepTheReplyLaneDepth(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	l := notifier.Limits{GlobalPerSecond: 30, ReplyPerSecond: 100, ReplyLaneDepth: 2}
	store, err := notifier.NewStore(c, l, 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	for i := range 2 {
		_, err := n.Notify(ctx, 7, notifier.Message{Text: fmt.Sprintf("reply %d", i), Class: notifier.Reply})
		require.NoError(t, err)
	}
	_, err = n.Notify(ctx, 7, notifier.Message{Text: "reply 2", Class: notifier.Reply})
	require.ErrorIs(t, err, lanes.ErrLaneFull)
	_, err = n.Notify(ctx, 7, notifier.Message{Text: "news", Class: notifier.Notification})
	require.NoError(t, err)
}

// With one budget for replies and bulk (ReplyPerSecond 0), replies come
// first but leave bulk its BulkShare: 20 replies and 20 notifications to 40
// chats, a budget of 10 per window, and a worker's claims (["reply",
// "paid", "notify"], one job each) take 8 replies, then 2 notifications,
// then nothing until the window refills (chaos seed 7: a broadcast starved
// for minutes behind replies). The window is stretched to a minute by
// Slack, so nothing refills during the test.
func TestRepliesLeaveBulkItsShareOfOneBudget(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Shared(t).Client(t)
	store, err := notifier.NewStore(c, notifier.Limits{GlobalPerSecond: 10, Slack: time.Minute}, 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	for i := range 20 {
		_, err := n.Notify(ctx, int64(1000+i), notifier.Message{Text: "reply", Class: notifier.Reply})
		require.NoError(t, err)
		_, err = n.Notify(ctx, int64(2000+i), notifier.Message{Text: "news", Class: notifier.Notification})
		require.NoError(t, err)
	}
	req := lanes.ClaimRequest{Queues: []string{tgjob.QueueReply, tgjob.QueuePaid, tgjob.QueueNotify}, Lease: time.Minute, Max: 1}
	var got []string
	for range 20 {
		cl, err := store.Claim(ctx, req)
		require.NoError(t, err)
		if len(cl.Jobs) == 0 {
			break
		}
		for _, j := range cl.Jobs {
			got = append(got, j.Queue)
			require.NoError(t, store.Ack(ctx, j.Lease))
		}
	}
	r, b := tgjob.QueueReply, tgjob.QueueNotify
	require.Equal(t, []string{r, r, r, r, r, r, r, r, b, b}, got, "one window's claims")
}
