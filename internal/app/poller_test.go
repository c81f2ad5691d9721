package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
)

// TestSecondPollerWaits: a second poller sees the first one's lease, says
// so and waits, without any getUpdates (so no 409); it takes over when the
// first stops.
func TestSecondPollerWaits(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	first := h.start([]string{"BOT_ROLE=poller"})
	h.waitLeader(first)
	second := h.start([]string{"BOT_ROLE=all"})
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "another poller is active (it holds the poller lease in Valkey), waiting")
	}, wait, 10*time.Millisecond)
	ann := user(903, "Ann")
	require.Contains(t, h.ask(0, ann, "/start"), "Welcome", "the second process's worker sends the first's replies")
	code, body := h.get(second, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (standby poller: "+first.app.lease.Token()+" is polling)\n", body)
	require.False(t, second.app.leader.Load())

	first.stop()
	h.waitLeader(second)
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex")
	for _, r := range h.emu.Requests() {
		require.NotEqual(t, http.StatusConflict, r.HTTPStatus, "no 409: only one process polled at a time")
	}
}

// TestConflictBacksOff: when Telegram answers getUpdates 409 because
// another instance outside this Valkey polls, the poller says so and backs
// off instead of looping: its next getUpdates (the second 409) comes at
// least 5 s after the first 409 (by the emulator's clock), with no
// getUpdates in between. The test waits for the two 409s (the first within
// the harness's wait, the second within 30 s), not for a time: it slept
// 3 s and asked for exactly one 409 until issue 32, which a host slow to
// start the poller broke.
func TestConflictBacksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.emu.InjectFault(tgemu.HTTPError(http.StatusConflict, `{"ok":false,"error_code":409,"description":"Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"}`).
		For("getUpdates").Times(-1))
	r := h.start(nil)
	var polls []tgemu.Request // every getUpdates, in order
	waitPolls := func(n int, d time.Duration) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), d)
		defer cancel()
		require.NoError(t, h.emu.WaitUntil(ctx, func() bool {
			polls = polls[:0]
			for _, rq := range h.emu.Requests() {
				if strings.EqualFold(rq.Method, "getUpdates") {
					polls = append(polls, rq)
				}
			}
			return len(polls) >= n
		}), "%d getUpdates calls", n)
	}
	waitPolls(1, wait)
	require.Equal(t, http.StatusConflict, polls[0].HTTPStatus)
	require.Eventually(t, func() bool {
		return strings.Contains(h.logs.String(), "Telegram answered 409 Conflict: another instance polls this bot")
	}, wait, 10*time.Millisecond)
	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "polling: no successful getUpdates yet")
	waitPolls(2, 30*time.Second)
	gap := polls[1].Time.Sub(polls[0].Time)
	t.Logf("second getUpdates %v after the first 409", gap.Round(time.Millisecond))
	require.Equal(t, http.StatusConflict, polls[1].HTTPStatus)
	require.GreaterOrEqual(t, gap, 5*time.Second, "one 409, then a back-off of at least 5 s")
}

// TestWebhookLeftSetIsDeletedAndPendingUpdatesKept: a bot whose webhook is
// still set (Telegram answers getUpdates 409 "can't use getUpdates method
// while webhook is active") deletes it at start without
// drop_pending_updates, logs the URL that was set, and answers the update
// queued before it started; a webhook set again while it polls is deleted
// again.
func TestWebhookLeftSetIsDeletedAndPendingUpdatesKept(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	hook := "https://old-deployment.example.com/hook/" + h.emu.Token()
	h.emu.SetWebhook(hook)
	ann := user(931, "Ann")
	h.say(0, ann, "/help")
	start := time.Now()
	h.start(nil)
	require.Contains(t, h.texts(ann.ID, 1)[0], "Codemojex", "the update queued while the webhook was set is answered")
	t.Logf("first reply %v after start", time.Since(start).Round(time.Millisecond))
	require.Empty(t, h.emu.WebhookURL())
	for _, rq := range h.emu.Requests() {
		if strings.EqualFold(rq.Method, "deleteWebhook") {
			require.NotEqual(t, "true", rq.Params["drop_pending_updates"], "pending updates are never dropped")
		}
	}
	logs := h.logs.String()
	require.Contains(t, logs, "a webhook was set for this bot; deleted it")
	require.Contains(t, logs, "https://old-deployment.example.com/hook/", "the URL that was set is logged (token redacted)")

	// A webhook set while polling: the getUpdates in flight may still end
	// normally; the next one gets the 409 and the webhook is deleted again.
	h.emu.SetWebhook("https://other.example.com/hook")
	require.Eventually(t, func() bool { return h.emu.WebhookURL() == "" }, 15*time.Second, 20*time.Millisecond,
		"a webhook set while polling is deleted again")
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex", "polling goes on after the second delete")
	conflicts := 0
	for _, rq := range h.emu.Requests() {
		if rq.HTTPStatus == http.StatusConflict {
			conflicts++
		}
	}
	require.LessOrEqual(t, conflicts, 1, "at most the one 409 that revealed the second webhook")
}

// wrongToken is well formed, but not the emulator's: it answers 401.
const wrongToken = "111111111:AAwrongTokenTheEmulatorRejects_0123"

