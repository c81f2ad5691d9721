package app

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// BenchmarkIntake measures the update intake (one run whatever b.N; the
// figures are reported as metrics, ratios against a baseline measured in
// the same run):
//
//   - throughput: updates/s from recorded to handled, 6,000 /help from
//     2,000 private chats recorded up front, limits that do not bind (no
//     worker runs: the replies only go on the reply queue). Each handler
//     process is the real bot (cmd/bot built once, BOT_ROLE=handler) as an
//     OS process of its own, on a Valkey server of its own; the window
//     runs from the first update seen handled to the last (process start
//     left out). Baseline: one process with HANDLERS=1, a single handler
//     loop (on the lanes queue: the same per-update work as the loop it
//     replaces, plus a claim). Then one process with the default HANDLERS,
//     and two such processes. Per run it logs what the CPU went to: the
//     server's CPU (INFO cpu) and the handler processes' (/proc) per
//     update, the machine's busy share (/proc/stat: other work on the
//     machine shows there), scripts and commands per update (INFO
//     commandstats; commands run by scripts are counted too) and the
//     server's socket reads per update (INFO stats total_reads_processed:
//     one per round trip of a lone handler, a pipeline included; with
//     many handlers on one connection, commands sent together share one).
//   - fairness: a 3,000-update raid from one group (plain messages, no
//     reply) is recorded, then ten private chats' /start; the time from a
//     /start's recording to the end of its handling, p100 over the ten.
//   - webhook: 2,000 POSTs of 1,800 distinct update_ids (200 repeated, as
//     Telegram resends) from 50 concurrent clients to the webhook handler;
//     every update recorded once, none lost, the p99 response time.
//
// Run: go test -run '^$' -bench Intake -benchtime 1x ./internal/app/
func BenchmarkIntake(b *testing.B) {
	emu := testkit.NewEmulator(b, testkit.Unlimited("measures the handling path's cost, not pacing"))
	srv := valkeytest.Shared(b)
	c := srv.Client(b)
	env := []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(), "VALKEY_URL=" + srv.URL,
		"TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000", "LOG_LEVEL=error"}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	// The figures are reported after b.Loop: its first call resets the
	// timer, which deletes metrics reported before it.
	type reported struct {
		v    float64
		unit string
	}
	var metrics []reported
	metric := func(v float64, unit string) { metrics = append(metrics, reported{v, unit}) }

	// newInbox is an inbox of its own namespace, to record into.
	newInbox := func() (*intake.Inbox, string) {
		tag := valkeytest.Namespace(b)
		store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(tag))...)
		require.NoError(b, err)
		return intake.NewInbox(c, store, tag), tag
	}
	record := func(in *intake.Inbox, ups []intake.Update) {
		for chunk := range slices.Chunk(ups, 100) { // getUpdates batches
			_, err := in.Accept(ctx, chunk)
			require.NoError(b, err)
		}
	}
	// start runs procs handler processes of HANDLERS=handlers on tag,
	// each dialing Valkey itself; stop ends them.
	start := func(tag string, procs, handlers int) (stop func()) {
		var stops []func() error
		for range procs {
			cfg, err := config.FromEnv(append(slices.Clone(env), "BOT_ROLE=handler", "HANDLERS="+strconv.Itoa(handlers)))
			require.NoError(b, err)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			require.NoError(b, err)
			a, err := New(cfg, WithTag(tag), WithListener(ln), WithLogger(quiet))
			require.NoError(b, err)
			stops = append(stops, testkit.RunInBackground(b, "handler", wait, a.Run))
		}
		return func() {
			for _, s := range stops {
				require.NoError(b, s())
			}
		}
	}
	drained := func(in *intake.Inbox) {
		require.Eventually(b, func() bool { n, err := in.Unhandled(ctx); return err == nil && n == 0 }, 2*time.Minute, time.Millisecond)
	}

	// Throughput: handler processes of the real bot (cmd/bot, BOT_ROLE=handler)
	// on a server of their own (the bot's default hash tag; flushed between
	// runs), so each process has its own Go runtime, as in production.
	bin := testkit.BuildBot(b)
	tsrv := valkeytest.Start(b, valkeytest.Options{})
	tc := tsrv.Client(b)
	tstore, err := lanes.New(tc, append(intake.StoreOptions(0), lanes.WithTag(lanes.DefaultTag))...)
	require.NoError(b, err)
	tin := intake.NewInbox(tc, tstore, lanes.DefaultTag)
	const chats, perChat = 2000, 3
	throughput := func(procs, handlers int) intakeRun {
		require.NoError(b, tc.Do(ctx, tc.B().Flushall().Build()).Error())
		ups := make([]intake.Update, 0, chats*perChat)
		for i := range chats * perChat {
			ups = append(ups, benchUpdate(int64(i+1), int64(100_000+i%chats), "/help"))
		}
		record(tin, ups)
		procEnv := []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(), "VALKEY_URL=" + tsrv.URL,
			"TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000", "LOG_LEVEL=error",
			"BOT_ROLE=handler", "HANDLERS=" + strconv.Itoa(handlers)}
		var ps []*testkit.Proc
		for i := range procs {
			ps = append(ps, testkit.StartBot(b, bin, fmt.Sprintf("handler-%d", i+1), append(slices.Clone(procEnv), "HTTP_ADDR="+testkit.FreeAddr(b))))
		}
		// The window runs from the first update seen handled to the last:
		// the processes' start (runtime, connections, scripts) is left out.
		total := int64(len(ups))
		left := total
		for left == total {
			left, err = tin.Unhandled(ctx)
			require.NoError(b, err)
			for _, p := range ps {
				require.False(b, p.Exited(), "%s exited: %v", p.Name, p.ExitErr())
			}
			time.Sleep(time.Millisecond)
		}
		from := takeSample(ctx, b, tin, tc, ps)
		// Polled every 2 ms (require.Eventually's goroutine per tick cost
		// this process a fifth of a core at 1 ms, taken from the handlers).
		for deadline := time.Now().Add(2 * time.Minute); left > 0; time.Sleep(2 * time.Millisecond) {
			require.True(b, time.Now().Before(deadline), "%d updates still unhandled", left)
			left, err = tin.Unhandled(ctx)
			require.NoError(b, err)
		}
		to := takeSample(ctx, b, tin, tc, ps)
		for _, p := range ps {
			require.NoError(b, p.Stop())
		}
		return intakeRunOf(from, to)
	}
	n := config.DefaultHandlers()
	base := throughput(1, 1)
	one := throughput(1, n)
	two := throughput(2, n)
	metric(base.rate, "baseline_updates/s")
	metric(one.rate, "1proc_updates/s")
	metric(two.rate, "2proc_updates/s")
	metric(one.rate/base.rate, "1proc/baseline")
	metric(two.rate/base.rate, "2proc/baseline")
	metric(two.rate/one.rate, "2proc/1proc")
	metric(one.valkeyCPU*100, "1proc_valkey_cpu%")
	metric(two.valkeyCPU*100, "2proc_valkey_cpu%")
	metric(one.valkeyUs, "1proc_valkey_us/update")
	metric(one.goUs, "1proc_go_us/update")
	metric(base.valkeyUs, "baseline_valkey_us/update")
	metric(base.goUs, "baseline_go_us/update")
	metric(float64(n), "handlers") // HANDLERS of the 1proc and 2proc runs
	b.Logf("throughput, %d /help from %d chats (handler processes of cmd/bot): HANDLERS=1 %.0f/s; 1 process HANDLERS=%d %.0f/s (%.2fx); 2 processes %.0f/s (%.2fx, %.2fx of one)",
		chats*perChat, chats, base.rate, n, one.rate, one.rate/base.rate, two.rate, two.rate/base.rate, two.rate/one.rate)
	for _, r := range []struct {
		name string
		run  intakeRun
	}{{"HANDLERS=1", base}, {"1 process", one}, {"2 processes", two}} {
		b.Logf("  %-11s %s", r.name, r.run)
	}

	// Fairness behind a raid.
	fair := func(handlers int) time.Duration {
		in, tag := newInbox()
		stop := start(tag, 1, handlers)
		defer stop()
		const raid, group = 3000, int64(-100_777)
		ups := make([]intake.Update, 0, raid)
		for i := range raid {
			ups = append(ups, benchGroupUpdate(int64(i+1), group, int64(500+i%50), "spam "+strconv.Itoa(i)))
		}
		record(in, ups)
		var quietUps []intake.Update
		for i := range 10 {
			quietUps = append(quietUps, benchUpdate(int64(raid+1+i), int64(200_000+i), "/start"))
		}
		recorded := time.Now()
		record(in, quietUps)
		var worst time.Duration
		pending := map[int64]int64{}
		for _, u := range quietUps {
			pending[200_000+u.ID-raid-1] = u.ID
		}
		deadline := time.Now().Add(time.Minute)
		for len(pending) > 0 && time.Now().Before(deadline) {
			for chat, id := range pending {
				if _, hd, err := in.Mark(ctx, strconv.FormatInt(chat, 10)); err == nil && hd == id {
					worst = max(worst, time.Since(recorded))
					delete(pending, chat)
				}
			}
			time.Sleep(time.Millisecond)
		}
		require.Empty(b, pending, "every quiet chat handled")
		drained(in)
		return worst
	}
	fairN := fair(n)
	fair1 := fair(1)
	metric(float64(fairN.Milliseconds()), "quiet_p100_ms")
	metric(float64(fair1.Milliseconds()), "quiet_p100_ms_handlers1")
	b.Logf("fairness: behind a 3,000-update raid, ten quiet chats' /start handled within %v of being recorded (p100; HANDLERS=%d), %v with HANDLERS=1",
		fairN.Round(time.Millisecond), n, fair1.Round(time.Millisecond))

	// Webhook burst.
	{
		_, tag := newInbox()
		cfg, err := config.FromEnv(append(slices.Clone(env), "BOT_ROLE=poller", "TELEGRAM_WEBHOOK_URL=https://bot.example/hook",
			"TELEGRAM_WEBHOOK_SECRET=benchsecret"))
		require.NoError(b, err)
		a, err := New(cfg, WithTag(tag), WithLogger(quiet))
		require.NoError(b, err)
		defer a.Close()
		hs := httptest.NewServer(a.http.Handler()) // the webhook on its path, /hook
		defer hs.Close()
		const posts, distinct, clients = 2000, 1800, 50
		bodies := make(chan []byte, posts)
		for i := range posts {
			id := int64(i%distinct + 1)
			u := benchUpdate(id, int64(300_000+id%500), "/help")
			bodies <- u.JSON
		}
		close(bodies)
		var mu sync.Mutex
		var lat []time.Duration
		var bad atomic.Int64
		hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients}}
		var wg sync.WaitGroup
		t0 := time.Now()
		for range clients {
			wg.Go(func() {
				for body := range bodies {
					req, _ := http.NewRequest(http.MethodPost, hs.URL+"/hook", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set("X-Telegram-Bot-Api-Secret-Token", "benchsecret")
					s := time.Now()
					resp, err := hc.Do(req)
					d := time.Since(s)
					if err != nil || resp.StatusCode != http.StatusOK {
						bad.Add(1)
					}
					if resp != nil {
						_, _ = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					mu.Lock()
					lat = append(lat, d)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		took := time.Since(t0)
		slices.Sort(lat)
		p99 := lat[len(lat)*99/100]
		unhandled, err := a.inbox.Unhandled(ctx)
		require.NoError(b, err)
		bl, err := a.inbox.Backlog(ctx)
		require.NoError(b, err)
		require.Zero(b, bad.Load(), "every POST answered 200")
		require.EqualValues(b, distinct, unhandled, "every distinct update recorded, none twice")
		require.Equal(b, distinct, bl.Pending, "one job per distinct update_id")
		metric(float64(p99.Microseconds())/1000, "webhook_p99_ms")
		metric(float64(posts)/took.Seconds(), "webhook_posts/s")
		b.Logf("webhook: %d POSTs (%d distinct update_ids) from %d clients in %v: all 200, %d recorded (once each), p50 %v, p99 %v",
			posts, distinct, clients, took.Round(time.Millisecond), unhandled, lat[len(lat)/2].Round(time.Microsecond), p99.Round(time.Microsecond))
	}
	for b.Loop() {
		// One measured run above; the figures are the reported metrics.
	}
	for _, m := range metrics {
		b.ReportMetric(m.v, m.unit)
	}
}

// benchUpdate is a text message update from a private chat.
func benchUpdate(id, chat int64, text string) intake.Update {
	return intake.Update{ID: id, JSON: fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":1700000000,`+
		`"chat":{"id":%d,"type":"private","first_name":"U"},"from":{"id":%d,"is_bot":false,"first_name":"U"},"text":%q%s}}`,
		id, id, chat, chat, text, entities(text))}
}

// benchGroupUpdate is a text message update from user in group.
func benchGroupUpdate(id, group, user int64, text string) intake.Update {
	return intake.Update{ID: id, JSON: fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":1700000000,`+
		`"chat":{"id":%d,"type":"supergroup","title":"G"},"from":{"id":%d,"is_bot":false,"first_name":"U"},"text":%q%s}}`,
		id, id, group, user, text, entities(text))}
}

func entities(text string) string {
	if len(text) == 0 || text[0] != '/' {
		return ""
	}
	return fmt.Sprintf(`,"entities":[{"type":"bot_command","offset":0,"length":%d}]`, len(text))
}

// intakeSample is a snapshot of the costs a throughput window is measured
// by: the server's CPU time, command counts and socket reads (INFO cpu,
// commandstats, stats),
// the handler processes' CPU time (/proc/<pid>/stat) and the machine's
// (/proc/stat).
type intakeSample struct {
	at          time.Time
	left        int64              // updates not yet handled
	serverCPU   float64            // s, used_cpu_user + used_cpu_sys
	calls, usec map[string]float64 // commandstats per command
	procCPU     float64            // s, the handler processes' user + system time
	benchCPU    float64            // s, this process's (recording, polling)
	busy, all   float64            // the machine's busy and total time, s summed over CPUs
	reads       float64            // total_reads_processed: the server's reads from client sockets
}

func takeSample(ctx context.Context, b *testing.B, in *intake.Inbox, c valkey.Client, ps []*testkit.Proc) intakeSample {
	s := intakeSample{at: time.Now(), calls: map[string]float64{}, usec: map[string]float64{}}
	left, err := in.Unhandled(ctx)
	require.NoError(b, err)
	s.left = left
	info, err := c.Do(ctx, c.B().Info().Section("cpu", "stats", "commandstats").Build()).ToString()
	require.NoError(b, err)
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case k == "used_cpu_user" || k == "used_cpu_sys":
			f, _ := strconv.ParseFloat(v, 64)
			s.serverCPU += f
		case k == "total_reads_processed":
			s.reads, _ = strconv.ParseFloat(v, 64)
		}
	}
	for name, st := range valkeytest.ParseCommandStats(info) {
		s.calls[name], s.usec[name] = st.Calls, st.Usec
	}
	for _, p := range ps {
		s.procCPU += procCPU(p.Cmd.Process.Pid)
	}
	s.benchCPU = procCPU(os.Getpid())
	s.busy, s.all = machineCPU()
	return s
}

