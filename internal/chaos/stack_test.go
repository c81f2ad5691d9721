package chaos

import (
	"cmp"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Limits of the run: Telegram's (30/s overall, 1/s per chat, 20/min per
// group) scaled up as in the failure tests, so a minute does real work.
const (
	globalRate = 50
	chatRate   = 20
	groupRate  = 600 // messages/min per group
	// replyRate is the bot's TELEGRAM_REPLY_RATE: a reply budget apart
	// from the bulk one, which paid broadcasts need (the config refuses
	// TELEGRAM_PAID_BROADCAST_RATE with one shared budget); replies and
	// bulk together start at globalRate, the emulator's one window, and
	// are probed upward from there (docs/delivery.md).
	replyRate = globalRate
	// paidRate is the bot's TELEGRAM_PAID_BROADCAST_RATE (the emulator's
	// paid window is 1,000/s): the paid broadcast's audience in seconds.
	paidRate = 100
	senders  = 8
	// lease is the bot's WORKER_LEASE and HANDLER_LEASE; a SIGSTOP lasts
	// longer, so the frozen process's work is taken over while it sleeps.
	lease = 5 * time.Second
	// adminID is the bot's ADMIN_IDS.
	adminID = 9000
	tag     = lanes.DefaultTag
)

// Intake modes of a run (CHAOS_INTAKE): the poller slot fetches updates
// with getUpdates (intakePoller, the default) or receives them on a
// webhook (intakeWebhook: BOT_ROLE=poller with TELEGRAM_WEBHOOK_URL, its
// receiving end; internal/webhook).
const (
	intakePoller  = "poller"
	intakeWebhook = "webhook"
)

// The webhook of a webhook run: the path the receiver serves, its secret
// (TELEGRAM_WEBHOOK_SECRET), and the emulator's delivery timing
// (tgemu.WithWebhookTiming, its defaults): a POST unanswered after
// webhookTimeout failed, and a failed update is sent again webhookRetry
// later, forever. Telegram documents neither: only that it repeats an
// unsuccessful request and gives up "after a reasonable amount of
// attempts" (docs/chaos.md, "Webhook intake").
const (
	webhookPath    = "/tg/hook"
	webhookSecret  = "chaos_webhook-secret"
	webhookTimeout = 5 * time.Second
	webhookRetry   = 200 * time.Millisecond
)

// The app's intake keys (docs/keys.md, tag lanes.DefaultTag), read only.
const (
	inboxUnhandled = "{" + tag + "}:app:in:rec"
)

// Valkey deployments of a run (CHAOS_STORE): one primary with a replica
// behind the proxy (storeStandalone, the default), or a Valkey Cluster of
// three primaries with one replica each, reached directly (storeCluster;
// docs/chaos.md, "Cluster runs").
const (
	storeStandalone = "standalone"
	storeCluster    = "cluster"
)

// slot is one bot process of the deployment, replaced on a restart.
type slot struct {
	name, role string
	mu         sync.Mutex // held by a fault for its whole span
	pmu        sync.Mutex // guards p
	p          *testkit.Proc
	addr       string // p's HTTP_ADDR (its /metrics)
	console    string // its CONSOLE_ADDR, the same across restarts ("" when it serves no console)
	starts     int
	all        []*testkit.Proc // every process it ran, for the logs
	exits      []string        // the processes that exited on their own: name and last line
}

func (s *slot) proc() *testkit.Proc {
	s.pmu.Lock()
	defer s.pmu.Unlock()
	return s.p
}

// stack is everything the run starts: two Valkey servers (a primary and
// its replica, swapped by a failover), the proxy the bot reaches Valkey
// through, the emulator and the bot's processes; in a cluster run
// (storeCluster) a Valkey Cluster instead of the two servers and the
// proxy.
type stack struct {
	t   *testing.T
	bin string
	emu *tgemu.Emulator

	vmu     sync.Mutex // serialises the Valkey faults (restart, failover, cut)
	nodes   [2]*valkeyserver.Server
	clients [2]valkey.Client
	stores  [2]*lanes.Store
	pmu     sync.Mutex // guards primary
	primary int        // index of the current primary in nodes

	// A cluster run's Valkey (nil, nil, nil in a standalone one): the
	// cluster, a cluster client of it and the lanes store on that client
	// (which follows the bot's slot to its current primary).
	cluster  *valkeyserver.Server
	cc       valkey.Client
	ccStore  *lanes.Store
	ncmu     sync.Mutex               // guards nodeClis
	nodeClis map[string]valkey.Client // one client of each cluster node by address, made on first use

	proxy *toxiproxy.Proxy
	addr  string // the proxy's host:port, the bot's VALKEY_URL
	slots []*slot
	// intake is intakePoller or intakeWebhook; in a webhook run hookAddr
	// is the poller slot's HTTP_ADDR, the same for every process it
	// runs (a deployment's webhook URL does not change on a restart).
	intake   string
	hookAddr string
	// consoleToken is the console's CONSOLE_TOKEN (52 random base32 characters).
	consoleToken string
	// logLevel is every bot process's LOG_LEVEL (CHAOS_LOG_LEVEL).
	logLevel string
}

// startStack starts Valkey with a replica, the proxy, the emulator and the
// bot's processes (poller, handler-1, handler-2, worker-1, worker-2, and
// the console: a worker of one sender serving the console, consoleEnv) at
// LOG_LEVEL cfg.LogLevel, their output written to a chaos-logs-* directory
// when t failed or cfg.KeepLogs; in intake mode (cfg.Intake) intakeWebhook
// the poller receives on a webhook
// (hookURL), which the emulator, as a local Bot API server, takes as
// http://.
// In store mode (cfg.Store) storeCluster Valkey is a cluster of three
// primaries with one replica each (append-only, cluster-node-timeout 2 s)
// the bot reaches directly (startCluster), with no proxy.
func startStack(t *testing.T, bin string, cfg runConfig) *stack {
	t.Helper()
	intake := cfg.Intake
	st := &stack{t: t, bin: bin, intake: intake, logLevel: cmp.Or(cfg.LogLevel, defaultLogLevel), consoleToken: rand.Text() + rand.Text()}
	if cfg.Store == storeCluster {
		st.startCluster()
	} else {
		st.startStandalone()
	}
	// Registered before the processes start, so it runs after their
	// cleanups have stopped them: their whole output, kept when t failed
	// (or asked to: CHAOS_KEEP_LOGS).
	t.Cleanup(func() {
		if t.Failed() || cfg.KeepLogs {
			st.keepLogs()
		}
	})
	opts := []tgemu.Option{tgemu.WithLimits(tgemu.ScaledLimits(globalRate, chatRate, groupRate)), tgemu.WithAllowAnyChat()}
	if intake == intakeWebhook {
		st.hookAddr = testkit.FreeAddr(t)
		opts = append(opts, tgemu.WithLocalBotAPI(), tgemu.WithWebhookTiming(webhookTimeout, webhookRetry))
	}
	st.emu = testkit.NewEmulator(t, opts...)
	for _, s := range []struct{ name, role string }{
		{"poller", "poller"}, {"handler-1", "handler"}, {"handler-2", "handler"}, {"worker-1", "worker"}, {"worker-2", "worker"},
		{consoleSlot, "worker"},
	} {
		sl := &slot{name: s.name, role: s.role}
		if s.name == consoleSlot {
			sl.console = testkit.FreeAddr(t)
		}
		st.slots = append(st.slots, sl)
		st.start(sl)
	}
	return st
}

// limits are the lanes limits of the run's own stores (the bot's).
func limits() notifier.Limits {
	l := notifier.DefaultLimits()
	l.GlobalPerSecond, l.PrivatePerSecond = globalRate, chatRate
	l.ReplyPerSecond, l.PaidPerSecond = replyRate, paidRate
	return l
}

// startStandalone starts the primary, its replica and the proxy.
func (st *stack) startStandalone() {
	t := st.t
	for i := range st.nodes {
		srv, err := valkeyserver.Start("standalone", valkeyserver.Options{AppendOnly: true})
		require.NoError(t, err)
		t.Cleanup(srv.Stop)
		st.nodes[i] = srv
		c, err := srv.NewClient()
		require.NoError(t, err)
		t.Cleanup(c.Close)
		st.clients[i] = c
		store, err := notifier.NewStore(c, limits(), 0, lanes.WithTag(tag))
		require.NoError(t, err)
		st.stores[i] = store
	}
	require.NoError(t, st.replicaOf(context.Background(), 1, 0))

	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	st.proxy = toxiproxy.NewProxy(server, "valkey", "127.0.0.1:0", st.nodes[0].Addr)
	require.NoError(t, st.proxy.Start())
	t.Cleanup(st.proxy.Stop)
	st.addr = st.proxy.Listen // the port it listens on again after a Stop
}

// replicaOf makes node replica a replica of node primary ("REPLICAOF NO
// ONE" when primary < 0).
func (st *stack) replicaOf(ctx context.Context, replica, primary int) error {
	c := st.clients[replica]
	args := []string{"NO", "ONE"}
	if primary >= 0 {
		host, port, _ := net.SplitHostPort(st.nodes[primary].Addr)
		args = []string{host, port}
	}
	if err := c.Do(ctx, c.B().Arbitrary("REPLICAOF").Args(args...).Build()).Error(); err != nil {
		return fmt.Errorf("replicaof on %s: %w", st.nodes[replica].Addr, err)
	}
	return nil
}

// cur is the current primary's index.
func (st *stack) cur() int {
	st.pmu.Lock()
	defer st.pmu.Unlock()
	return st.primary
}

// client is a client of the current primary (not through the proxy: the
// checker's reads are not subject to the network faults); in a cluster
// run the cluster client, which finds the current primary of a key's
// slot itself.
func (st *stack) client() valkey.Client {
	if st.cluster != nil {
		return st.cc
	}
	return st.clients[st.cur()]
}

// store is the lanes store on the current primary (its Inspector); in a
// cluster run, on the cluster client.
func (st *stack) store() *lanes.Store {
	if st.cluster != nil {
		return st.ccStore
	}
	return st.stores[st.cur()]
}

// primaryNode is the server now primary for the bot's keys and a client of
// that one server (not a cluster client: INFO, CONFIG and SCRIPT reach
// it): the current primary, or in a cluster run the primary of the bot's
// hash slot as the cluster tells (slotOwner). Errors: slotOwner's.
func (st *stack) primaryNode(ctx context.Context) (*valkeyserver.Server, valkey.Client, error) {
	if st.cluster == nil {
		cur := st.cur()
		return st.nodes[cur], st.clients[cur], nil
	}
	p, _, err := st.slotOwner(ctx)
	if err != nil {
		return nil, nil, err
	}
	c, err := st.nodeClient(p)
	return p, c, err
}

// hookURL is the webhook's URL in a webhook run ("" in a polling one).
func (st *stack) hookURL() string {
	if st.intake != intakeWebhook {
		return ""
	}
	return "http://" + st.hookAddr + webhookPath
}

// env is sl's process's whole environment: its role's, and in a webhook
// run the poller's webhook (on HTTP_ADDR hookAddr, every start).
func (st *stack) env(sl *slot) []string {
	addr := testkit.FreeAddr(st.t)
	var hook []string
	if sl.role == "poller" && st.intake == intakeWebhook {
		addr = st.hookAddr
		hook = []string{"TELEGRAM_WEBHOOK_URL=" + st.hookURL(), "TELEGRAM_WEBHOOK_SECRET=" + webhookSecret}
	}
	return append([]string{
		"TELEGRAM_BOT_TOKEN=" + st.emu.Token(),
		"TELEGRAM_API_URL=" + st.emu.URL(),
		"VALKEY_URL=" + st.valkeyURL(),
		"BOT_ROLE=" + sl.role,
		"ADMIN_IDS=" + strconv.Itoa(adminID),
		"TELEGRAM_GLOBAL_RATE=" + strconv.Itoa(globalRate),
		"TELEGRAM_CHAT_RATE=" + strconv.Itoa(chatRate),
		"TELEGRAM_GROUP_RATE=" + strconv.Itoa(groupRate),
		"TELEGRAM_REPLY_RATE=" + strconv.Itoa(replyRate),
		"TELEGRAM_PAID_BROADCAST_RATE=" + strconv.Itoa(paidRate),
		"WORKERS=" + strconv.Itoa(senders),
		"WORKER_LEASE=" + lease.String(),
		"HANDLER_LEASE=" + lease.String(),
		"HTTP_ADDR=" + addr,
		"LOG_LEVEL=" + st.logLevel,
		// Every run has a replica (of the slot's primary in a cluster): an
		// update is confirmed to Telegram once it holds it (docs/operations.md).
		"VALKEY_WAIT_REPLICAS=1",
	}, hook...)
}

// valkeyURL is the bot's VALKEY_URL: the proxy's, or in a cluster run the
// cluster's (every node named, ?addr=, so the bot's client finds the
// cluster whichever node is down at its start).
func (st *stack) valkeyURL() string {
	if st.cluster != nil {
		return st.cluster.URL
	}
	return "redis://" + st.addr + "/0"
}

// consoleEnv is what the console's process adds to its role's
// environment (later values win): the console on addr, and one sender
// (the bot has no role of the console alone: it is served by a process
// of a role; a worker of one sender does the least else, where a second
// poller would stand by for the poller's lease and a third handler take
// updates).
func (st *stack) consoleEnv(addr string) []string {
	return []string{"CONSOLE_ADDR=" + addr, "CONSOLE_TOKEN=" + st.consoleToken, "WORKERS=1"}
}

// start starts sl's process (again).
func (st *stack) start(sl *slot) {
	env := st.env(sl)
	if sl.console != "" {
		env = append(env, st.consoleEnv(sl.console)...)
	}
	var addr string
	for _, kv := range env {
		if a, ok := strings.CutPrefix(kv, "HTTP_ADDR="); ok {
			addr = a
		}
	}
	p := testkit.StartBot(st.t, st.bin, fmt.Sprintf("%s#%d", sl.name, sl.starts+1), env)
	sl.pmu.Lock()
	sl.p, sl.addr, sl.starts = p, addr, sl.starts+1
	sl.all = append(sl.all, p)
	sl.pmu.Unlock()
}

// slot is the slot named name (nil when none is).
func (st *stack) slot(name string) *slot {
	for _, sl := range st.slots {
		if sl.name == name {
			return sl
		}
	}
	return nil
}

// signal sends sig to sl's process.
func (sl *slot) signal(sig syscall.Signal) {
	_ = sl.proc().Cmd.Process.Signal(sig)
}

// inFlight is the number of sends under a lease, both queues (0 when the
// primary does not answer).
func (st *stack) inFlight(ctx context.Context) int {
	n := 0
	for _, q := range tgjob.AllQueues() {
		s, err := st.store().Inspector().Stats(ctx, q, 0)
		if err == nil {
			n += s.InFlight
		}
	}
	return n
}

// queues sums both send queues' stats on the current primary.
func (st *stack) queues(ctx context.Context) (lanes.Stats, error) {
	var sum lanes.Stats
	for _, q := range tgjob.AllQueues() {
		s, err := st.store().Inspector().Stats(ctx, q, 0)
		if err != nil {
			return sum, err
		}
		sum.Pending += s.Pending
		sum.InFlight += s.InFlight
		sum.Delayed += s.Delayed
		sum.Dead += s.Dead
		sum.Recovered += s.Recovered
	}
	return sum, nil
}

// unhandled is the number of updates recorded and not yet handled.
func (st *stack) unhandled(ctx context.Context) (int64, error) {
	c := st.client()
	return c.Do(ctx, c.B().Zcard().Key(inboxUnhandled).Build()).AsInt64()
}

// usedMemory is the current primary's INFO memory used_memory, bytes (in
// a cluster run, of the bot's slot's primary).
func (st *stack) usedMemory(ctx context.Context) (int64, error) {
	_, c, err := st.primaryNode(ctx)
	if err != nil {
		return 0, err
	}
	return infoField(ctx, c, "memory", "used_memory")
}

// infoField reads one integer field of INFO section.
func infoField(ctx context.Context, c valkey.Client, section, field string) (int64, error) {
	v, err := infoString(ctx, c, section, field)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(v, 10, 64)
}

// infoString reads one field of INFO section.
func infoString(ctx context.Context, c valkey.Client, section, field string) (string, error) {
	s, err := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
	if err != nil {
		return "", fmt.Errorf("info %s: %w", section, err)
	}
	for line := range strings.SplitSeq(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), field+":"); ok {
			return v, nil
		}
	}
	return "", fmt.Errorf("info %s: no %s", section, field)
}