// TestTokenRejected: a token Telegram answers 401 to (wrong or revoked)
// stops the process with intake.ErrTokenRejected and a clear error line, whether
// getMe or, later, getUpdates gets the 401; the token is never shown.
func TestTokenRejected(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		env   []string
		fault *tgemu.Fault
		log   string
	}{
		{name: "getMe", env: []string{"TELEGRAM_BOT_TOKEN=" + wrongToken},
			log: "Telegram answered 401 Unauthorized to getMe: TELEGRAM_BOT_TOKEN is wrong or was revoked"},
		{name: "getUpdates", fault: ptr(tgemu.HTTPError(http.StatusUnauthorized,
			`{"ok":false,"error_code":401,"description":"Unauthorized"}`).For("getUpdates").Times(-1)),
			log: "Telegram answered 401 Unauthorized to getUpdates"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			if tc.fault != nil {
				h.emu.InjectFault(*tc.fault)
			}
			err := h.runUntilError(tc.env)
			require.ErrorIs(t, err, intake.ErrTokenRejected)
			require.Contains(t, err.Error(), "TELEGRAM_BOT_TOKEN is wrong or was revoked")
			testkit.RequireNoToken(t, err.Error(), wrongToken, "the error")
			logs := h.logs.String()
			require.Contains(t, logs, tc.log)
			testkit.RequireNoToken(t, logs, wrongToken, "a log line")
			require.Equal(t, 1, strings.Count(logs, "401 Unauthorized to "+tc.name), "no retry loop")
		})
	}
}

// TestUpdateIDResetIsFollowed: the server's update_id sequence goes down
// (900000000 was handled and confirmed; the next update is 120000000) and
// ignores the stored offset 900000001 (more than 10 beyond its next id):
// the intake re-bases once, the update is handled exactly once, the offset
// follows the server, and getUpdates does not spin.
func TestUpdateIDResetIsFollowed(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	ann, bob := user(941, "Ann"), user(942, "Bob")
	r := h.startWithHighUpdateID(ann)
	require.Eventually(t, func() bool { return len(h.emu.PendingUpdates()) == 0 }, wait, 10*time.Millisecond, "900000000 confirmed")
	off, err := r.app.inbox.Offset(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(900000001), off)

	h.emu.SetNextUpdateID(120000000)
	t0 := time.Now()
	h.say(0, bob, "/help")
	ctx2, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, werr := h.emu.WaitForMessages(ctx2, bob.ID, 1)
	calls := h.getUpdatesCalls(t0)
	t.Logf("after the reset: reply %v after the update was queued (%v), getUpdates calls answered meanwhile %d",
		time.Since(t0).Round(time.Millisecond), werr == nil, calls)
	require.NoError(t, werr, "the update after the reset is handled")
	require.Eventually(t, func() bool { o, _ := r.app.inbox.Offset(ctx); return o == 120000001 }, wait, 10*time.Millisecond,
		"the offset follows the server")
	t1 := time.Now()
	time.Sleep(1500 * time.Millisecond)
	after := h.getUpdatesCalls(t1)
	t.Logf("then: getUpdates calls %d in 1.5 s (%.2f per 0.1 s)", after, float64(after)/15)
	require.LessOrEqual(t, after, 4, "no spinning: long polls of 1 s")
	require.Len(t, h.emu.Messages(bob.ID), 1, "one reply to the /help")
	require.Equal(t, 1, strings.Count(h.logs.String(), "update_id sequence was reset"), "the re-base is logged once")

	require.Contains(t, h.ask(0, bob, "/help"), "Codemojex", "the next update (120000001) is handled too")
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex")
}

// TestSameBatchTwiceBacksOff: a server (or a proxy in front of it) that
// hands out the batch already recorded, whatever the offset, makes the
// intake back off and say why: the poll loop never spins, and the update
// is neither re-based nor handled twice.
func TestSameBatchTwiceBacksOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ann := user(945, "Ann")
	r := h.start(nil)
	h.waitLeader(r)
	u := h.say(0, ann, "/help")
	require.Contains(t, h.texts(ann.ID, 1)[0], "Codemojex")
	h.waitHandled(r, u)
	raw, err := jsonOf(u)
	require.NoError(t, err)
	h.emu.InjectFault(tgemu.HTTPError(http.StatusOK, `{"ok":true,"result":[`+raw+`]}`).For("getUpdates").Times(-1))
	t0 := time.Now()
	time.Sleep(3 * time.Second)
	calls := h.getUpdatesCalls(t0)
	t.Logf("stray server handing out the recorded batch: getUpdates calls %d in 3 s", calls)
	require.LessOrEqual(t, calls, 6, "backs off: 0.5 s, 1 s, 2 s ...")
	require.Contains(t, h.logs.String(), "handed out the same batch twice in a row")
	require.NotContains(t, h.logs.String(), "update_id sequence was reset")
	h.emu.ClearFaults()
	require.Contains(t, h.ask(0, ann, "/help"), "Codemojex")
	require.Len(t, h.emu.Messages(ann.ID), 2, "the first /help was answered once")
}