// procCPU is process pid's user + system time in s (0 when unreadable).
func procCPU(pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, rest, _ := strings.Cut(string(raw), ") ")
	f := strings.Fields(rest) // from field 3 (state) on
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// machineCPU is the machine's busy and total CPU time in s, summed over
// its CPUs (/proc/stat; 0 when unreadable).
func machineCPU() (busy, all float64) {
	raw, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, 0
	}
	line, _, _ := strings.Cut(string(raw), "\n")
	for i, v := range strings.Fields(line)[1:] {
		f, _ := strconv.ParseFloat(v, 64)
		all += f / 100
		if i != 3 && i != 4 { // idle, iowait
			busy += f / 100
		}
	}
	return busy, all
}

// intakeRun is one throughput window's figures.
type intakeRun struct {
	rate      float64 // updates/s
	window    time.Duration
	valkeyCPU float64 // the server's CPU time over the window's wall time (1 = one core)
	valkeyUs  float64 // server CPU µs per handled update
	goUs      float64 // handler processes' CPU µs per handled update
	machine   float64 // the machine's busy fraction over the window (all processes)
	bench     float64 // this process's CPU time over the window's wall time
	scripts   float64 // EVALSHA/EVAL calls per handled update
	calls     float64 // commands per handled update, those scripts ran included
	reads     float64 // the server's socket reads per handled update (a pipelined round trip is one read; concurrent handlers' commands can share one)
	top       string  // the commands costing most server time per update
}

