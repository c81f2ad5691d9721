package app

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/health"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"

	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestHealthzAndMetrics(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := valkeytest.Start(t, valkeytest.Options{})
	h.c = srv.Client(t)
	r := h.start(nil)
	h.waitLeader(r)
	require.Contains(t, h.ask(0, user(1001, "Ann"), "/start"), "Welcome")

	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)

	// The reply reached the emulator before the worker recorded its
	// message id and acked it: wait for the ack.
	require.Eventually(t, func() bool {
		code, body = h.get(r, "/metrics")
		return code == http.StatusOK && strings.Contains(body, `codemojex_worker_sent_total{queue="reply"} 1`)
	}, wait, 10*time.Millisecond)
	for _, want := range []string{
		`codemojex_queue_depth{queue="reply"} 0`,
		`codemojex_queue_in_flight{queue="notify"} 0`,
		`codemojex_queue_dead_letters{queue="reply"} 0`,
		`codemojex_update_queue_depth 0`,
		`codemojex_updates_received_total 1`,
		`codemojex_updates_handled_total{result="ok"} 1`,
		`codemojex_poller_active 1`,
		`codemojex_worker_sent_total{queue="reply"} 1`,
		`codemojex_worker_send_duration_seconds_count`,
		`codemojex_worker_claim_duration_seconds_count`,
		`codemojex_worker_send_duration_seconds_count{method="sendMessage"} 1`,
		`codemojex_worker_sends_in_flight 0`,
		`codemojex_worker_senders `, // within 4..WORKERS (8), by the measured round trip
		`codemojex_budget_limit{budget="reply"} 1000`,
		`codemojex_budget_limit{budget="bulk"} 1000`,
		`codemojex_budget_use{budget="bulk"} 0`,
		`codemojex_budget_use{budget="reply"} `,              // 0.001 while the reply is within the window
		`codemojex_budget_learned_rate{budget="reply"} 1000`, // nothing learned: the configured rate
		`codemojex_budget_learned_rate{budget="bulk"} 1000`,
		`codemojex_budget_limit{budget="global"} 2000`,        // the total over replies and bulk: its ceiling
		`codemojex_budget_learned_rate{budget="global"} 1000`, // probed from the bulk rate
		`codemojex_budget_use{budget="global"} `,              // of the rate it claims at now
		`codemojex_worker_budget_decreases_total{queue="reply",reason="429 while probing"} 0`,
		`codemojex_budget_decreases_total{budget="bulk"} 0`,
		`codemojex_budget_proven_rate{budget="bulk"} 0`, // no send yet
		`codemojex_budget_forgiven_total{budget="bulk"} 0`,
		`codemojex_budget_released_total{budget="bulk"} 0`,
		`codemojex_worker_budget_decreases_total{queue="reply",reason="429 from several chats"} 0`,
	} {
		require.Contains(t, body, want)
	}
	// Paid broadcasts are off (no TELEGRAM_PAID_BROADCAST_RATE) and the paid
	// queue never held a job: no gauge of it (docs/operations.md).
	for _, g := range []string{"depth", "in_flight", "ready_lanes", "parked_lanes", "delayed", "dead_letters", "leases_recovered_total"} {
		require.NotContains(t, body, `codemojex_queue_`+g+`{queue="paid"}`)
	}

	srv.Kill()
	h.waitHealthz(r, http.StatusServiceUnavailable, "valkey: ", "503 with a reason while Valkey does not answer")
}

// TestHealthzLeaderPollingStalls: the poller's /healthz answers 200 while
// getUpdates works, 503 with the reason once no getUpdates succeeded for 2x
// the long-poll timeout (one getUpdates held 6 s by the emulator; the
// harness's long-poll timeout is 1 s), and 200 again once polling works.
func TestHealthzLeaderPollingStalls(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)

	h.emu.InjectFault(tgemu.Delay(6 * time.Second).For("getUpdates"))
	require.Eventually(t, func() bool {
		code, body = h.get(r, "/healthz")
		return code == http.StatusServiceUnavailable
	}, wait, 20*time.Millisecond, "503 while getUpdates stalls")
	require.True(t, strings.HasPrefix(body, "polling: last successful getUpdates "), body)
	require.Contains(t, body, "(limit 2s)")
	require.True(t, r.app.leader.Load(), "still the lease holder")

	require.Eventually(t, func() bool {
		code, body = h.get(r, "/healthz")
		return code == http.StatusOK
	}, wait, 20*time.Millisecond, "200 once getUpdates works again")
	require.Equal(t, "ok (polling)\n", body)
	require.Contains(t, h.ask(0, user(1101, "Ann"), "/start"), "Welcome", "polling really works again")
}

