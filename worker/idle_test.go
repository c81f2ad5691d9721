package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A wake-up that never comes (its subscription silently dead, as after a
// network cut that leaves the connection half-open) does not hold an idle
// worker for good: the notify queue is paused and resumed by writing its
// pause key directly, with no wake-up published, and the notification
// waiting there is still sent, by the worker's next idle claim.
func TestAnIdleWorkerClaimsAgainWithoutAWakeUp(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	key := "{" + e.store.Tag() + "}:s:qpause"
	require.NoError(t, e.c.Do(e.ctx, e.c.B().Hset().Key(key).FieldValue().FieldValue(tgjob.QueueNotify, "test").Build()).Error())
	_, stop := e.start(e.config())
	t.Cleanup(func() { require.NoError(t, stop()) })
	e.notify(42, "after a lost wake-up", notifier.Notification)
	time.Sleep(300 * time.Millisecond) // the worker's claims find only the paused queue: it waits
	require.Empty(t, e.emu.Messages(42), "paused")
	require.NoError(t, e.c.Do(e.ctx, e.c.B().Hdel().Key(key).Field(tgjob.QueueNotify).Build()).Error(), "resumed without a wake-up")
	require.Equal(t, []string{"after a lost wake-up"}, texts(e.waitMsgs(42, 1)))
}
