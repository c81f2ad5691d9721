package worker_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/worker"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// token is a realistic bot token; tests check it never leaks.
const token = "7000000001:AAHsecretTOKENforWorkerTests_0123456"

type env struct {
	t     testing.TB
	ctx   context.Context
	emu   *tgemu.Emulator
	c     valkey.Client // the store\'s client
	store *lanes.Store
	n     *notifier.Notifier
	logs  *testkit.LogBuffer
	reg   *prometheus.Registry
}

type envOpts struct {
	// limits (lanes side) and emuLimits (emulator side) go together: both
	// zero is envLimits and envEmuLimits; a test that sets limits sets the
	// emulator's too.
	limits    notifier.Limits
	emuLimits tgemu.Limits
	// unlimited, when not empty, says why the emulator runs without limits
	// (testkit.Unlimited); limits then applies alone.
	unlimited   string
	strictChats bool // no WithAllowAnyChat
	maxAttempts int
	// latency is the emulator's answer delay (tgemu.WithLatency).
	latency time.Duration
	// srv is a dedicated server (valkeytest.Start) for a test that stalls
	// or reconfigures it; nil means the shared one.
	srv *valkeytest.Server
	// storeOpts are more options of the store (after the tag).
	storeOpts []lanes.Option
	// counts429s, when not empty, says why the test counts the emulator's
	// 429s itself instead of requiring none at its end.
	counts429s string
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Second)
	t.Cleanup(cancel)
	limitsOpt := tgemu.WithLimits(o.emuLimits)
	switch {
	case o.unlimited != "":
		limitsOpt = testkit.Unlimited(o.unlimited)
	case o.limits == (notifier.Limits{}) && o.emuLimits == (tgemu.Limits{}):
		o.limits, limitsOpt = envLimits(), tgemu.WithLimits(envEmuLimits())
	default:
		require.NotEqual(t, tgemu.Limits{}, o.emuLimits, "the bot's limits without the emulator's: set emuLimits, or unlimited and why")
	}
	emuOpts := []tgemu.Option{tgemu.WithToken(token), limitsOpt, tgemu.WithLatency(o.latency)}
	if !o.strictChats {
		emuOpts = append(emuOpts, tgemu.WithAllowAnyChat())
	}
	emu := testkit.NewEmulator(t, emuOpts...)
	srv := o.srv
	if srv == nil {
		srv = valkeytest.Shared(t)
	}
	c := srv.Client(t)
	store, err := notifier.NewStore(c, o.limits, o.maxAttempts, append([]lanes.Option{lanes.WithTag(valkeytest.Namespace(t))}, o.storeOpts...)...)
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	e := &env{t: t, ctx: ctx, emu: emu, c: c, store: store, n: n, logs: &testkit.LogBuffer{}, reg: prometheus.NewRegistry()}
	t.Cleanup(func() { // after the workers' stops, registered later
		if o.unlimited == "" && o.counts429s == "" {
			testkit.Require429s(t, emu, 0)
		}
	})
	return e
}

// envLimits are the lanes side of a test that sets no limits: Telegram's
// rules at rates that keep tests short (1,000 messages/s overall, 100/s per
// private chat, 6,000/min per group), replies in the one global budget.
func envLimits() notifier.Limits {
	return notifier.Limits{GlobalPerSecond: 1000, PrivatePerSecond: 100, GroupPerMinute: 6000, Slack: notifier.DefaultSlack}
}

// envEmuLimits are envLimits as the emulator plays them (replies count
// against Global: no reply window).
func envEmuLimits() tgemu.Limits { return tgemu.ScaledLimits(1000, 100, 6000) }

// serverTime is the Valkey server's clock (TIME), the clock of every lease
// and park.
func (e *env) serverTime() time.Time {
	e.t.Helper()
	v, err := e.c.Do(e.ctx, e.c.B().Time().Build()).AsStrSlice()
	require.NoError(e.t, err)
	require.Len(e.t, v, 2)
	sec, err := strconv.ParseInt(v[0], 10, 64)
	require.NoError(e.t, err)
	usec, err := strconv.ParseInt(v[1], 10, 64)
	require.NoError(e.t, err)
	return time.Unix(sec, usec*1000)
}