func intakeRunOf(from, to intakeSample) intakeRun {
	wall := to.at.Sub(from.at).Seconds()
	n := float64(from.left - to.left)
	r := intakeRun{rate: n / wall, window: to.at.Sub(from.at), valkeyCPU: (to.serverCPU - from.serverCPU) / wall,
		valkeyUs: (to.serverCPU - from.serverCPU) / n * 1e6, goUs: (to.procCPU - from.procCPU) / n * 1e6}
	r.bench = (to.benchCPU - from.benchCPU) / wall
	r.reads = (to.reads - from.reads) / n
	if to.all > from.all {
		r.machine = (to.busy - from.busy) / (to.all - from.all)
	}
	type cost struct {
		name        string
		calls, usec float64
	}
	var costs []cost
	for name, calls := range to.calls {
		d := cost{name, calls - from.calls[name], to.usec[name] - from.usec[name]}
		if d.calls <= 0 || name == "info" {
			continue
		}
		if name == "evalsha" || name == "eval" {
			r.scripts += d.calls / n
		}
		r.calls += d.calls / n
		costs = append(costs, d)
	}
	slices.SortFunc(costs, func(a, b cost) int { return cmp.Compare(b.usec, a.usec) })
	var top []string
	for _, c := range costs[:min(len(costs), 8)] {
		top = append(top, fmt.Sprintf("%s %.2f calls %.1f µs", c.name, c.calls/n, c.usec/n))
	}
	r.top = strings.Join(top, ", ")
	return r
}

func (r intakeRun) String() string {
	return fmt.Sprintf("%.0f updates/s over %v; Valkey %.0f%% of a core, %.1f µs CPU/update; handler processes %.1f µs CPU/update; machine %.0f%% busy (this process %.0f%% of a core); "+
		"%.2f scripts and %.1f commands (in scripts too)/update; %.1f server reads (round trips)/update; per update by server time: %s",
		r.rate, r.window.Round(time.Millisecond), r.valkeyCPU*100, r.valkeyUs, r.goUs, r.machine*100, r.bench*100, r.scripts, r.calls, r.reads, r.top)
}
