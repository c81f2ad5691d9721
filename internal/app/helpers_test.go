package app

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"

	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/notifier"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// adminID is the admin user of the harness (ADMIN_IDS).
const adminID = 9001

// wait bounds every wait of a test.
const wait = 20 * time.Second

// harness is an emulator, a Valkey namespace and the config of the apps a
// test runs against them.
type harness struct {
	t    testing.TB
	emu  *tgemu.Emulator
	c    valkey.Client
	srv  *valkeytest.Server
	tag  string             // the apps' VALKEY_KEY_TAG (valkeytest.Namespace)
	logs *testkit.LogBuffer // the log lines of every app of the test
	env  []string
}

// newHarness is an emulator playing harnessLimits, the rates the harness
// configures the bot with; the test fails at its end when the emulator
// answered a 429.
func newHarness(t testing.TB, env ...string) *harness {
	t.Helper()
	return newHarnessOn(t, testkit.NewEmulator(t, tgemu.WithLimits(harnessLimits())), env...)
}

// newHarnessEmu is newHarness with an emulator of options emuOpts (after
// harnessLimits, so a tgemu.WithLimits among them replaces those).
func newHarnessEmu(t testing.TB, emuOpts []tgemu.Option, env ...string) *harness {
	t.Helper()
	return newHarnessOn(t, testkit.NewEmulator(t, append([]tgemu.Option{tgemu.WithLimits(harnessLimits())}, emuOpts...)...), env...)
}

// harnessLimits are Telegram's rules (a global window, a reply window that
// also holds bulk messages to chats that just wrote, RepliesApart as the
// bot's two budgets assume, one window per private chat and per group) at
// the rates newHarnessOn gives the bot: 1,000 bulk messages/s and 1,000
// replies/s (the reply window 2,000: tgemu.Limits.Reply), 100/s per
// private chat, 6,000/min per group; paid sends at Telegram's 1,000/s. A
// bot whose pacing overruns one of them gets a 429 and fails the test.
func harnessLimits() tgemu.Limits {
	return tgemu.Limits{
		Global:  tgemu.Rate{Messages: 1000, Per: time.Second},
		Reply:   tgemu.Rate{Messages: 1000 + 1000, Per: time.Second},
		Replies: tgemu.RepliesApart,
		Paid:    tgemu.Rate{Messages: 1000, Per: time.Second},
		Private: tgemu.Rate{Messages: 100, Per: time.Second},
		Group:   tgemu.Rate{Messages: 6000, Per: time.Minute},
	}
}

// newHarnessOn is newHarness with the given emulator (e.g. one enforcing
// Telegram's limits); the bot's rates fit harnessLimits.
func newHarnessOn(t testing.TB, emu *tgemu.Emulator, env ...string) *harness {
	t.Helper()
	srv := valkeytest.Shared(t)
	h := &harness{t: t, emu: emu, srv: srv, c: srv.Client(t), tag: valkeytest.Namespace(t), logs: &testkit.LogBuffer{}}
	h.env = append([]string{
		"TELEGRAM_BOT_TOKEN=" + emu.Token(),
		"TELEGRAM_API_URL=" + emu.URL(),
		"VALKEY_URL=" + srv.URL,
		// Every app of the suite gets its keys' tag the way an operator
		// sets it: VALKEY_KEY_TAG, not WithTag.
		"VALKEY_KEY_TAG=" + h.tag,
		fmt.Sprintf("ADMIN_IDS=%d", adminID),
		"TELEGRAM_GLOBAL_RATE=1000",
		"TELEGRAM_REPLY_RATE=1000",
		"TELEGRAM_CHAT_RATE=100",
		"TELEGRAM_GROUP_RATE=6000",
		"HTTP_ADDR=127.0.0.1:0",
		"WORKERS=8",
		"LOG_LEVEL=debug",
	}, env...)
	testkit.CheckLogsAtEnd(t, h.logs, emu.Token())
	t.Cleanup(func() { // after the apps' stops, registered later
		if emu.Limits() != (tgemu.Limits{}) {
			testkit.Require429s(t, emu, 0)
		}
	})
	return h
}

// running is an App running in the background.
type running struct {
	app  *App
	addr string
	stop func()
}

// newApp builds an app with the harness config (extra env overrides) and
// short timings, serving HTTP on a free loopback port (returned).
func (h *harness) newApp(env []string, opts ...Option) (*App, string) {
	h.t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(h.t, err)
	return h.newAppOn(ln, env, opts...)
}

