package failuretest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Limits of the failure tests: Telegram's (30/s overall, 1/s per chat)
// scaled up so a burst of a few hundred messages takes seconds.
const (
	globalRate = 50
	chatRate   = 20
	senders    = 8
	// workerLease is the bot's WORKER_LEASE and handlerLease its
	// HANDLER_LEASE in the scenarios where every process stays alive (a
	// Valkey restart, an outage, a failover): a claim whose answer was lost
	// with the connection leaves a lease nobody settles, which only its
	// expiry ends; short, so those scenarios finish in seconds.
	workerLease  = 2 * time.Second
	handlerLease = 2 * time.Second
	// recoveryWait is how long after a kill a dead claimer's jobs may
	// still be sent again (its liveness ttl, the sweep's period, a claim).
	recoveryWait = consumer.DefaultLivenessTTL + consumer.DefaultLivenessTTL/5 + time.Second
)

// longLeases are the leases of the kill -9 scenarios: longer than any
// scenario's deadline (60 s), so a killed process's jobs and updates are
// taken over by the live processes' recovery of dead claimers
// (consumer.KeepAlive, within about consumer.DefaultLivenessTTL of the
// kill), never by a lease running out: a scenario that relied on that
// would time out. (The last value of a repeated variable wins.)
var longLeases = []string{"WORKER_LEASE=90s", "HANDLER_LEASE=90s"}

// proc is one running bot process and its metrics URL.
type proc struct {
	*testkit.Proc
	metrics string // http://host:port/metrics
}

// startBot runs the bot binary with role (worker, all) against srv and emu;
// extraEnv ("KEY=value") overrides the defaults (see testkit.StartBot).
func startBot(t *testing.T, bin, name, role string, srv *valkeytest.Server, emu *tgemu.Emulator, extraEnv ...string) *proc {
	t.Helper()
	addr := testkit.FreeAddr(t)
	env := []string{
		"TELEGRAM_BOT_TOKEN=" + emu.Token(),
		"TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL,
		"BOT_ROLE=" + role,
		"TELEGRAM_GLOBAL_RATE=" + strconv.Itoa(globalRate),
		"TELEGRAM_CHAT_RATE=" + strconv.Itoa(chatRate),
		"TELEGRAM_GROUP_RATE=20",
		// One shared budget, as the producer's store and the emulator
		// (no reply budget) have it.
		"TELEGRAM_REPLY_RATE=0",
		"WORKERS=" + strconv.Itoa(senders),
		"WORKER_LEASE=" + workerLease.String(),
		"HANDLER_LEASE=" + handlerLease.String(),
		"HTTP_ADDR=" + addr,
		"LOG_LEVEL=info",
	}
	return &proc{Proc: testkit.StartBot(t, bin, name, append(env, extraEnv...)), metrics: "http://" + addr + "/metrics"}
}

// sent reads the process's codemojex_worker_sent_total (all queues).
func (p *proc) sent(ctx context.Context) (int, error) {
	v, err := p.metricSum(ctx, "codemojex_worker_sent_total")
	return int(v), err
}

// metricSum reads the process's /metrics and sums every series of metric
// name (a counter or gauge with labels: name{...} value).
func (p *proc) metricSum(ctx context.Context, name string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.metrics, nil)
	if err != nil {
		return 0, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, fmt.Errorf("metrics: %w", err)
	}
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + `(?:\{[^}]*\})? ([0-9.e+]+)$`)
	sum := 0.0
	for _, m := range re.FindAllStringSubmatch(string(b), -1) {
		v, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return 0, fmt.Errorf("metrics: %q: %w", m[0], err)
		}
		sum += v
	}
	return sum, nil
}

// newEmulator starts the Bot API emulator with the scaled limits, the
// bot's (startBot), and fails the test when it answered a 429 by its end.
func newEmulator(t *testing.T) *tgemu.Emulator {
	t.Helper()
	emu := testkit.NewEmulator(t, tgemu.WithLimits(tgemu.ScaledLimits(globalRate, chatRate, 20)), tgemu.WithAllowAnyChat())
	testkit.Require429sAtEnd(t, emu, 0)
	return emu
}

// producer enqueues messages the way the bot does (same store options as
// cmd/bot with these limits, tag lanes.DefaultTag).
type producer struct {
	c     valkey.Client
	store *lanes.Store
	n     *notifier.Notifier
}

func newProducer(t *testing.T, srv *valkeytest.Server) *producer {
	t.Helper()
	c := srv.Client(t)
	// The bot's limits: Telegram's defaults (and their safety slack) with
	// the scaled rates.
	l := notifier.DefaultLimits()
	l.GlobalPerSecond, l.PrivatePerSecond = globalRate, chatRate
	store, err := notifier.NewStore(c, l, 0, lanes.WithTag(lanes.DefaultTag))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	return &producer{c: c, store: store, n: n}
}

// burst enqueues per messages to each of chats (chat ids first..first+chats-1),
// interleaved, and returns the texts expected per chat, in order.
func (p *producer) burst(ctx context.Context, t *testing.T, first int64, chats, per int) map[int64][]string {
	t.Helper()
	want := map[int64][]string{}
	for i := range per {
		for c := range chats {
			chat := first + int64(c)
			text := fmt.Sprintf("chat %d message %03d", chat, i)
			_, err := p.n.Notify(ctx, chat, notifier.Message{Text: text, Class: notifier.Notification})
			require.NoError(t, err)
			want[chat] = append(want[chat], text)
		}
	}
	return want
}

// inFlight is the number of jobs under a lease, both queues.
func (p *producer) inFlight(ctx context.Context) (int, error) {
	n := 0
	for _, q := range tgjob.Queues() {
		st, err := p.store.Inspector().Stats(ctx, q, 0)
		if err != nil {
			return 0, err
		}
		n += st.InFlight
	}
	return n, nil
}

