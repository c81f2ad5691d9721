package floodnotice_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/floodnotice"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

func newNotifier(t *testing.T) *notifier.Notifier {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	s, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(valkeytest.Namespace(t)))
	require.NoError(t, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(t, err)
	return n
}

func TestNewRequiresItsParts(t *testing.T) {
	n := newNotifier(t)
	log := (&testkit.LogBuffer{}).Logger()
	for _, tc := range []struct {
		name string
		cfg  floodnotice.Config
	}{
		{"no notifier", floodnotice.Config{Registerer: prometheus.NewRegistry(), Log: log}},
		{"no registry", floodnotice.Config{Notifier: n, Log: log}},
		{"no log", floodnotice.Config{Notifier: n, Registerer: prometheus.NewRegistry()}},
		{"a limiter without a client", floodnotice.Config{Notifier: n, Registerer: prometheus.NewRegistry(), Log: log,
			Limiter: flood.New("t", flood.DefaultLimits(), nil)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := floodnotice.New(tc.cfg)
			require.ErrorContains(t, err, "required")
		})
	}
}

// Each drop is counted by reason; a drop that took its chat's notice flag
// queues the notice as a reply on the chat's lane; a dropped tap is
// answered with the toast, and Run, stopped, waits for the toasts being
// answered. Without limits the limited-chats gauge reads 0.
func TestDropsCountedNoticeQueuedTapToasted(t *testing.T) {
	n := newNotifier(t)
	reg := prometheus.NewRegistry()
	logs := &testkit.LogBuffer{}
	release := make(chan struct{})
	var (
		mu      sync.Mutex
		answers []string
	)
	fn, err := floodnotice.New(floodnotice.Config{Notifier: n, Registerer: reg, Log: logs.Logger(),
		Answer: func(_ context.Context, id, text string) {
			<-release
			mu.Lock()
			answers = append(answers, id+" "+text)
			mu.Unlock()
		}})
	require.NoError(t, err)
	require.Nil(t, fn.Limiter())
	require.Equal(t, "flood notices", fn.Name())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- fn.Run(ctx, func() {}) }()

	const chat = 881
	fn.OnDrops(context.Background(), []flood.Drop{
		{UpdateID: 1, Subject: flood.Subject{User: chat, Chat: chat, Kind: flood.Message},
			Result: flood.Result{Outcome: flood.Dropped, Reason: flood.UserMessages, Notice: true}},
		{UpdateID: 2, Subject: flood.Subject{User: chat, Chat: chat, Kind: flood.Message},
			Result: flood.Result{Outcome: flood.Dropped, Reason: flood.UserMessages}},
		{UpdateID: 3, Subject: flood.Subject{User: chat, Chat: chat, Kind: flood.Tap, QueryID: "q3"},
			Result: flood.Result{Outcome: flood.Dropped, Reason: flood.UserTaps}},
	})
	ls, err := n.Store().Inspector().Lanes(context.Background(), tgjob.QueueReply, tgjob.Group(chat))
	require.NoError(t, err)
	require.Len(t, ls, 1)
	require.Equal(t, 1, ls[0].Depth, "one notice for the chat")
	require.Contains(t, logs.String(), "chat over the intake limit; its excess updates are dropped")
	require.Equal(t, map[string]float64{"user_messages": 2, "user_taps": 1, "chat_messages": 0, "chat_taps": 0},
		series(t, reg, "codemojex_flood_dropped_total", "reason"))
	require.Equal(t, map[string]float64{"queued": 1}, series(t, reg, "codemojex_flood_notices_total", "result"))
	require.Equal(t, map[string]float64{"": 0}, series(t, reg, "codemojex_flood_limited_chats", ""))

	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while a toast was being answered")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done)
	require.Equal(t, []string{"q3 " + flood.ToastText}, answers)
}

// series reads metric name from reg by the value of its label (""
// without one): counters and gauges.
func series(t *testing.T, reg *prometheus.Registry, name, label string) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	out := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == label {
					key = lp.GetValue()
				}
			}
			out[key] = m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return out
}