// newAppOn is newApp serving HTTP on ln.
func (h *harness) newAppOn(ln net.Listener, env []string, opts ...Option) (*App, string) {
	h.t.Helper()
	cfg, err := config.FromEnv(append(append([]string{}, h.env...), env...))
	require.NoError(h.t, err)
	base := []Option{WithValkey(h.c), WithPollTimeout(time.Second), WithLeaseTTL(3 * time.Second),
		WithDrainTimeout(5 * time.Second), WithEditInterval(200 * time.Millisecond), WithListener(ln), WithLogger(h.logs.Logger())}
	a, err := New(cfg, append(base, opts...)...)
	require.NoError(h.t, err)
	return a, ln.Addr().String()
}

// start runs an app with the harness config (extra env overrides) until
// stop or the end of the test.
func (h *harness) start(env []string, opts ...Option) *running {
	h.t.Helper()
	a, addr := h.newApp(env, opts...)
	return h.run(a, addr)
}

// startOn is start serving HTTP on ln.
func (h *harness) startOn(ln net.Listener, env []string, opts ...Option) *running {
	h.t.Helper()
	a, addr := h.newAppOn(ln, env, opts...)
	return h.run(a, addr)
}

// run runs a in the background until stop or the end of the test.
func (h *harness) run(a *App, addr string) *running {
	h.t.Helper()
	stopRun := testkit.RunInBackground(h.t, "app", wait, a.Run)
	stop := func() { require.NoError(h.t, stopRun()) }
	h.t.Cleanup(stop)
	return &running{app: a, addr: addr, stop: stop}
}

// waitLeader waits until r polls (holds the lease).
func (h *harness) waitLeader(r *running) {
	h.t.Helper()
	require.Eventually(h.t, func() bool { return r.app.leader.Load() && r.app.lastPoll.Load() != 0 }, wait, 10*time.Millisecond)
}

// user returns a private-chat user.
func user(id int64, first string) models.User {
	return models.User{ID: id, FirstName: first}
}

// say injects a text message of from in chat (chat 0: from's private chat).
func (h *harness) say(chat int64, from models.User, text string) models.Update {
	h.t.Helper()
	if chat == 0 {
		chat = from.ID
	}
	u, err := h.emu.InjectMessage(tgemu.TextMessage{ChatID: chat, From: from, Text: text})
	require.NoError(h.t, err)
	return u
}

// replyTo injects a reply of from in chat to message id.
func (h *harness) replyTo(chat int64, from models.User, id int, text string) {
	h.t.Helper()
	_, err := h.emu.InjectMessage(tgemu.TextMessage{ChatID: chat, From: from, Text: text, ReplyToMessageID: id})
	require.NoError(h.t, err)
}

// known makes each of chats known to the bot (a broadcast's audience):
// each sends /start and gets its one answer.
func (h *harness) known(chats ...int64) {
	h.t.Helper()
	for _, c := range chats {
		h.say(0, user(c, "U"), "/start")
	}
	for _, c := range chats {
		h.texts(c, 1)
	}
}

// texts waits until chat received n messages and returns their texts.
func (h *harness) texts(chat int64, n int) []string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	msgs, err := h.emu.WaitForMessages(ctx, chat, n)
	require.NoError(h.t, err)
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.CurrentText()
	}
	return out
}

// stallCap bounds a wait that follows a big batch of work (see
// waitProgress): its total time depends on the machine's speed, which a
// loaded CI machine divides by four or more, so only the absence of progress
// fails it; the cap keeps a wait that progresses forever finite.
const stallCap = 10 * wait

// waitProgress waits until count() reaches n: it fails when wait passes
// with no change of count() (the app stalled), or after stallCap in all,
// however the machine's load stretches the whole (a batch of 1,000 replies
// takes 5 s on an idle machine, over 20 s at load 10).
func (h *harness) waitProgress(what string, n int, count func() int) {
	h.t.Helper()
	start := time.Now()
	last := -1
	for {
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		got := 0
		err := h.emu.WaitUntil(ctx, func() bool { got = count(); return got >= n || got != last })
		cancel()
		require.NoError(h.t, err, "%s: %d of %d, no progress for %v", what, got, n, wait)
		if got >= n {
			return
		}
		require.Less(h.t, time.Since(start), stallCap, "%s: %d of %d after %v", what, got, n, stallCap)
		last = got
	}
}

// ask sends text in chat and returns the one reply it gets.
func (h *harness) ask(chat int64, from models.User, text string) string {
	h.t.Helper()
	if chat == 0 {
		chat = from.ID
	}
	before := len(h.emu.Messages(chat))
	h.say(chat, from, text)
	got := h.texts(chat, before+1)
	return got[before]
}

