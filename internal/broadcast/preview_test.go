package broadcast

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
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