// caughtUp reports whether node replica holds every write of node
// primary: its link is up, it follows the primary's replication id (a
// restarted primary has a new one, and its replica a full sync to do) and
// has applied up to the primary's offset.
func (st *stack) caughtUp(ctx context.Context, replica, primary int) bool {
	link, err1 := infoString(ctx, st.clients[replica], "replication", "master_link_status")
	rid, err2 := infoString(ctx, st.clients[replica], "replication", "master_replid")
	pid, err3 := infoString(ctx, st.clients[primary], "replication", "master_replid")
	got, err4 := infoField(ctx, st.clients[replica], "replication", "slave_repl_offset")
	want, err5 := infoField(ctx, st.clients[primary], "replication", "master_repl_offset")
	return errors.Join(err1, err2, err3, err4, err5) == nil && link == "up" && rid == pid && got >= want
}

// failover moves the primary to its replica without losing an
// acknowledged write, the way a planned failover does: the proxy stops
// (the bot's connections drop), the replica catches up with the primary's
// replication offset, is promoted, the old primary follows it, and the
// proxy starts again towards the new primary. It returns how long the bot
// was cut off.
func (st *stack) failover(ctx context.Context) (time.Duration, error) {
	t0 := time.Now()
	st.proxy.Stop()
	defer func() { _ = st.proxy.Start() }()
	old := st.cur()
	next := 1 - old
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for !st.caughtUp(ctx, next, old) {
		select {
		case <-ctx.Done():
			return time.Since(t0), fmt.Errorf("failover: replica %s never caught up: %w", st.nodes[next].Addr, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if err := st.replicaOf(ctx, next, -1); err != nil {
		return time.Since(t0), err
	}
	if err := st.replicaOf(ctx, old, next); err != nil {
		return time.Since(t0), err
	}
	st.pmu.Lock()
	st.primary = next
	st.pmu.Unlock()
	st.proxy.Lock()
	st.proxy.Upstream = st.nodes[next].Addr
	st.proxy.Unlock()
	return time.Since(t0), nil
}

// restartPrimary restarts the current primary (SIGTERM, then the same port
// and append-only file): acknowledged writes survive.
func (st *stack) restartPrimary() error {
	return st.nodes[st.cur()].Restart()
}

// addToxic adds a toxic to the proxy's stream from Valkey to the bot.
func (st *stack) addToxic(name, kind string, attrs string) error {
	js := fmt.Sprintf(`{"name":%q,"type":%q,"stream":"downstream","toxicity":1,"attributes":%s}`, name, kind, attrs)
	_, err := st.proxy.Toxics.AddToxicJson(strings.NewReader(js))
	return err
}

func (st *stack) removeToxic(name string) error {
	return st.proxy.Toxics.RemoveToxic(context.Background(), name)
}

// deadLetters lists the dead letters of every send queue (up to 1,000 each).
func (st *stack) deadLetters(ctx context.Context) ([]lanes.DeadLetter, error) {
	var out []lanes.DeadLetter
	for _, q := range tgjob.AllQueues() {
		dl, err := st.store().Inspector().DeadLetters(ctx, q, lanes.DeadQuery{Newest: 1000})
		if err != nil {
			return out, err
		}
		out = append(out, dl...)
	}
	return out, nil
}

// keepLogs writes every bot process's whole output to a new directory
// (chaos-logs-* under the system's temporary directory, one <process>.log
// per process started, e.g. worker-1#1.log, worker-1#2.log after a
// restart) and names it; it stays until removed.
func (st *stack) keepLogs() {
	dir, err := os.MkdirTemp("", "chaos-logs-")
	if err != nil {
		st.t.Logf("process logs not kept: %v", err)
		return
	}
	for _, sl := range st.slots {
		sl.pmu.Lock()
		all := slices.Clone(sl.all)
		sl.pmu.Unlock()
		for _, p := range all {
			_ = os.WriteFile(filepath.Join(dir, p.Name+".log"), []byte(p.Out.String()), 0o644)
		}
	}
	st.t.Logf("every bot process's output: %s", dir)
}

// supervise restarts, every 500 ms until ctx ends, any bot process that
// exited on its own, as docker compose's restart policy (unless-stopped)
// does: the bot exits when it cannot reach Valkey at its start, e.g. when
// restarted during a network cut. A process a fault holds is left to it.
func (st *stack) supervise(ctx context.Context) {
	for ctx.Err() == nil {
		for _, sl := range st.slots {
			if sl.mu.TryLock() {
				st.revive(sl)
				sl.mu.Unlock()
			}
		}
		sleep(ctx, 500*time.Millisecond)
	}
}

// revive restarts sl's process when it exited on its own, recording the
// exit; the caller holds sl.mu.
func (st *stack) revive(sl *slot) {
	p := sl.proc()
	if !p.Exited() {
		return
	}
	out := strings.TrimSpace(p.Out.String())
	if i := strings.LastIndexByte(out, '\n'); i >= 0 {
		out = out[i+1:]
	}
	sl.pmu.Lock()
	sl.exits = append(sl.exits, fmt.Sprintf("%s: %v: %s", p.Name, p.ExitErr(), out))
	sl.pmu.Unlock()
	st.start(sl)
}

// exits lists the processes that exited on their own.
func (st *stack) exits() []string {
	var out []string
	for _, sl := range st.slots {
		sl.pmu.Lock()
		out = append(out, sl.exits...)
		sl.pmu.Unlock()
	}
	return out
}

// workFamilies are the counters of a process's work, one per update
// recorded (poller), handled (handler) or message sent (worker).
var workFamilies = []string{"codemojex_updates_received_total", "codemojex_updates_handled_total", "codemojex_worker_sent_total"}

// procStat is one bot process's goroutines and work, read from its
// /metrics.
type procStat struct {
	Name       string // the process's name (slot#start)
	Goroutines int    // go_goroutines
	Work       int    // the sum of workFamilies' series: updates recorded, handled, messages sent
}

// stat reads sl's current process's /metrics. Errors: the request's, or
// no go_goroutines in the answer.
func (st *stack) stat(ctx context.Context, sl *slot) (procStat, error) {
	sl.pmu.Lock()
	p, addr := sl.p, sl.addr
	sl.pmu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return procStat{}, fmt.Errorf("%s metrics: %w", p.Name, err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return procStat{}, fmt.Errorf("%s metrics: %w", p.Name, err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return procStat{}, fmt.Errorf("%s metrics: %w", p.Name, err)
	}
	out, found := procStat{Name: p.Name}, false
	for _, line := range strings.Split(string(body), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		n, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		if name == "go_goroutines" {
			out.Goroutines, found = int(n), true
		}
		if family, _, _ := strings.Cut(name, "{"); slices.Contains(workFamilies, family) {
			out.Work += int(n)
		}
	}
	if !found {
		return procStat{}, fmt.Errorf("%s metrics: no go_goroutines", p.Name)
	}
	return out, nil
}

// baseline is stats once every process has started its work: its
// /healthz answers 200 (Valkey answers; in the poller and handler roles
// getMe succeeded, which a handler waits for before it starts its
// handlers) and two reads of its /metrics 1 s apart find the same
// goroutines. Read at once, a process still starting (a loaded host)
// showed 25-29 goroutines where its started self runs 72-75, and was then
// judged a leak after settling. Errors: a process not so within a minute
// (the last read's error, or its two counts).
func (st *stack) baseline(ctx context.Context) (map[string]procStat, error) {
	out := map[string]procStat{}
	for _, sl := range st.slots {
		var a, b procStat
		var err error
		waitFor(ctx, time.Minute, func() bool {
			if err = st.healthy(ctx, sl); err != nil {
				return false
			}
			if a, err = st.stat(ctx, sl); err != nil {
				return false
			}
			sleep(ctx, time.Second)
			if b, err = st.stat(ctx, sl); err != nil {
				return false
			}
			if a.Name != b.Name || a.Goroutines != b.Goroutines {
				err = fmt.Errorf("%s: %d goroutines, then %d a second later (%s)", a.Name, a.Goroutines, b.Goroutines, b.Name)
				return false
			}
			return true
		})
		if err != nil {
			return nil, err
		}
		out[sl.name] = b
	}
	return out, nil
}

// healthy asks sl's current process's /healthz. Errors: the request's, or
// a status other than 200 (with the answer's reason).
func (st *stack) healthy(ctx context.Context, sl *slot) error {
	sl.pmu.Lock()
	p, addr := sl.p, sl.addr
	sl.pmu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
	if err != nil {
		return fmt.Errorf("%s healthz: %w", p.Name, err)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("%s healthz: %w", p.Name, err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s healthz: %s: %s", p.Name, res.Status, strings.TrimSpace(string(body)))
	}
	return nil
}

// stats reads every slot's process's /metrics, by slot name, each tried
// again every 50 ms for up to a minute (a process just started, on a
// loaded host, may not listen yet). Errors: the last try's.
func (st *stack) stats(ctx context.Context) (map[string]procStat, error) {
	out := map[string]procStat{}
	for _, sl := range st.slots {
		var s procStat
		var err error
		waitFor(ctx, time.Minute, func() bool {
			s, err = st.stat(ctx, sl)
			return err == nil
		})
		if err != nil {
			return nil, err
		}
		out[sl.name] = s
	}
	return out, nil
}

// busyThreshold is the primary's busy-reply-threshold during a BUSY fault:
// a script running longer than it makes the server answer every other
// command "BUSY" (before it, commands merely wait), so the bot meets the
// error at once rather than a stall of 5 s (the default) first.
const busyThreshold = 100 * time.Millisecond

// busy runs a long script on the current primary from a client of its own
// for about d (SCRIPT KILL then; the script would end by itself 2 s
// later), with busy-reply-threshold lowered to busyThreshold and restored
// after, so every bot process's commands are answered BUSY for d. Errors:
// the configuration's, BUSY never seen within 5 s of the script's start,
// or the script not ended (SCRIPT KILL failing and the script outliving
// its own bound).
func (st *stack) busy(ctx context.Context, d time.Duration) (err error) {
	node, c, err := st.primaryNode(ctx)
	if err != nil {
		return fmt.Errorf("busy: %w", err)
	}
	prev, err := configGet(ctx, c, "busy-reply-threshold")
	if err != nil {
		return err
	}
	if err := configSet(ctx, c, "busy-reply-threshold", strconv.Itoa(int(busyThreshold.Milliseconds()))); err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, configSet(context.WithoutCancel(ctx), c, "busy-reply-threshold", prev))
	}()
	runner, err := node.NodeClient()
	if err != nil {
		return fmt.Errorf("busy: a client for the script: %w", err)
	}
	defer runner.Close()
	ended := make(chan error, 1)
	go func() {
		ms := strconv.FormatInt((d + 2*time.Second).Milliseconds(), 10)
		ended <- runner.Do(context.WithoutCancel(ctx), runner.B().Eval().Script(valkeytest.BusyScript).Numkeys(0).Arg(ms).Build()).Error()
	}()
	seen := waitFor(ctx, 5*time.Second, func() bool {
		err := c.Do(ctx, c.B().Ping().Build()).Error()
		return err != nil && strings.HasPrefix(err.Error(), "BUSY")
	})
	sleep(ctx, d)
	kill := c.Do(context.WithoutCancel(ctx), c.B().ScriptKill().Build()).Error()
	select {
	case <-ended:
	case <-time.After(5 * time.Second):
		return fmt.Errorf("busy: the script still runs after SCRIPT KILL (%v)", kill)
	}
	if !seen {
		return errors.New("busy: the primary never answered BUSY")
	}
	return nil
}

// outOfMemory lowers the current primary's maxmemory a tenth below the
// memory it counts against it (used_memory less mem_not_counted_for_evict)
// under maxmemory-policy noeviction for d, so every write the bot tries
// (a command or a script's first write) is answered "OOM command not
// allowed", then restores both settings. Errors: the configuration's, or
// a probe write (SET of a key of the run's own) that is not answered OOM.
func (st *stack) outOfMemory(ctx context.Context, d time.Duration) (err error) {
	_, c, err := st.primaryNode(ctx)
	if err != nil {
		return fmt.Errorf("oom: %w", err)
	}
	prevMax, err1 := configGet(ctx, c, "maxmemory")
	prevPolicy, err2 := configGet(ctx, c, "maxmemory-policy")
	used, err3 := infoField(ctx, c, "memory", "used_memory")
	notCounted, err4 := infoField(ctx, c, "memory", "mem_not_counted_for_evict")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return fmt.Errorf("oom: %w", err)
	}
	limit := (used - notCounted) * 9 / 10
	if err := configSet(ctx, c, "maxmemory-policy", "noeviction", "maxmemory", strconv.FormatInt(limit, 10)); err != nil {
		return err
	}
	defer func() {
		err = errors.Join(err, configSet(context.WithoutCancel(ctx), c, "maxmemory", prevMax, "maxmemory-policy", prevPolicy))
	}()
	key := st.probeKey(oomProbe)
	probe := c.Do(ctx, c.B().Set().Key(key).Value("1").Build()).Error()
	if probe == nil || !strings.HasPrefix(probe.Error(), "OOM") {
		_ = c.Do(ctx, c.B().Del().Key(key).Build()).Error()
		return fmt.Errorf("oom: a write under maxmemory %d (used %d, %d not counted) answered %v, not OOM", limit, used, notCounted, probe)
	}
	sleep(ctx, d)
	return nil
}

// oomProbe is the key outOfMemory tries to write (outside the bot's tag;
// see probeKey).
const oomProbe = "chaos:oom-probe"

// probeKey is the key a probe write of a fault uses: key, or in a cluster
// run key in the bot's hash tag, so it hashes to the slot of the node the
// fault holds (a key of another slot would be answered MOVED, which a
// node checks before memory).
func (st *stack) probeKey(key string) string {
	if st.cluster != nil {
		return "{" + tag + "}:" + key
	}
	return key
}

// configGet reads one configuration parameter.
func configGet(ctx context.Context, c valkey.Client, name string) (string, error) {
	m, err := c.Do(ctx, c.B().ConfigGet().Parameter(name).Build()).AsStrMap()
	if err != nil {
		return "", fmt.Errorf("config get %s: %w", name, err)
	}
	v, ok := m[name]
	if !ok {
		return "", fmt.Errorf("config get %s: not in the answer %v", name, m)
	}
	return v, nil
}

// configSet sets parameters (name, value pairs) at once.
func configSet(ctx context.Context, c valkey.Client, pairs ...string) error {
	if err := c.Do(ctx, c.B().Arbitrary("CONFIG", "SET").Args(pairs...).Build()).Error(); err != nil {
		return fmt.Errorf("config set %v: %w", pairs, err)
	}
	return nil
}

// readonly demotes the current primary for d, as a failover elsewhere
// demotes one in the field: REPLICAOF a listener of the run's own that
// accepts nothing (the primary's connection waits in its backlog for an
// answer to PING that never comes, so no sync, and no flush of its data,
// can begin), so every write the bot tries (a command, or a script's
// first write) is answered "READONLY You can't write against a read only
// replica." while reads are answered from the data it holds; then
// REPLICAOF NO ONE, and it waits (up to 20 s, as a failover does) for
// the stack's replica, which stays connected to it throughout, to follow
// its new replication id (a partial resync) and catch up. Errors: the listener's or a
// REPLICAOF's, a probe write (SET of a key of the run's own) not answered
// READONLY, or the replica not caught up.
func (st *stack) readonly(ctx context.Context, d time.Duration) (err error) {
	if st.cluster != nil {
		return errors.New("readonly: not in a cluster run (REPLICAOF is refused in cluster mode)")
	}
	cur := st.cur()
	c := st.clients[cur]
	nowhere, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("readonly: a listener to follow: %w", err)
	}
	defer nowhere.Close()
	host, port, _ := net.SplitHostPort(nowhere.Addr().String())
	if err := c.Do(ctx, c.B().Arbitrary("REPLICAOF").Args(host, port).Build()).Error(); err != nil {
		return fmt.Errorf("readonly: replicaof %s on %s: %w", nowhere.Addr(), st.nodes[cur].Addr, err)
	}
	defer func() {
		ctx := context.WithoutCancel(ctx)
		if e := st.replicaOf(ctx, cur, -1); e != nil {
			err = errors.Join(err, fmt.Errorf("readonly: %w", e))
			return
		}
		replica := 1 - cur
		if st.nodes[replica] != nil && !waitFor(ctx, 20*time.Second, func() bool { return st.caughtUp(ctx, replica, cur) }) {
			err = errors.Join(err, fmt.Errorf("readonly: replica %s not caught up with %s within 20 s", st.nodes[replica].Addr, st.nodes[cur].Addr))
		}
	}()
	probe := c.Do(ctx, c.B().Set().Key(readonlyProbe).Value("1").Build()).Error()
	if probe == nil || !strings.HasPrefix(probe.Error(), "READONLY") {
		_ = c.Do(ctx, c.B().Del().Key(readonlyProbe).Build()).Error()
		return fmt.Errorf("readonly: a write after replicaof %s answered %v, not READONLY", nowhere.Addr(), probe)
	}
	sleep(ctx, d)
	return nil
}

// readonlyProbe is the key readonly tries to write (outside the bot's tag).
const readonlyProbe = "chaos:readonly-probe"