// quiet asserts that chat receives nothing more than it has within d.
func (h *harness) quiet(chat int64, d time.Duration) {
	h.t.Helper()
	n := len(h.emu.Messages(chat))
	time.Sleep(d)
	require.Len(h.t, h.emu.Messages(chat), n, "no message expected in chat %d", chat)
}

// get fetches path from r's HTTP server.
func (h *harness) get(r *running, path string) (int, string) {
	h.t.Helper()
	resp, err := http.Get("http://" + r.addr + path)
	require.NoError(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(h.t, err)
	return resp.StatusCode, string(b)
}

// secretRNG makes every game's secret the given default-palette indices
// (🍎=0 🍌=1 🍇=2 🍒=3 🍋=4 🥝=5), each followed by a game id that differs
// per game.
func secretRNG(idx ...byte) io.Reader { return &cycleRNG{idx: idx} }

type cycleRNG struct {
	mu  sync.Mutex
	idx []byte
	buf []byte
	n   byte
}

func (r *cycleRNG) Read(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range p {
		if len(r.buf) == 0 {
			r.n++
			r.buf = append(append([]byte{}, r.idx...), r.n, 2, 3, 4, 5, 6, 7, 8)
		}
		p[i], r.buf = r.buf[0], r.buf[1:]
	}
	return len(p), nil
}

// games returns a game store on the harness's keys, to read what the bot
// wrote.
func (h *harness) games() *gamestore.Store {
	h.t.Helper()
	s, err := gamestore.New(h.c, h.tag)
	require.NoError(h.t, err)
	return s
}

// runUntilError runs an app with the harness config (extra env overrides)
// and returns what Run returned, failing the test when it keeps running.
func (h *harness) runUntilError(env []string) error {
	h.t.Helper()
	a, _ := h.newApp(env)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	select {
	case err := <-done:
		return err
	case <-time.After(wait):
		cancel()
		<-done
		h.t.Fatalf("the app kept running for %v", wait)
		return nil
	}
}

func notifyMsg(text string) notifier.Message {
	return notifier.Message{Text: text, Class: notifier.Notification}
}

func jsonOf(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

// onceKey is the notifier's idempotency key of reply what of update id.
func onceKey(h *harness, id int64, what string) string {
	return "{" + h.tag + "}:n:once:m:" + (&update.Request{ID: id}).Key(what)
}

// rewind puts update u back on the update queue and forgets that its lane
// handled it (the handled mark, the finished set, the floor), and puts back
// the idempotency key of its first reply, which the mark deleted: the
// state after a crash between enqueueing u's replies and finishing u.
func (h *harness) rewind(a *App, u models.Update) {
	h.t.Helper()
	ctx := context.Background()
	raw, err := jsonOf(u)
	require.NoError(h.t, err)
	lane := strconv.FormatInt(chatOf(&u), 10)
	k := a.inbox.Keys()
	epoch, err := a.inbox.Epoch(ctx)
	require.NoError(h.t, err)
	for _, cmd := range []valkey.Completed{
		h.c.B().Hdel().Key(k.Done(lane)).Field(lane).Build(),
		h.c.B().Del().Key(k.Seen(lane)).Build(),
		h.c.B().Hdel().Key(k.LegacyFloor()).Field(lane).Build(),
		h.c.B().Set().Key(a.notifier.KeyName((&update.Request{ID: u.ID, Epoch: epoch}).Key("0"))).Value(string(intake.JobID(epoch, u.ID))).Build(),
	} {
		require.NoError(h.t, h.c.Do(ctx, cmd).Error())
	}
	_, err = a.inbox.Accept(ctx, []intake.Update{{ID: u.ID, JSON: []byte(raw)}})
	require.NoError(h.t, err)
}

func ptr[T any](v T) *T { return &v }

// getUpdatesCalls counts the getUpdates requests the emulator received
// since since.
func (h *harness) getUpdatesCalls(since time.Time) int {
	n := 0
	for _, rq := range h.emu.Requests() {
		if strings.EqualFold(rq.Method, "getUpdates") && !rq.Time.Before(since) {
			n++
		}
	}
	return n
}

// onServer makes the harness's apps use srv (a dedicated server) instead of
// the shared one.
func (h *harness) onServer(srv *valkeytest.Server) {
	h.t.Helper()
	h.srv, h.c = srv, srv.Client(h.t)
	h.env = append(h.env, "VALKEY_URL="+srv.URL)
}

// waitHandled waits until update u (of a chat) is handled: its lane's
// handled mark is u.ID.
func (h *harness) waitHandled(r *running, u models.Update) {
	h.t.Helper()
	h.waitHandledID(r, chatOf(&u), u.ID)
}

// waitHandledID waits until chat's handled mark is update id.
func (h *harness) waitHandledID(r *running, chat, id int64) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		_, hd, _ := r.app.inbox.Mark(context.Background(), strconv.FormatInt(chat, 10))
		return hd == id
	}, wait, 10*time.Millisecond, "update %d handled", id)
}

