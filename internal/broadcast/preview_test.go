package broadcast

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A preview is decided once: of ten concurrent Sends exactly one decides,
// the rest see it decided; a Cancel after a Send (or the reverse) changes
// nothing; a tap after PreviewLifetime (on the app's clock) expires it for
// good; an unknown id is reported as such.
func TestPreviewIsDecidedOnce(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	ctx := context.Background()
	s := newPreviews(c, NewKeys(valkeytest.Namespace(t)))
	t0 := time.UnixMilli(1_800_000_000_000)
	mk := func() string {
		id := newPreviewID()
		require.True(t, validPreviewID(id), id)
		require.NoError(t, s.Create(ctx, preview{ID: id, Text: "hi", Chat: adminID, Admin: adminID, Chats: 3, At: t0}))
		return id
	}

	id := mk()
	p, ok, err := s.Get(ctx, id)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, preview{ID: id, Text: "hi", Chat: adminID, Admin: adminID, Chats: 3, At: t0, State: previewPending}, p)
	var (
		mu   sync.Mutex
		outs = map[decision]int{}
		wg   sync.WaitGroup
	)
	for range 10 {
		wg.Go(func() {
			d, st, err := s.Decide(ctx, id, previewSent, t0.Add(time.Minute))
			require.NoError(t, err)
			require.Equal(t, previewSent, st)
			mu.Lock()
			outs[d]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[decision]int{decided: 1, decidedBefore: 9}, outs, "one Send decides")
	d, st, err := s.Decide(ctx, id, previewCancelled, t0.Add(2*time.Minute))
	require.NoError(t, err)
	require.Equal(t, []string{string(decidedBefore), previewSent}, []string{string(d), st}, "a Cancel after the Send changes nothing")

	id = mk()
	d, st, err = s.Decide(ctx, id, previewCancelled, t0.Add(PreviewLifetime))
	require.NoError(t, err)
	require.Equal(t, []string{string(decided), previewCancelled}, []string{string(d), st}, "at exactly the lifetime it is still in time")
	d, st, err = s.Decide(ctx, id, previewSent, t0)
	require.NoError(t, err)
	require.Equal(t, []string{string(decidedBefore), previewCancelled}, []string{string(d), st}, "a Send after the Cancel changes nothing")

	id = mk()
	d, st, err = s.Decide(ctx, id, previewSent, t0.Add(PreviewLifetime+time.Millisecond))
	require.NoError(t, err)
	require.Equal(t, []string{string(decisionLate), previewExpired}, []string{string(d), st})
	d, st, err = s.Decide(ctx, id, previewSent, t0)
	require.NoError(t, err)
	require.Equal(t, []string{string(decidedBefore), previewExpired}, []string{string(d), st}, "expired stays expired")

	d, _, err = s.Decide(ctx, newPreviewID(), previewSent, t0)
	require.NoError(t, err)
	require.Equal(t, decisionNoSuch, d)
	require.False(t, validPreviewID("short"))
	require.False(t, validPreviewID("!!!!!!!!!!!!!!!!"))
}

// The estimate is the chats at the global rate, in whole seconds, shown in
// the units an admin reads.
func TestPreviewEstimate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		chats, rate int
		want        string
	}{
		{1, 30, "1 s"},
		{30, 30, "1 s"},
		{31, 30, "2 s"},
		{2000, 30, "1 min 7 s"},
		{1800, 30, "1 min"},
		{100_000, 30, "55 min 34 s"},
		{1_000_000, 30, "9 h 15 min"},
		{108_000, 30, "1 h"},
		{5, 0, "5 s"},
	} {
		require.Equal(t, tc.want, humanDuration(estimate(tc.chats, tc.rate)), "%d chats at %d/s", tc.chats, tc.rate)
	}
	require.Equal(t, "📣 Broadcast preview. The chats will see:\n\nhello *world*\n\nIt will reach 2000 chats, in about 1 min 7 s at the current rate of 30 messages/s. Send or Cancel within 10 minutes.",
		PreviewText("hello *world*", 2000, 30))
}

// The preview estimates at the rate the send budgets have learned when it
// is lower than configured (a budget halved after Telegram's 429s), as
// /lanes shows it, and at the configured rate when nothing was learned:
// the free send at the bulk budget's, the paid one at the paid budget's.
func TestPreviewEstimatesAtTheLearnedRateWhenLower(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name           string
		lower          string // the queue whose budgets Telegram's 429s halved ("": none)
		free, paidTime string
	}{
		{"nothing learned", "", "in about 2 s at the current rate of 30 messages/s", "in about 3 s at 20 messages/s"},
		{"bulk halved", tgjob.QueueNotify, "in about 4 s at the current rate of 15 messages/s", "in about 3 s at 20 messages/s"},
		{"paid halved", tgjob.QueuePaid, "in about 2 s at the current rate of 30 messages/s", "in about 6 s at 10 messages/s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			clk := &clock{now: time.Now()}
			s, _ := newService(t, time.Second, func(c *Config) {
				limits := notifier.DefaultLimits()
				limits.PaidPerSecond = 20
				store, err := notifier.NewStore(c.Client, limits, 0, lanes.WithTag(c.Tag))
				require.NoError(t, err)
				c.Notifier, err = notifier.New(c.Client, store, notifier.Config{})
				require.NoError(t, err)
				c.PaidRate, c.Now = 20, clk.Now
			})
			for i := range 60 {
				require.NoError(t, s.cfg.Audience.(*chats.Audience).Add(ctx, int64(5000+i)))
			}
			if tc.lower != "" {
				lowered, _, err := s.notifier.Store().Inspector().LowerBudget(ctx, tc.lower, "429 from several chats")
				require.NoError(t, err)
				require.True(t, lowered)
			}
			free, err := s.Compose(ctx, Composition{Text: "news"})
			require.NoError(t, err)
			require.Contains(t, free.Text, "It will reach 60 chats, "+tc.free+".")
			paid, err := s.Compose(ctx, Composition{Text: "news", Paid: true})
			require.NoError(t, err)
			require.Contains(t, paid.Text, "• ✅ Send free: "+tc.free+", no fee.")
			require.Contains(t, paid.Text, "• 💫 Send paid: "+tc.paidTime+", for about")
		})
	}
}
