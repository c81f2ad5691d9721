package handling_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/handling"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// wait bounds every wait of a test.
const wait = 20 * time.Second

// rig is an update queue and a notifier on the shared Valkey, in a
// namespace of the test's own, and the handlers' metrics on a registry of
// their own.
type rig struct {
	inbox    *intake.Inbox
	notifier *notifier.Notifier
	reg      *prometheus.Registry
	m        *handling.Metrics
	logs     *testkit.LogBuffer
}

func newRig(t *testing.T) *rig {
	t.Helper()
	return newRigWith(t, notifier.DefaultLimits())
}

// newRigWith is newRig with the notifier's limits.
func newRigWith(t *testing.T, limits notifier.Limits) *rig {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	tag := valkeytest.Namespace(t)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(tag))...)
	require.NoError(t, err)
	out, err := notifier.NewStore(c, limits, 0, lanes.WithTag(tag))
	require.NoError(t, err)
	n, err := notifier.New(c, out, notifier.Config{})
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	m, err := handling.NewMetrics(reg)
	require.NoError(t, err)
	return &rig{inbox: intake.NewInbox(c, upd, tag), notifier: n, reg: reg, m: m, logs: &testkit.LogBuffer{}}
}

// start runs a Handler of two loops over mux (under the handlers'
// Recover) until the test ends.
func (r *rig) start(t *testing.T, mux update.Handler) {
	t.Helper()
	m := update.NewMux()
	m.Use(r.m.Recover(r.logs.Logger()))
	m.Default(mux)
	h, err := handling.New(handling.Config{Inbox: r.inbox, Notifier: r.notifier, Mux: m, Metrics: r.m,
		Handlers: 2, Lease: 2 * time.Second, Drain: time.Second, Log: r.logs.Logger()})
	require.NoError(t, err)
	require.Equal(t, "handlers", h.Name())
	testkit.RunInBackground(t, "handlers", wait, func(ctx context.Context) error { return h.Run(ctx, func() {}) })
}

// text is a private text message of chat as its update id's JSON.
func text(id, chat int64, s string) intake.Update {
	return intake.Update{ID: id, JSON: fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":1,"chat":{"id":%d,"type":"private"},"from":{"id":%d,"is_bot":false,"first_name":"U"},"text":%q}}`,
		id, id, chat, chat, s)}
}

// accept records ups on the update queue.
func (r *rig) accept(t *testing.T, ups ...intake.Update) {
	t.Helper()
	_, err := r.inbox.Accept(context.Background(), ups)
	require.NoError(t, err)
}

// settled waits until no recorded update is left unhandled and nothing
// waits on or runs from the update queue.
func (r *rig) settled(t *testing.T) {
	t.Helper()
	require.Eventually(t, func() bool {
		n, err := r.inbox.Unhandled(context.Background())
		if err != nil || n != 0 {
			return false
		}
		bl, err := r.inbox.Backlog(context.Background())
		return err == nil && bl.Pending+bl.InFlight == 0
	}, wait, 10*time.Millisecond)
}

// replies is how many replies wait on chat's reply lane.
func (r *rig) replies(t *testing.T, chat int64) int {
	t.Helper()
	ls, err := r.notifier.Store().Inspector().Lanes(context.Background(), tgjob.QueueReply, tgjob.Group(chat))
	require.NoError(t, err)
	if len(ls) == 0 {
		return 0
	}
	return ls[0].Depth
}