// waitHandledAgain waits until no recorded update is left unhandled and
// u's chat's handled mark is u.ID again (an update put back with rewind
// was handled again).
func (h *harness) waitHandledAgain(r *running, u models.Update) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		n, _ := r.app.inbox.Unhandled(context.Background())
		_, hd, _ := r.app.inbox.Mark(context.Background(), strconv.FormatInt(chatOf(&u), 10))
		return n == 0 && hd == u.ID
	}, wait, 10*time.Millisecond, "handled again")
}

// startWithHighUpdateID starts an app and has from's /start handled as
// update 900000000, the state before the server's update_id sequence is
// reset below it.
func (h *harness) startWithHighUpdateID(from models.User) *running {
	h.t.Helper()
	h.emu.SetNextUpdateID(900000000)
	r := h.start(nil)
	h.waitLeader(r)
	require.Contains(h.t, h.ask(0, from, "/start"), "Codemojex")
	return r
}

// boardRules is the first line of a default game's board.
const boardRules = "🔐 New code: 4 emojis from 🍎 🍌 🍇 🍒 🍋 🥝 (repeats allowed). Tap or type a guess: 🟢 right place, 🟡 wrong place, ⚪ no match."

// board returns chat's latest board message (the last bot message starting
// with the rules line, "🔐 ..." in every language) and whether there is
// one.
func (h *harness) board(chat int64) (tgemu.Message, bool) {
	msgs := h.emu.Messages(chat)
	for i := len(msgs) - 1; i >= 0; i-- {
		if strings.HasPrefix(msgs[i].Text, "🔐 ") { // the rules line, in every language
			return msgs[i], true
		}
	}
	return tgemu.Message{}, false
}

// waitBoard waits until chat's board shows text and returns it.
func (h *harness) waitBoard(chat int64, text string) tgemu.Message {
	h.t.Helper()
	var last tgemu.Message
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	err := h.emu.WaitUntil(ctx, func() bool {
		var ok bool
		last, ok = h.board(chat)
		return ok && last.CurrentText() == text
	})
	require.NoError(h.t, err, "board of chat %d:\n%s\nwant:\n%s", chat, last.CurrentText(), text)
	return last
}

// onNoEvictionServer moves h onto a server of its own under the noeviction
// policy and returns an admin client and a setter of its maxmemory (bytes,
// as CONFIG SET takes it: "1" makes every write answer OOM, "0" lifts it).
func (h *harness) onNoEvictionServer() (valkey.Client, func(v string)) {
	h.t.Helper()
	srv := valkeytest.Start(h.t, valkeytest.Options{ExtraArgs: []string{"--maxmemory-policy", "noeviction"}})
	h.onServer(srv)
	admin := srv.Client(h.t)
	return admin, func(v string) {
		require.NoError(h.t, admin.Do(context.Background(), admin.B().ConfigSet().ParameterValue().ParameterValue("maxmemory", v).Build()).Error())
	}
}

// startWithSecret starts an app whose games draw the secret at symbol
// indexes idx (secretRNG) and waits until it polls.
func (h *harness) startWithSecret(idx ...byte) *running {
	r := h.start(nil, WithRandom(secretRNG(idx...)))
	h.waitLeader(r)
	return r
}

// telegramLimitsEnv are Telegram's own limits for the bot (30 bulk
// messages/s, 1/s per chat, 20/min per group) with the default reply
// budget (100/s), as telegramLimits gives them to the emulator.
var telegramLimitsEnv = []string{"TELEGRAM_GLOBAL_RATE=30", "TELEGRAM_CHAT_RATE=1", "TELEGRAM_GROUP_RATE=20", "TELEGRAM_REPLY_RATE=100"}

