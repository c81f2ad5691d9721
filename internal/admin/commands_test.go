package admin

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier/tgjob"
)

// /lanes states an intake limit of 0 as no limit (FLOOD_* = 0 turns that
// limit off, docs/floods.md), never as "0 messages", which reads as none
// allowed.
func TestLanesStatesAZeroIntakeLimitAsNoLimit(t *testing.T) {
	for _, tc := range []struct {
		n    int
		what string
		want string
	}{
		{20, "messages", "20 messages"},
		{1, "taps", "1 taps"},
		{0, "messages", "no limit on messages"},
		{0, "taps", "no limit on taps"},
	} {
		require.Equal(t, tc.want, limitOf(tc.n, tc.what))
	}
}

// /lanes says a paused queue is paused and why (a paid queue halted
// because the bot could not pay, or an admin's pause), on the queue's own
// line block; a running queue says nothing of it.
func TestLanesSaysAPausedQueueIsPausedAndWhy(t *testing.T) {
	t.Parallel()
	ad := newAdmin(t)
	ctx := context.Background()
	text := func() string {
		t.Helper()
		qs, err := ad.Queues(ctx, LanesTop)
		require.NoError(t, err)
		return queuesText(qs)
	}
	require.NotContains(t, text(), "paused")
	_, err := ad.cfg.Outbound.Inspector().PauseQueue(ctx, tgjob.QueueNotify, "halted: the bot cannot pay")
	require.NoError(t, err)
	require.Contains(t, text(), "Queue notify: 0 pending, 0 in flight, 0 dead, 0 lane(s) ready, 0 parked\n  ⏸ paused: halted: the bot cannot pay\n  no pending lanes")
	require.NotContains(t, strings.Replace(text(), "paused: halted", "", 1), "paused", "only the paused queue says so")
}