// TestHealthzStandbyFollowsPolling: a standby poller's /healthz tells
// whether polling is alive anywhere, not only whether it waits: 200 while
// the lease holder polls; 503 "no poller is polling" while the holder keeps
// renewing its lease but its getUpdates stalls, and after the holder dies
// without releasing the lease, until the standby takes over; then 200.
func TestHealthzStandbyFollowsPolling(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	c1, err := h.srv.NewClient() // the first process's own connection, to kill it uncleanly
	require.NoError(t, err)
	t.Cleanup(c1.Close)
	first := h.start([]string{"BOT_ROLE=poller"}, WithValkey(c1))
	h.waitLeader(first)
	second := h.start([]string{"BOT_ROLE=all"}) // its worker sends the replies
	holder := first.app.lease.Token()
	var code int
	var body string
	require.Eventually(t, func() bool {
		code, body = h.get(second, "/healthz")
		return code == http.StatusOK
	}, wait, 20*time.Millisecond, "standby 200 while the first polls: %d %s", code, body)
	require.Equal(t, "ok (standby poller: "+holder+" is polling)\n", body)
	require.False(t, second.app.leader.Load())

	// The first keeps the lease (renewed) but its getUpdates hangs.
	h.emu.InjectFault(tgemu.Delay(time.Minute).For("getUpdates"))
	require.Eventually(t, func() bool {
		code, body = h.get(second, "/healthz")
		return code == http.StatusServiceUnavailable
	}, wait, 20*time.Millisecond, "standby 503 while the holder does not poll")
	require.True(t, strings.HasPrefix(body, "no poller is polling: "+holder+" holds the poller lease but had no successful getUpdates"), body)
	code, body = h.get(first, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.True(t, strings.HasPrefix(body, "polling: last successful getUpdates "), body)
	time.Sleep(time.Second) // longer than a lease renewal period: still stalled, still 503
	code, body = h.get(second, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.False(t, second.app.leader.Load(), "the lease is still renewed")

	// The first dies without releasing its lease: its Valkey connection
	// goes first, then the process stops.
	c1.Close()
	first.stop()
	n, err := h.c.Do(context.Background(), h.c.B().Exists().Key(first.app.inbox.Keys().Lease()).Build()).AsInt64()
	require.NoError(t, err)
	require.Equal(t, int64(1), n, "the dead poller's lease was not released")
	seen503 := 0
	deadline := time.Now().Add(wait)
	for {
		code, body = h.get(second, "/healthz")
		if code == http.StatusOK {
			break
		}
		require.Equal(t, http.StatusServiceUnavailable, code, body)
		if !strings.HasPrefix(body, "no poller is polling: ") {
			require.True(t, second.app.leader.Load(), "only a new lease holder waits for its first getUpdates: %s", body)
			require.Equal(t, "polling: no successful getUpdates yet\n", body)
		}
		seen503++
		require.True(t, time.Now().Before(deadline), "the standby did not take over: %s", body)
		time.Sleep(20 * time.Millisecond)
	}
	require.NotZero(t, seen503, "503 until the standby took over")
	require.Equal(t, "ok (polling)\n", body)
	require.True(t, second.app.leader.Load())
	require.Contains(t, h.ask(0, user(1102, "Ann"), "/start"), "Welcome", "the new poller polls")
}

// TestHealthWhileGetMeFails: while getMe fails, /healthz answers 503 with
// the (redacted) failure, not "standby"; once it succeeds, the poller polls
// and /healthz answers 200.
func TestHealthWhileGetMeFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.emu.InjectFault(tgemu.BadGateway().For("getMe").Times(-1))
	r := h.start(nil)
	h.waitHealthz(r, http.StatusServiceUnavailable, "telegram: getMe failing: ", "503 while getMe fails")
	code, body := h.get(r, "/healthz")
	require.Equal(t, http.StatusServiceUnavailable, code, body)
	require.NotContains(t, body, "standby")
	testkit.RequireNoToken(t, body, h.emu.Token(), "/healthz")
	require.False(t, r.app.leader.Load(), "no lease before getMe succeeded")

	h.emu.ClearFaults()
	h.waitLeader(r)
	code, body = h.get(r, "/healthz")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "ok (polling)\n", body)
}