func TestConfigValidate(t *testing.T) {
	r := newRig(t)
	ok := handling.Config{Inbox: r.inbox, Notifier: r.notifier, Mux: update.NewMux(), Metrics: r.m, Handlers: 1,
		Lease: time.Second, Drain: time.Second, Log: r.logs.Logger()}
	require.NoError(t, ok.Validate())
	for _, tc := range []struct {
		name string
		edit func(*handling.Config)
		want string
	}{
		{"no inbox", func(c *handling.Config) { c.Inbox = nil }, "required"},
		{"no notifier", func(c *handling.Config) { c.Notifier = nil }, "required"},
		{"no mux", func(c *handling.Config) { c.Mux = nil }, "required"},
		{"no metrics", func(c *handling.Config) { c.Metrics = nil }, "required"},
		{"no log", func(c *handling.Config) { c.Log = nil }, "required"},
		{"no handlers", func(c *handling.Config) { c.Handlers = 0 }, "Handlers 0"},
		{"no lease", func(c *handling.Config) { c.Lease = 0 }, "Lease 0s"},
		{"negative drain", func(c *handling.Config) { c.Drain = -time.Second }, "Drain -1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			require.ErrorContains(t, c.Validate(), tc.want)
			_, err := handling.New(c)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Each update's replies are queued once, in order, and the update is
// marked handled; recorded again after that, it is skipped as a duplicate
// and queues nothing.
func TestRepliesQueuedAndUpdateMarkedHandled(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const chat = 701
	r.start(t, update.HandlerFunc(func(_ context.Context, q *update.Request) update.Outcome {
		return update.Outcome{Replies: []update.Reply{{ChatID: chat, Text: "1: " + q.Update.Message.Text}, {ChatID: chat, Text: "2"}}}
	}))
	r.accept(t, text(1, chat, "a"), text(2, chat, "b"))
	r.settled(t)
	_, mark, err := r.inbox.Mark(context.Background(), strconv.Itoa(chat))
	require.NoError(t, err)
	require.EqualValues(t, 2, mark, "the chat's handled mark is its last update")
	require.Equal(t, 4, r.replies(t, chat), "two replies per update")
	require.InDelta(t, 2, handled(t, r.reg, "ok"), 0)

	r.accept(t, text(2, chat, "b"))
	require.Eventually(t, func() bool { return handled(t, r.reg, "duplicate") == 1 }, wait, 10*time.Millisecond)
	r.settled(t)
	require.Equal(t, 4, r.replies(t, chat), "a duplicate queues nothing")
	require.Contains(t, r.logs.String(), "update already handled; skipped")
}

// A handler that always panics: the update is tried the queue's
// MaxAttempts times, then dead-lettered with the panic as its reason; each
// panic is counted and logged, and the chat's next update is handled.
func TestPanickingUpdateIsRetriedThenDeadLettered(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	const chat = 702
	r.start(t, update.HandlerFunc(func(_ context.Context, q *update.Request) update.Outcome {
		if q.Update.Message.Text == "boom" {
			panic("boom handler")
		}
		return update.Outcome{Replies: []update.Reply{{ChatID: chat, Text: "ok"}}}
	}))
	r.accept(t, text(10, chat, "boom"), text(11, chat, "next"))
	r.settled(t)
	dead, err := r.inbox.Store().Inspector().DeadLetters(context.Background(), intake.QueueName, lanes.DeadQuery{Newest: 10})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Equal(t, "panic: boom handler", dead[0].Reason)
	require.InDelta(t, intake.DefaultMaxAttempts, handled(t, r.reg, "panic"), 0)
	require.Equal(t, 1, r.replies(t, chat), "the chat's next update is handled")
	require.Equal(t, float64(intake.DefaultMaxAttempts), counter(t, r.reg, "codemojex_handler_panics_total"))
	require.Equal(t, float64(1), counter(t, r.reg, "codemojex_updates_dead_lettered_total"))
	require.Contains(t, r.logs.String(), "update failed too often; dead-lettered (see /dlq)")
}

// An update that does not decode is dead-lettered at once, counted as
// malformed.
func TestUndecodableUpdateIsDeadLetteredAtOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t)
	r.start(t, update.HandlerFunc(func(context.Context, *update.Request) update.Outcome { return update.Outcome{} }))
	r.accept(t, intake.Update{ID: 20, JSON: []byte(`{"update_id":20,"message":{"chat":{"id":"x"}}}`)})
	r.settled(t)
	dead, err := r.inbox.Store().Inspector().DeadLetters(context.Background(), intake.QueueName, lanes.DeadQuery{Newest: 10})
	require.NoError(t, err)
	require.Len(t, dead, 1)
	require.Contains(t, dead[0].Reason, "update 20 does not decode")
	require.InDelta(t, 1, handled(t, r.reg, "malformed"), 0)
	require.Contains(t, r.logs.String(), "update cannot be handled; dead-lettered")
}

// counter reads the counter name from reg: its series whose labels
// include every name=value pair of labels (0 when there is none).
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					found = found || (lp.GetName() == labels[i] && lp.GetValue() == labels[i+1])
				}
				if !found {
					continue series
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

// handled is codemojex_updates_handled_total{result}.
func handled(t *testing.T, reg *prometheus.Registry, result string) float64 {
	t.Helper()
	return counter(t, reg, "codemojex_updates_handled_total", "result", result)
}

// An update whose reply finds its chat's reply lane full (REPLY_LANE_DEPTH
// 3) loses no reply: it waits, no attempt used, its chat's later update
// behind it, and is handled again once the lane has room; the reply of it
// that was queued before the refusal is not queued twice. Two replies per
// update: update 1 queues both, update 2 one (the lane is full at its
// second), update 3 waits behind it; 3 replies sent drain the lane, and
// then the lane holds the last 3 of the 6.
func TestAnUpdateWhoseReplyLaneIsFullWaitsAndLosesNoReply(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	limits := notifier.DefaultLimits()
	limits.ReplyLaneDepth = 3
	r := newRigWith(t, limits)
	const chat = 702
	r.start(t, update.HandlerFunc(func(_ context.Context, q *update.Request) update.Outcome {
		return update.Outcome{Replies: []update.Reply{{ChatID: chat, Text: "1: " + q.Update.Message.Text}, {ChatID: chat, Text: "2: " + q.Update.Message.Text}}}
	}))
	r.accept(t, text(1, chat, "a"), text(2, chat, "b"), text(3, chat, "c"))
	require.Eventually(t, func() bool { return handled(t, r.reg, "lane_full") >= 2 }, wait, 10*time.Millisecond,
		"update 2 handled again while the lane is full")
	require.Eventually(t, func() bool {
		ls, err := r.inbox.Store().Inspector().Lanes(ctx, intake.QueueName, strconv.Itoa(chat))
		require.NoError(t, err)
		return len(ls) == 1 && !ls[0].ParkedUntil.IsZero()
	}, wait, 5*time.Millisecond, "the chat's updates wait parked, not handed out again at once")
	require.Equal(t, 3, r.replies(t, chat))
	n, err := r.inbox.Unhandled(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 2, n, "updates 2 and 3 wait")
	require.Zero(t, handled(t, r.reg, "retry"), "no attempt used")
	require.Contains(t, r.logs.String(), "update waits: a chat's reply lane is full (REPLY_LANE_DEPTH); handled again later")

	store := r.notifier.Store()
	var sent []string
	require.Eventually(t, func() bool {
		c, err := store.Claim(ctx, lanes.ClaimRequest{Queues: []string{tgjob.QueueReply}, Lease: time.Minute, Max: 3})
		require.NoError(t, err)
		for _, j := range c.Jobs {
			var p tgjob.Job
			require.NoError(t, json.Unmarshal(j.Payload, &p))
			sent = append(sent, p.Text)
			require.NoError(t, store.Ack(ctx, j.Lease))
		}
		return len(sent) >= 3
	}, wait, 50*time.Millisecond, "the chat's pace lets 3 out")
	r.settled(t)
	require.Equal(t, []string{"1: a", "2: a", "1: b"}, sent)
	require.Equal(t, 3, r.replies(t, chat), "2: b, 1: c, 2: c: none lost, none twice")
	require.InDelta(t, 3, handled(t, r.reg, "ok"), 0)
}