// settled waits until both queues have nothing pending or in flight, and
// returns the dead letters.
func (p *producer) settled(ctx context.Context, t *testing.T) int {
	t.Helper()
	for {
		pending, dead := 0, 0
		for _, q := range tgjob.Queues() {
			st, err := p.store.Inspector().Stats(ctx, q, 0)
			if err == nil {
				pending += st.Pending + st.InFlight + st.Delayed
				dead += st.Dead
			} else {
				pending++
			}
		}
		if pending == 0 {
			return dead
		}
		select {
		case <-ctx.Done():
			t.Fatalf("queues not settled: %d jobs pending or in flight: %v", pending, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tally compares what each chat received with what was enqueued.
type tally struct {
	Expected, Delivered, Lost, Duplicates, Unexpected int
	OutOfOrder                                        int
}

func count(emu *tgemu.Emulator, want map[int64][]string) tally {
	var tl tally
	for chat, texts := range want {
		got := emu.Messages(chat)
		seen := map[string]int{}
		order := map[string]int{}
		for i, t := range texts {
			order[t] = i
		}
		last := -1
		for _, m := range got {
			idx, ok := order[m.Text]
			if !ok {
				tl.Unexpected++
				continue
			}
			seen[m.Text]++
			if seen[m.Text] > 1 {
				tl.Duplicates++
				continue
			}
			if idx < last {
				tl.OutOfOrder++
			}
			last = max(last, idx)
		}
		tl.Expected += len(texts)
		for _, t := range texts {
			if seen[t] == 0 {
				tl.Lost++
			} else {
				tl.Delivered++
			}
		}
	}
	return tl
}

// poll evaluates cond every 50 ms until it holds or ctx ends. The tests
// poll rather than use the emulator's change notifications: evaluating a
// condition on every request holds the emulator's lock often enough to
// skew its acceptance times, i.e. the very rate being measured.
func poll(ctx context.Context, cond func() bool) error {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// deliveredAll waits until every expected text arrived at least once.
func deliveredAll(ctx context.Context, t *testing.T, emu *tgemu.Emulator, want map[int64][]string) {
	t.Helper()
	if err := poll(ctx, func() bool { return count(emu, want).Lost == 0 }); err != nil {
		t.Fatalf("not everything was delivered: %+v: %v", count(emu, want), err)
	}
}

// waitDelivered waits until at least n messages were delivered in total.
func waitDelivered(ctx context.Context, t *testing.T, emu *tgemu.Emulator, n int) {
	t.Helper()
	var got int
	if err := poll(ctx, func() bool { got = len(emu.AllMessages()); return got >= n }); err != nil {
		t.Fatalf("%d of %d messages delivered: %v", got, n, err)
	}
}

// startCommand injects "/start" from user id and waits for the bot's
// welcome in that chat.
func startCommand(ctx context.Context, emu *tgemu.Emulator, user int64) error {
	before := len(emu.Messages(user))
	if _, err := emu.InjectMessage(tgemu.TextMessage{ChatID: user, From: models.User{ID: user, FirstName: "Player"}, Text: "/start"}); err != nil {
		return err
	}
	return waitWelcome(ctx, emu, user, before)
}

func waitWelcome(ctx context.Context, emu *tgemu.Emulator, user int64, before int) error {
	err := poll(ctx, func() bool {
		msgs := emu.Messages(user)
		return len(msgs) > before && slices.ContainsFunc(msgs[before:], func(m tgemu.Message) bool {
			return strings.Contains(m.Text, "Welcome")
		})
	})
	if err != nil {
		return errors.Join(fmt.Errorf("no welcome in chat %d", user), err)
	}
	return nil
}

func tgemuText(user int64, text string) tgemu.TextMessage {
	return tgemu.TextMessage{ChatID: user, From: models.User{ID: user, FirstName: "Player"}, Text: text}
}

// sentUpdate is one injected user message and the reply it must get.
type sentUpdate struct {
	chat  int64
	msgID int
	id    int64  // update_id
	kind  string // "play", "guess", "help"
	guess int    // 1-based guess number in its chat (kind "guess")
}

var attemptRE = regexp.MustCompile(`attempt (\d+)/\d+`)

// inboxState is the app's intake as stored in Valkey: the getUpdates
// offset (-1 before any) and the updates recorded and not yet handled.
type inboxState struct {
	Offset, Unhandled int64
}

func readInbox(ctx context.Context, c valkey.Client) (inboxState, error) {
	var st inboxState
	v, err := c.Do(ctx, c.B().Get().Key(inboxOffset).Build()).AsInt64()
	switch {
	case valkey.IsValkeyNil(err):
		st.Offset = -1
	case err != nil:
		return st, err
	default:
		st.Offset = v
	}
	st.Unhandled, err = c.Do(ctx, c.B().Zcard().Key(inboxUnhandled).Build()).AsInt64()
	return st, err
}

// requireClearOutageError checks the error of an enqueue while Valkey is
// down: it says which component and chat failed
// ("notifier: ... chat 5002") and why (the connection is refused, not a
// bare timeout), and never shows the bot token.
func requireClearOutageError(t *testing.T, err error, token string, chat int64) {
	t.Helper()
	msg := err.Error()
	require.True(t, strings.HasPrefix(msg, "notifier: "), "the error names the component: %q", msg)
	require.Contains(t, msg, "chat "+strconv.FormatInt(chat, 10), "the error names the chat the enqueue was for: %q", msg)
	require.Contains(t, msg, "connection refused", "the error names the cause: %q", msg)
	require.NotEqual(t, context.DeadlineExceeded.Error(), msg, "not a bare timeout")
	testkit.RequireNoToken(t, msg, token, "the error")
}