// TestEvictionPolicyIsChecked: at start the bot reads Valkey's
// maxmemory-policy; anything but noeviction is a logged warning naming the
// risk, also in /healthz's body, and a server that refuses CONFIG is
// tolerated and logged as not checked.
func TestEvictionPolicyIsChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		logs    string // a log line that must appear
		healthz string // in /healthz's body ("" : no warning there)
	}{
		{name: "noeviction", args: []string{"--maxmemory-policy", "noeviction"}},
		{name: "allkeys-lru", args: []string{"--maxmemory-policy", "allkeys-lru"},
			logs:    "Valkey maxmemory-policy is allkeys-lru, not noeviction: under memory pressure Valkey may evict",
			healthz: "warning: Valkey maxmemory-policy is allkeys-lru, not noeviction"},
		{name: "CONFIG refused", args: []string{"--rename-command", "CONFIG", ""},
			logs: "Valkey maxmemory-policy could not be checked"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.onServer(valkeytest.Start(t, valkeytest.Options{ExtraArgs: tc.args}))
			r := h.start(nil)
			h.waitLeader(r)
			code, body := h.get(r, "/healthz")
			require.Equal(t, http.StatusOK, code, body)
			if tc.healthz == "" {
				require.NotContains(t, body, "warning")
			} else {
				require.Contains(t, body, tc.healthz)
			}
			if tc.logs == "" {
				require.NotContains(t, h.logs.String(), "maxmemory-policy")
			} else {
				require.Contains(t, h.logs.String(), tc.logs)
			}
		})
	}
}

// TestOutOfMemoryLosesNothing: Valkey reaches maxmemory under noeviction
// (writes answer "OOM command not allowed when used memory > 'maxmemory'.")
// while updates arrive and replies wait to be queued. Updates that could
// not be recorded are not confirmed to Telegram, /healthz is 503 with the
// reason, and once maxmemory is raised every reply arrives exactly once.
func TestOutOfMemoryLosesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := newHarness(t)
	admin, setMaxmemory := h.onNoEvictionServer()

	// A handler that waits for the outage, so the updates behind it are
	// recorded before it and handled during it (their replies cannot be
	// queued then): with one handler (HANDLERS=1) they wait behind it.
	gate := make(chan struct{})
	hold := func(u *models.Update) bool { return u.Message != nil && u.Message.Text == "/hold" }
	r := h.start([]string{"HANDLERS=1"}, WithHandler(hold, func(context.Context, *update.Request) update.Outcome { <-gate; return update.Outcome{} }))
	h.waitLeader(r)
	h.say(0, user(950, "Holder"), "/hold")
	early := []int64{951, 952}
	for _, c := range early {
		h.say(0, user(c, "Early"), "/help")
	}
	require.Eventually(t, func() bool { n, _ := r.app.inbox.Unhandled(ctx); return n == int64(1+len(early)) }, wait, 10*time.Millisecond)
	// And confirmed to Telegram: the poller's next getUpdates carries the
	// offset past them (under load it may not have gone out yet).
	require.Eventually(t, func() bool { return len(h.emu.PendingUpdates()) == 0 }, wait, 10*time.Millisecond)

	setMaxmemory("1")
	err := admin.Do(ctx, admin.B().Set().Key("{"+h.tag+"}:probe").Value("x").Build()).Error()
	require.ErrorContains(t, err, "OOM command not allowed when used memory > 'maxmemory'.")
	close(gate)
	late := []int64{953, 954, 955}
	for _, c := range late {
		h.say(0, user(c, "Late"), "/help")
	}
	time.Sleep(3 * time.Second)
	code, body := h.get(r, "/healthz")
	t.Logf("during the outage: /healthz %d %q; pending at Telegram %d", code, strings.TrimSpace(body), len(h.emu.PendingUpdates()))
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, body, "valkey: out of memory")
	require.Len(t, h.emu.PendingUpdates(), len(late), "updates not recorded are not confirmed to Telegram")
	for _, c := range append(append([]int64{}, early...), late...) {
		require.Empty(t, h.emu.Messages(c), "no reply could be queued")
	}

	setMaxmemory("0")
	for _, c := range append(append([]int64{}, early...), late...) {
		require.Contains(t, h.texts(c, 1)[0], "Codemojex", "chat %d gets its reply after recovery", c)
	}
	require.Eventually(t, func() bool { c, _ := h.get(r, "/healthz"); return c == http.StatusOK }, wait, 50*time.Millisecond)
	require.Eventually(t, func() bool { return len(h.emu.PendingUpdates()) == 0 }, wait, 50*time.Millisecond)
	time.Sleep(time.Second)
	for _, c := range append(append([]int64{}, early...), late...) {
		require.Len(t, h.emu.Messages(c), 1, "chat %d: exactly one reply", c)
	}
	dead, err := r.app.Store().Inspector().DeadLetters(ctx, tgjob.QueueReply, lanes.DeadQuery{Newest: 100})
	require.NoError(t, err)
	require.Empty(t, dead, "no job dead-lettered")
}

