package health

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/redact"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// token is the bot token of these tests: no reason may carry it.
const token = "123456:test-token-of-health"

// The checks by role and state, on a real Valkey (the probe written, the
// update queue and the poller lease read); the whole bot's answers to
// getUpdates stalls, standby pollers and Valkey outages are internal/app's
// health tests.
func TestCheckByRoleAndState(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	// A fresh poll and a claim failing since now are read at the check
	// (a loaded host may run a subtest seconds after the table is built);
	// stale and failing only grow older.
	fresh := time.Now
	stale := time.Now().Add(-3 * time.Second)
	me := func(ok bool, failure string) func() (bool, string) {
		return func() (bool, string) { return ok, failure }
	}
	is := func(v bool) func() bool { return func() bool { return v } }
	polled := func(t time.Time) func() time.Time { return func() time.Time { return t } }
	leader := Status{Me: me(true, ""), Leader: is(true), LastPoll: fresh, WebhookSet: is(false)}
	pause := func(left time.Duration, why string, down bool, err error) func(context.Context) (time.Duration, string, bool, error) {
		return func(context.Context) (time.Duration, string, bool, error) { return left, why, down, err }
	}
	claims := func(since time.Time, last string) func() (time.Time, string) {
		return func() (time.Time, string) { return since, last }
	}
	failing := time.Now().Add(-11 * time.Second)
	for _, tc := range []struct {
		name                           string
		polls, handles, sends, webhook bool
		st                             Status
		ok                             bool
		reason                         string // the whole reason, or its start with a trailing "..."
	}{
		{name: "worker", ok: true, reason: "ok (worker)"},
		{name: "worker, claims answered", sends: true, st: Status{Claims: claims(time.Time{}, "")}, ok: true, reason: "ok (worker)"},
		{name: "worker, claims failing within the limit", sends: true, st: Status{Claims: func() (time.Time, string) { return time.Now(), "NOPERM" }}, ok: true,
			reason: "ok (worker)"},
		{name: "worker, claims failing past the limit", sends: true, st: Status{Claims: claims(failing, "NOPERM no permissions "+token)},
			reason: "worker: claims failing for ..."}, // the age is the host's; the token redacted (below)
		{name: "a claims failure is not read in roles that do not send", handles: true,
			st: Status{Me: me(true, ""), Claims: claims(failing, "NOPERM")}, ok: true, reason: "ok (handler)"},
		{name: "401 pause", sends: true, st: Status{Paused: pause(59*time.Second, "401 unauthorized", true, nil), Claims: claims(time.Time{}, "")},
			reason: "sends paused (401 unauthorized, 59s left): nothing is sent to Telegram"},
		{name: "pause until resumed, in a poller too", polls: true, st: Status{Me: me(true, ""), Leader: is(true), LastPoll: fresh,
			WebhookSet: is(false), Paused: pause(-1, "paused", true, nil)}, reason: "sends paused (paused, until resumed): nothing is sent to Telegram"},
		{name: "flood pause", sends: true, st: Status{Paused: pause(3*time.Second, "429 from several chats", false, nil), Claims: claims(time.Time{}, "")},
			ok: true, reason: "ok (worker); sends paused (429 from several chats, 3s left): Telegram's flood control"},
		{name: "pause unreadable", st: Status{Paused: pause(0, "", false, errors.New("READONLY "+token))},
			reason: "valkey: read the global pause: READONLY ..."},
		{name: "not paused", st: Status{Paused: pause(0, "", false, nil)}, ok: true, reason: "ok (worker)"},
		{name: "handler before getMe", handles: true, st: Status{Me: me(false, "")}, reason: "telegram: waiting for getMe's first answer"},
		{name: "handler getMe failing", handles: true, st: Status{Me: me(false, "Bad Gateway")}, reason: "telegram: getMe failing: Bad Gateway"},
		{name: "handler", handles: true, st: Status{Me: me(true, "")}, ok: true, reason: "ok (handler)"},
		{name: "webhook not set", polls: true, webhook: true, st: leader, reason: "webhook: setWebhook has not succeeded yet"},
		{name: "webhook set", polls: true, webhook: true, st: Status{Me: me(true, ""), Leader: is(false), LastPoll: polled(time.Time{}), WebhookSet: is(true)},
			ok: true, reason: "ok (webhook)"},
		{name: "leader polling", polls: true, st: leader, ok: true, reason: "ok (polling)"},
		{name: "leader before getUpdates", polls: true, st: Status{Me: me(true, ""), Leader: is(true), LastPoll: polled(time.Time{}), WebhookSet: is(false)},
			reason: "polling: no successful getUpdates yet"},
		{name: "leader stalled", polls: true, st: Status{Me: me(true, ""), Leader: is(true), LastPoll: polled(stale), WebhookSet: is(false)},
			reason: "polling: last successful getUpdates ..."},
		{name: "standby, lease free", polls: true, handles: true, st: Status{Me: me(true, ""), Leader: is(false), LastPoll: polled(time.Time{}), WebhookSet: is(false)},
			reason: "no poller is polling: the poller lease is free and no getUpdates succeeded in the last 2s ..."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ns := valkeytest.Namespace(t)
			upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
			require.NoError(t, err)
			ch, err := New(Config{Client: c, Tag: ns, Inbox: intake.NewInbox(c, upd, ns), Status: tc.st,
				Polls: tc.polls, Handles: tc.handles, Sends: tc.sends, Webhook: tc.webhook, PollTimeout: time.Second, WaitLimit: time.Minute,
				Redactor: redact.New(token), Log: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			h := ch.Check(context.Background())
			require.Equal(t, tc.ok, h.OK, h.Reason)
			if prefix, cut := strings.CutSuffix(tc.reason, " ..."); cut {
				require.True(t, strings.HasPrefix(h.Reason, prefix), h.Reason)
			} else {
				require.Equal(t, tc.reason, h.Reason)
			}
			testkit.RequireNoToken(t, h.Reason, token, "the reason")
			n, err := c.Do(context.Background(), c.B().Pttl().Key(Key(ns)).Build()).AsInt64()
			require.NoError(t, err)
			require.True(t, n > 0 && n <= time.Minute.Milliseconds(), "the probe written, expiring within 1 min: %d ms", n)
		})
	}
}

// New refuses a config without the parts the role reads.
func TestNewRequiresWhatTheRoleReads(t *testing.T) {
	t.Parallel()
	c := valkeytest.Shared(t).Client(t)
	base := Config{Client: c, Tag: "x", Inbox: intake.NewInbox(c, nil, "x"), Redactor: redact.New(token), Log: slog.New(slog.DiscardHandler)}
	_, err := New(base)
	require.NoError(t, err, "a worker reads no Status")
	handler := base
	handler.Handles = true
	_, err = New(handler)
	require.ErrorContains(t, err, "Status.Me")
	poller := base
	poller.Polls, poller.Status.Me = true, func() (bool, string) { return true, "" }
	_, err = New(poller)
	require.ErrorContains(t, err, "Status.Leader")
	sender := base
	sender.Sends = true
	_, err = New(sender)
	require.ErrorContains(t, err, "Status.Claims")
	sender.Status.Claims, sender.ClaimFailLimit = func() (time.Time, string) { return time.Time{}, "" }, -time.Second
	_, err = New(sender)
	require.ErrorContains(t, err, "ClaimFailLimit")
	_, err = New(Config{})
	require.ErrorContains(t, err, "required")
}
