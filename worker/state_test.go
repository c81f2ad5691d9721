package worker_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// A 401 Unauthorized (the emulator refuses the worker's token) pauses the
// whole store: LastPause names it and lanes.Inspector.Paused reads the
// pause, for at most Config.UnauthorizedPause; the message is not lost (it
// waits in its lane, not dead-lettered).
func TestUnauthorizedPauseIsReported(t *testing.T) {
	t.Parallel()
	e := newEnv(t, envOpts{})
	cfg := e.config()
	cfg.Token = "7000000001:AAHrevokedTOKENforWorkerTests_99999"
	cfg.UnauthorizedPause = time.Minute
	e.notify(81, "hello", notifier.Reply)
	w, stop := e.start(cfg)
	require.Eventually(t, func() bool { return !w.LastPause().At.IsZero() }, 20*time.Second, 10*time.Millisecond,
		"the 401 pauses the store")
	p := w.LastPause()
	require.Equal(t, "401 unauthorized", p.Why)
	require.Equal(t, time.Minute, p.For)
	gp, err := e.store.Inspector().Paused(e.ctx)
	require.NoError(t, err)
	require.Positive(t, gp.Left, "the store is paused")
	require.LessOrEqual(t, gp.Left, time.Minute)
	require.Equal(t, "401 unauthorized", gp.Why, "every process reads why")
	require.NoError(t, stop())
	require.Empty(t, e.dead(tgjob.QueueReply), "a 401 loses nothing")
}

// Claims reports a worker that cannot claim: after a claim that succeeds,
// LastOK is set and FailingSince zero; while Valkey refuses the claim
// script (here an ACL that denies EVALSHA, as a READONLY replica, OOM or a
// refused script would) FailingSince stays at the first failure and LastErr
// names the refusal; the next claim that succeeds clears both and the
// message held meanwhile is delivered.
func TestClaimsReportAFailingClaim(t *testing.T) {
	t.Parallel()
	srv := valkeytest.Start(t, valkeytest.Options{})
	e := newEnv(t, envOpts{srv: srv})
	w, _ := e.start(e.config())
	e.notify(91, "first", notifier.Reply)
	e.waitMsgs(91, 1)
	require.Eventually(t, func() bool { return !w.Claims().LastOK.IsZero() }, 20*time.Second, 10*time.Millisecond)
	require.Zero(t, w.Claims().FailingSince)

	// Hold the next message behind a pause, refuse scripts, then let the
	// pause end: the worker's claims fail.
	require.NoError(t, e.store.Inspector().Pause(e.ctx, time.Second))
	e.notify(91, "second", notifier.Reply)
	acl := func(rules ...string) {
		t.Helper()
		require.NoError(t, e.c.Do(e.ctx, e.c.B().AclSetuser().Username("default").Rule(rules...).Build()).Error())
	}
	acl("-evalsha", "-eval")
	require.Eventually(t, func() bool { return !w.Claims().FailingSince.IsZero() }, 20*time.Second, 10*time.Millisecond,
		"claims fail once the pause ends")
	failing := w.Claims()
	require.Contains(t, failing.LastErr, "NOPERM")

	acl("+@all")
	e.waitMsgs(91, 2)
	c := w.Claims()
	require.Zero(t, c.FailingSince, "a claim that succeeds clears the failure")
	require.Empty(t, c.LastErr)
	require.True(t, c.LastOK.After(failing.FailingSince))
}