// config is a worker config for tests: short backoffs and leases.
func (e *env) config() worker.Config {
	return worker.Config{
		Token:         token,
		ServerURL:     e.emu.URL(),
		Senders:       8,
		Lease:         5 * time.Second,
		SendTimeout:   3 * time.Second,
		ShutdownGrace: 3 * time.Second,
		BackoffBase:   20 * time.Millisecond,
		BackoffMax:    200 * time.Millisecond,
		Logger:        e.logs.Logger(),
		Registerer:    e.reg,
	}
}

// start runs a worker until the test ends or the returned stop is called;
// stop returns Run's error.
func (e *env) start(cfg worker.Config) (*worker.Worker, func() error) {
	e.t.Helper()
	w, err := worker.New(e.n, cfg)
	require.NoError(e.t, err)
	return w, testkit.RunInBackground(e.t, "worker", 20*time.Second, w.Run)
}

func (e *env) notify(chat int64, text string, class notifier.Class) {
	e.t.Helper()
	_, err := e.n.Notify(e.ctx, chat, notifier.Message{Text: text, Class: class})
	require.NoError(e.t, err)
}

// enqueueRaw puts a job with any payload on a lane (bypassing the notifier).
func (e *env) enqueueRaw(queue string, group string, payload []byte) lanes.JobID {
	e.t.Helper()
	id := lanes.NewMinter().New()
	res, err := e.store.Enqueue(e.ctx, queue, []lanes.Item{{Group: group, ID: id, Payload: payload}})
	require.NoError(e.t, err)
	require.Equal(e.t, 1, res.Added)
	return id
}

func rawJob(t *testing.T, j tgjob.Job) []byte {
	t.Helper()
	p, err := j.Encode()
	require.NoError(t, err)
	return p
}

// dead returns the dead letters of queue.
func (e *env) dead(queue string) []lanes.DeadLetter {
	e.t.Helper()
	dls, err := e.store.Inspector().DeadLetters(e.ctx, queue, lanes.DeadQuery{Newest: 1000})
	require.NoError(e.t, err)
	return dls
}

// waitDead waits until queue has n dead letters.
func (e *env) waitDead(queue string, n int) []lanes.DeadLetter {
	e.t.Helper()
	var dls []lanes.DeadLetter
	require.Eventually(e.t, func() bool {
		dls = e.dead(queue)
		return len(dls) >= n
	}, 10*time.Second, 10*time.Millisecond, "want %d dead letters in %s", n, queue)
	return dls
}

func (e *env) waitMsgs(chat int64, n int) []tgemu.Message {
	e.t.Helper()
	msgs, err := e.emu.WaitForMessages(e.ctx, chat, n)
	require.NoError(e.t, err)
	return msgs
}

// orderedText is the text of chat c's i-th message in the order tests:
// "c<chat>-<i, two digits>".
func orderedText(c, i int) string { return fmt.Sprintf("c%d-%02d", c, i) }

// requireEachChatInOrder waits for chats 1..chats to receive per messages
// each and requires them in enqueue order (orderedText).
func (e *env) requireEachChatInOrder(chats, per int) {
	e.t.Helper()
	for c := 1; c <= chats; c++ {
		msgs := e.waitMsgs(int64(c), per)
		want := make([]string, per)
		for i := range want {
			want[i] = orderedText(c, i)
		}
		require.Equal(e.t, want, texts(msgs), "chat %d", c)
	}
}

func texts(ms []tgemu.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}

func itoa(i int) string { return strconv.Itoa(i) }

// laneStats returns lane group's stats in queue (zero when absent).
func (e *env) laneStats(queue, group string) lanes.LaneStats {
	e.t.Helper()
	st, err := e.store.Inspector().Stats(e.ctx, queue, 1000)
	require.NoError(e.t, err)
	for _, l := range st.Top {
		if l.Group == group {
			return l
		}
	}
	return lanes.LaneStats{}
}

// pending counts jobs still in the lanes (pending or in flight) of both
// queues.
func (e *env) pending() (pending, inflight int) {
	e.t.Helper()
	for _, q := range tgjob.Queues() {
		st, err := e.store.Inspector().Stats(e.ctx, q, 0)
		require.NoError(e.t, err)
		pending += st.Pending + st.Delayed
		inflight += st.InFlight
	}
	return pending, inflight
}