// telegramLimits are the emulator's side of telegramLimitsEnv: its reply
// budget is the bot's plus the bulk one, since the emulator also counts a
// bulk message to a chat that just wrote as a reply (tgemu.Limits.Reply).
func telegramLimits() tgemu.Limits {
	l := tgemu.DefaultLimits()
	l.Reply = tgemu.Rate{Messages: 100 + l.Global.Messages, Per: time.Second}
	l.Replies = tgemu.RepliesApart // the bot's reply budget is apart from bulk
	return l
}

// newTelegramLimitsHarness starts a bot and an emulator both at Telegram's
// own limits (30 bulk messages/s, 1/s per chat, 20/min per group) and the
// default reply budget (100/s).
func newTelegramLimitsHarness(t *testing.T) (*harness, *running) {
	h := newHarnessOn(t, testkit.NewEmulator(t, tgemu.WithLimits(telegramLimits())), telegramLimitsEnv...)
	r := h.start(nil)
	h.waitLeader(r)
	return h, r
}

// addKnownChats makes n private chats from first on known to the emulator
// and to r's broadcast audience.
func (h *harness) addKnownChats(r *running, first int64, n int) {
	h.t.Helper()
	require.Equal(h.t, h.tag, r.app.opt.tag, "the app's audience is the harness's")
	testkit.AddAudience(h.t, h.c, h.tag, h.emu, first, n)
}

// tracked reads the tracked broadcasts (broadcast id -> tracked JSON) as
// the broadcast tracker keeps them.
func (h *harness) tracked(ctx context.Context) (map[string]string, error) {
	return h.c.Do(ctx, h.c.B().Hgetall().Key(broadcast.NewKeys(h.tag).Tracked()).Build()).AsStrMap()
}

// waitHealthz waits until r's /healthz answers code with a body starting
// with prefix (why says what the wait is for).
func (h *harness) waitHealthz(r *running, code int, prefix, why string) {
	h.t.Helper()
	require.Eventually(h.t, func() bool {
		c, body := h.get(r, "/healthz")
		return c == code && strings.HasPrefix(body, prefix)
	}, wait, 20*time.Millisecond, "/healthz %d %q: %s", code, prefix, why)
}

// keyBytes is MEMORY USAGE of key k (every sample), 0 when the key is gone:
// a key listed by a scan may expire before it is measured (a chat's pace
// log lives one pace period).
func (h *harness) keyBytes(k string) int64 {
	h.t.Helper()
	n, err := h.c.Do(context.Background(), h.c.B().MemoryUsage().Key(k).Samples(0).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0
	}
	require.NoError(h.t, err)
	return n
}

// requireEachOnce requires that each of chats got exactly one message
// whose text is text (a broadcast copy: none lost, none repeated).
func requireEachOnce(t *testing.T, emu *tgemu.Emulator, chats []int64, text string) {
	t.Helper()
	for _, c := range chats {
		require.Equal(t, 1, testkit.CopiesIn(emu, c, text), "chat %d gets the broadcast once", c)
	}
}

// startedAdmin starts the bot (newHarness, the leader polling) and has the
// admin send /start, its answer read: the harness, the run and the admin.
func startedAdmin(t *testing.T) (*harness, *running, models.User) {
	t.Helper()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	admin := user(adminID, "Admin")
	h.say(0, admin, "/start")
	h.texts(adminID, 1)
	return h, r, admin
}

// haltNotice waits (within ctx) for the paid halt notice in the admin's
// chat ("⚠️ Paid broadcast … halted") and returns it.
func (h *harness) haltNotice(ctx context.Context) tgemu.Message {
	h.t.Helper()
	var notice tgemu.Message
	require.NoError(h.t, h.emu.WaitUntil(ctx, func() bool {
		for _, m := range h.emu.Messages(adminID) {
			if strings.HasPrefix(m.Text, "⚠️ Paid broadcast") {
				notice = m
				return true
			}
		}
		return false
	}), "the admin is told the paid part halted")
	return notice
}

// paidHarness starts the bot with paid broadcasts on (1000/s) against an
// emulator at Telegram's limits, n private chats from first known, and a
// Stars balance covering a paid copy for each of them and the admin's
// chat (the preview's cost).
func paidHarness(t *testing.T, first int64, n int) (*harness, *running) {
	t.Helper()
	h := newHarnessOn(t, testkit.NewEmulator(t, tgemu.WithLimits(telegramLimits())),
		append(append([]string{}, telegramLimitsEnv...), "TELEGRAM_PAID_BROADCAST_RATE=1000")...)
	r := h.start(nil)
	h.waitLeader(r)
	h.addKnownChats(r, first, n)
	h.emu.SetStarBalance(int64(n + 1))
	return h, r
}
