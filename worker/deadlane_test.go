package worker_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A chat that blocked the bot with 1,500 pending jobs of one broadcast (a
// text split in 1,500 parts): the 403 dead-letters them all (DeadLane in
// chunks of 1,000) and exactly those jobs are counted in the broadcast's
// progress, so it ends with nothing remaining.
func TestBlockedChatCountsEveryDeadJob(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	tiny, err := notifier.New(valkeytest.Shared(t).Client(t), e.store, notifier.Config{MaxUnits: 1})
	require.NoError(t, err)
	const blocked, fine = int64(555), int64(556)
	e.emu.SetChatStatus(blocked, tgemu.ChatBlocked)
	const parts = 1500
	id, err := tiny.Broadcast(e.ctx, []int64{blocked}, notifier.Message{Text: strings.Repeat("a", parts)})
	require.NoError(t, err)
	// Unrelated dead letters dead-lettered later in the same queue must not
	// be attributed (nor needed) to the broadcast.
	other, err := e.n.Broadcast(e.ctx, []int64{fine}, notifier.Message{Text: "ok"})
	require.NoError(t, err)
	e.start(e.config())
	var p notifier.Progress
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, id)
		return err == nil && p.Done()
	}, 30*time.Second, 20*time.Millisecond, "progress %+v", p)
	require.Equal(t, notifier.Progress{ID: id, Total: parts, Queued: parts, Failed: map[string]int{"forbidden": parts}}, p)
	dls, err := e.store.DeadLetters(e.ctx, tgjob.QueueNotify, 2*parts)
	require.NoError(t, err)
	require.Equal(t, parts, len(dls))
	p, err = e.n.Progress(e.ctx, other)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		p, err = e.n.Progress(e.ctx, other)
		return err == nil && p.Done()
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 1, p.Sent)
	require.Empty(t, p.Failed)
}