// A poller and a worker with no handler (a deployment from before the
// handler role): the poller warns at start that it only records updates,
// and once the oldest unhandled update is older than the wait limit every
// role's /healthz is 503 saying so; a handler process clears it.
func TestHealthzReportsUpdatesNobodyHandles(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	limit := WithUpdateWaitLimit(time.Second)
	poller := h.start([]string{"BOT_ROLE=poller"}, limit)
	worker := h.start([]string{"BOT_ROLE=worker"}, limit)
	h.waitLeader(poller)
	require.Contains(t, h.logs.String(), "BOT_ROLE=poller only records updates, it handles none")
	code, _ := h.get(poller, "/healthz")
	require.Equal(t, http.StatusOK, code)
	u := user(980, "Nobody")
	h.say(0, u, "/help")
	for _, r := range []*running{poller, worker} {
		require.Eventually(t, func() bool {
			code, body := h.get(r, "/healthz")
			return code == http.StatusServiceUnavailable && strings.Contains(body, "is any handler running?")
		}, wait, 50*time.Millisecond, "503 once the update waited over the limit")
	}
	_, body := h.get(worker, "/healthz")
	require.Regexp(t, `updates waiting [1-9]\d* s: is any handler running\?`, body)

	h.start([]string{"BOT_ROLE=handler"}, limit)
	require.Contains(t, h.texts(u.ID, 1)[0], "Commands:")
	require.Eventually(t, func() bool { code, _ := h.get(worker, "/healthz"); return code == http.StatusOK }, wait, 50*time.Millisecond)
}

// The HTTP server's idle and read timeouts: internal/httpserver's
// TestHTTPServerTimesOutIdleAndSlowConnections.

// A worker whose token Telegram refuses (401: revoked or wrong) pauses the
// whole store, and every role's /healthz says so: 503 "sends paused (401
// unauthorized, ...)", read from Valkey, so a poller that never sent
// anything reports it too; the message waits, nothing is lost.
func TestHealthzReportsAStorePausedByA401(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	poller := h.start([]string{"BOT_ROLE=poller"})
	h.waitLeader(poller)
	worker := h.start([]string{"BOT_ROLE=worker", "TELEGRAM_BOT_TOKEN=7000000001:AAHrevokedTOKENforHealthTests_9999"})
	_, err := worker.app.Notifier().Notify(context.Background(), 4301, notifyMsg("hello?"))
	require.NoError(t, err)
	for _, r := range []*running{worker, poller} {
		h.waitHealthz(r, http.StatusServiceUnavailable, "sends paused (401 unauthorized, ", "503 while the store is paused by the 401")
	}
	_, body := h.get(worker, "/healthz")
	testkit.RequireNoToken(t, body, "7000000001:AAHrevokedTOKENforHealthTests_9999", "/healthz")
	require.Empty(t, h.emu.Messages(4301), "nothing sent")
	worker.stop() // else its next send meets the 401 again
	require.NoError(t, poller.app.Store().Inspector().Resume(context.Background()))
	require.Eventually(t, func() bool { // waited for: a loaded host may be between two polls
		code, body := h.get(poller, "/healthz")
		return code == http.StatusOK && body == "ok (polling)\n"
	}, wait, 50*time.Millisecond, "resumed: 200 again")
	st, err := poller.app.Store().Inspector().Stats(context.Background(), tgjob.QueueNotify, 0)
	require.NoError(t, err)
	require.Equal(t, 1, st.Pending+st.InFlight, "the message waits, nothing is lost")
	require.Zero(t, st.Dead)
}