// sentID waits until the worker recorded the message id of job id.
func (e *env) sentID(id lanes.JobID) int {
	e.t.Helper()
	var msg int
	require.Eventually(e.t, func() bool {
		m, ok, err := e.n.Chats().SentMessageID(e.ctx, id)
		require.NoError(e.t, err)
		msg = m
		return ok
	}, 10*time.Second, 5*time.Millisecond, "message id of job %s recorded", id)
	return msg
}

// countEdits counts editMessageText requests to chat answered with an
// error whose description contains desc.
func (e *env) countEdits(chat int64, desc string) int {
	n := 0
	for _, r := range e.emu.Requests() {
		if strings.EqualFold(r.Method, "editMessageText") && r.ChatID == chat && strings.Contains(r.Description, desc) {
			n++
		}
	}
	return n
}

// requireMetric waits until counter name{label=value}, summed over its
// other labels, is want (label "": a counter without labels).
func (e *env) requireMetric(want float64, name, label, value string) {
	e.t.Helper()
	var got float64
	require.Eventually(e.t, func() bool {
		got = 0
		mfs, err := e.reg.Gather()
		require.NoError(e.t, err)
		for _, mf := range mfs {
			if mf.GetName() != name {
				continue
			}
			for _, m := range mf.GetMetric() {
				if label == "" {
					got += m.GetCounter().GetValue()
				}
				for _, lp := range m.GetLabel() {
					if lp.GetName() == label && lp.GetValue() == value {
						got += m.GetCounter().GetValue()
					}
				}
			}
		}
		return got == want
	}, 5*time.Second, 5*time.Millisecond, "%s{%s=%q}: want %v", name, label, value, want)
}

// secretPart is the token after the ':'.
var secretPart = token[strings.IndexByte(token, ':')+1:]

// copiesOf counts the messages of chat whose text is text.
func (e *env) copiesOf(chat int64, text string) int {
	n := 0
	for _, m := range e.emu.Messages(chat) {
		if m.Text == text {
			n++
		}
	}
	return n
}

// firstMetric is the first sample of metric family name (no labels) in
// the test's registry (nil: none).
func (e *env) firstMetric(name string) *dto.Metric {
	e.t.Helper()
	mfs, err := e.reg.Gather()
	require.NoError(e.t, err)
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) > 0 {
			return mf.GetMetric()[0]
		}
	}
	return nil
}

// gauge reads gauge name (no labels) from the test's registry (0: none).
func (e *env) gauge(name string) float64 {
	e.t.Helper()
	return e.firstMetric(name).GetGauge().GetValue()
}

// parkedLine is the end of the worker's "429: chat parked" log line: the
// park's length and its end (the server clock, to the millisecond).
var parkedLine = regexp.MustCompile(` retry_after=(\S+) until=(\S+)$`)

// parkedLog reads the worker's record of chat's park after a 429 (its log
// line "429: chat parked"): how long it parked the chat for and until
// when. It fails the test when the worker logged no park of chat.
func (e *env) parkedLog(chat int64) (retryAfter time.Duration, until time.Time) {
	e.t.Helper()
	for line := range strings.Lines(e.logs.String()) {
		if !strings.Contains(line, `msg="429: chat parked"`) || !strings.Contains(line, fmt.Sprintf(" chat=%d ", chat)) {
			continue
		}
		m := parkedLine.FindStringSubmatch(strings.TrimRight(line, "\n"))
		require.NotNil(e.t, m, "park line of chat %d: %s", chat, line)
		d, err := time.ParseDuration(m[1])
		require.NoError(e.t, err)
		u, err := time.Parse(time.RFC3339, m[2])
		require.NoError(e.t, err)
		return d, u
	}
	e.t.Fatalf("no park of chat %d logged:\n%s", chat, e.logs.String())
	return 0, time.Time{}
}

// histogramCount reads the sample count of histogram name (no labels)
// from the test's registry (0: none).
func (e *env) histogramCount(name string) uint64 {
	e.t.Helper()
	return e.firstMetric(name).GetHistogram().GetSampleCount()
}