// A worker whose claims Valkey refuses (here an ACL that lets the process
// read every key and write only the /healthz probe, so the claim script
// fails with NOPERM while the probe succeeds, as after a failover that
// leaves the store's keys unwritable) answers
// /healthz 503 "worker: claims failing ..." once they failed for longer
// than the limit (the message is held behind a short pause, so the worker
// claims when the pause ends); lifting the ACL clears it and the message
// held meanwhile is delivered.
func TestHealthzReportsAWorkerThatCannotClaim(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	srv := valkeytest.Start(t, valkeytest.Options{})
	h.c = srv.Client(t)
	r := h.start([]string{"BOT_ROLE=worker"}, WithClaimFailLimit(time.Second))
	ctx := context.Background()
	h.emu.AddChat(models.Chat{ID: 4401})
	_, err := r.app.Notifier().Notify(ctx, 4401, notifyMsg("first"))
	require.NoError(t, err)
	h.texts(4401, 1)

	require.NoError(t, r.app.Store().Inspector().Pause(ctx, time.Second))
	_, err = r.app.Notifier().Notify(ctx, 4401, notifyMsg("second"))
	require.NoError(t, err)
	acl := func(rules ...string) {
		t.Helper()
		require.NoError(t, h.c.Do(ctx, h.c.B().AclSetuser().Username("default").Rule(rules...).Build()).Error())
	}
	acl("resetkeys", "%R~*", "~"+health.Key(h.tag))
	_, err = h.c.Do(ctx, h.c.B().Set().Key("{"+h.tag+"}:s:acl-check").Value("1").Build()).ToString()
	require.ErrorContains(t, err, "NOPERM", "the ACL refuses the store's writes")
	h.waitHealthz(r, http.StatusServiceUnavailable, "worker: claims failing for ", "503 once the claims failed over the limit")
	_, body := h.get(r, "/healthz")
	require.Contains(t, body, "NOPERM")

	acl("allkeys")
	require.Equal(t, []string{"first", "second"}, h.texts(4401, 2), "the held message is delivered")
	require.Eventually(t, func() bool { code, _ := h.get(r, "/healthz"); return code == http.StatusOK }, wait, 50*time.Millisecond,
		"200 once a claim succeeds")
}

// An idle bot's poller answers /healthz 200 from its first getUpdates, not
// after its first long poll: the first getUpdates of a lease term is a
// short poll. With a 60 s long poll and nothing to fetch, the leader says
// "ok (polling)" and a standby "ok (standby poller ...)" well before any
// long poll could have answered (within the 20 s wait; without the short
// poll neither can before 60 s).
func TestHealthzOfAnIdlePollerIsOKFromItsFirstPoll(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	long := WithPollTimeout(60 * time.Second)
	first := h.start(nil, long)
	require.Eventually(t, func() bool {
		code, body := h.get(first, "/healthz")
		return code == http.StatusOK && body == "ok (polling)\n"
	}, wait, 20*time.Millisecond, "the leader polls from its first getUpdates")
	second := h.start(nil, long)
	h.waitHealthz(second, http.StatusOK, "ok (standby poller: ", "a standby sees the leader's heartbeat")
}

// A bot of role all whose getMe never succeeds (Telegram unreachable at
// start: every getMe a 502) stops when told to: the poller, stopped first,
// no longer waits for the handlers' getMe, which is stopped after it (a
// new user found SIGTERM ignored for over 10 minutes). run's stop fails
// the test when Run takes over its 20 s grace.
func TestStopsWhileGetMeKeepsFailing(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.emu.InjectFault(tgemu.BadGateway().For("getMe").Times(-1))
	r := h.start(nil)
	h.waitHealthz(r, http.StatusServiceUnavailable, "telegram: getMe failing: ", "503 while getMe fails")
	r.stop()
	require.Contains(t, h.logs.String(), "codemojex stopped")
}
