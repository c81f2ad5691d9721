package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// BenchmarkFlood measures the intake limits and what delivered chats and
// messages leave in Valkey (one run whatever b.N; figures reported as
// metrics):
//
//   - flood: one user sends 3,000 /help in 3 s to a bot at Telegram's own
//     limits (1 message/s per private chat; the emulator enforces them)
//     with the default FLOOD_* limits: updates handled and dropped, replies
//     queued for the chat, the bytes of the bot's keys (MEMORY USAGE over
//     its namespace) at the end of the flood and once its window has
//     passed, against the bytes before it; then, 10 s after the flood, the
//     flooder's /start: the time until it is answered.
//   - memory at rest: CODEMOJEX_BENCH_CHATS (default 100,000) chats each
//     send one message, every reply delivered (limits that do not bind):
//     their users' language_codes are en, ru, es, pt-BR and fa in turn
//     (4 in 5 recorded for broadcasts), and every 4th chat sends
//     "/language <code>" (a stored choice) where the others send /start:
//     bytes and keys per chat right after delivery and 61 s later (the pace
//     logs have expired); then 10,000 notifications, never edited, to those
//     chats: bytes kept per delivered message.
//   - the limit's cost, with the limits on (the defaults) and off
//     (FLOOD_WINDOW=0), alternating runs, medians: over the whole normal
//     path, 6,000 /help from 2,000 private chats (3 each: under the limits)
//     injected into the emulator, fetched by a BOT_ROLE=poller app,
//     recorded, claimed and handled by a BOT_ROLE=handler app (default
//     HANDLERS; both in process, on a server of their own, no worker),
//     replies enqueued, done marks written, from the first injection to
//     the last mark: updates/s, Valkey CPU per update (INFO cpu) and this
//     process's CPU per update (both apps and the emulator), seven runs
//     each, each run's commandstats logged, and the median of each on
//     run's ratio to the off run just before it; and the record step
//     alone, 20,000 updates from 2,000 chats (10 each) recorded in
//     getUpdates batches of 100 (Inbox.Accept: the record and the
//     enqueue), seven runs each: updates/s and Valkey CPU per recorded
//     update.
//   - chatter: a group where 30 members talk among themselves, 3,000 plain
//     messages none addressed to the bot (as a bot with privacy mode off
//     sees them), fetched by a default app at Telegram's limits: the
//     updates dropped unrecorded, the bytes of the bot's keys they added
//     (the polling's own state aside: offset, lease, heartbeat, the
//     senders' round-trip floors and the processes' liveness, claimers'
//     and processes' heartbeats, written whatever the updates), the
//     Valkey CPU per message (INFO cpu, from the first injection until
//     every one is confirmed and counted), the time in commands (INFO
//     commandstats' usec summed), INFO used_memory's delta and the replies
//     (notices included, sent or queued) to the group; then the baseline,
//     on a fresh server and emulator: the same 3,000 messages from the same
//     members as /help (handled or dropped by the limits), the same figures
//     with the chatterhelp prefix.
//
// Run: go test -run '^$' -bench '^BenchmarkFlood$' -benchtime 1x ./internal/app/
// (CODEMOJEX_BENCH_FLOOD_PARTS=flood,rest,cost,chatter picks parts).
func BenchmarkFlood(b *testing.B) {
	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	type reported struct {
		v    float64
		unit string
	}
	var metrics []reported
	metric := func(v float64, unit string) { metrics = append(metrics, reported{v, unit}) }

	// run starts an app on its own server and emulator (env on top of the
	// base), returning its client, tag and emulator.
	run := func(emu *tgemu.Emulator, env ...string) (*App, valkey.Client, string, func()) {
		srv := valkeytest.Start(b, valkeytest.Options{})
		c := srv.Client(b)
		tag := lanes.DefaultTag
		cfg, err := config.FromEnv(append([]string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
			"VALKEY_URL=" + srv.URL, "LOG_LEVEL=error"}, env...))
		require.NoError(b, err)
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(b, err)
		a, err := New(cfg, WithValkey(c), WithTag(tag), WithListener(ln), WithLogger(quiet), WithPollTimeout(time.Second))
		require.NoError(b, err)
		stop := testkit.RunInBackground(b, "app", wait, a.Run)
		require.Eventually(b, func() bool { return a.leader.Load() && a.lastPoll.Load() != 0 }, wait, 10*time.Millisecond)
		return a, c, tag, func() { require.NoError(b, stop()) }
	}
	bytesOf := func(c valkey.Client, tag string) (bytes int64, keys int) {
		ks, err := valkeytest.Keys(ctx, c, "{"+tag+"}:*")
		require.NoError(b, err)
		cmds := make(valkey.Commands, len(ks))
		for i, k := range ks {
			cmds[i] = c.B().MemoryUsage().Key(k).Samples(0).Build()
		}
		for chunk := range slices.Chunk(cmds, 1000) {
			for _, r := range c.DoMulti(ctx, chunk...) {
				n, err := r.AsInt64()
				if err == nil {
					bytes += n
				}
			}
		}
		return bytes, len(ks)
	}
	// breakdown groups the bot's keys by pattern (digit runs as N) with
	// their MEMORY USAGE bytes and key counts, to tell what a chat costs.
	breakdown := func(c valkey.Client, tag string) map[string]keyGroup {
		ks, err := valkeytest.Keys(ctx, c, "{"+tag+"}:*")
		require.NoError(b, err)
		out := map[string]keyGroup{}
		for chunk := range slices.Chunk(ks, 1000) {
			cmds := make(valkey.Commands, len(chunk))
			for i, k := range chunk {
				cmds[i] = c.B().MemoryUsage().Key(k).Samples(0).Build()
			}
			for i, r := range c.DoMulti(ctx, cmds...) {
				n, err := r.AsInt64()
				if err != nil {
					continue
				}
				g := out[keyPattern(chunk[i])]
				g.bytes += n
				g.keys++
				out[keyPattern(chunk[i])] = g
			}
		}
		return out
	}
	logBreakdown := func(what string, before, after map[string]keyGroup, chats int) {
		var pats []string
		for p := range after {
			pats = append(pats, p)
		}
		for p := range before {
			if _, ok := after[p]; !ok {
				pats = append(pats, p)
			}
		}
		slices.SortFunc(pats, func(x, y string) int {
			return int((after[y].bytes - before[y].bytes) - (after[x].bytes - before[x].bytes))
		})
		var sb strings.Builder
		for _, p := range pats {
			d := after[p].bytes - before[p].bytes
			if d == 0 {
				continue
			}
			fmt.Fprintf(&sb, "\n  %-40s %+8.1f B/chat  %+6.3f keys/chat  (%d keys, %d B)", p, float64(d)/float64(chats),
				float64(after[p].keys-before[p].keys)/float64(chats), after[p].keys, after[p].bytes)
		}
		b.Logf("at rest, %s, by key pattern (growth over the empty bot):%s", what, sb.String())
	}
	// serverCPU is the server's CPU time so far, s (INFO cpu: used_cpu_user
	// + used_cpu_sys).
	serverCPU := func(c valkey.Client) float64 {
		info, err := c.Do(ctx, c.B().Info().Section("cpu").Build()).ToString()
		require.NoError(b, err)
		var s float64
		for _, l := range strings.Split(info, "\r\n") {
			k, v, _ := strings.Cut(l, ":")
			if k == "used_cpu_user" || k == "used_cpu_sys" {
				f, _ := strconv.ParseFloat(v, 64)
				s += f
			}
		}
		return s
	}
	handledOK := func(a *App) float64 { return gatherCounter(b, a, "codemojex_updates_handled_total", "ok") }
	droppedAll := func(a *App) float64 { return gatherCounter(b, a, "codemojex_flood_dropped_total", "") }

	// CODEMOJEX_BENCH_FLOOD_PARTS (comma-separated; default all) picks the
	// parts run: flood, rest, cost, chatter.
	part := func(name string) bool {
		v := os.Getenv("CODEMOJEX_BENCH_FLOOD_PARTS")
		return v == "" || slices.Contains(strings.Split(v, ","), name)
	}

	// CODEMOJEX_BENCH_FLOOD_SIDE=on or off runs the cost part's runs of
	// that side only, once each (no ratios): for the server's instruction
	// count, with VALKEY_BIN_DIR naming a valkey-server that runs the real
	// one under valgrind --tool=callgrind (docs/floods.md).
	side := os.Getenv("CODEMOJEX_BENCH_FLOOD_SIDE")
	costPairs := 7
	if side != "" {
		costPairs = 1
	}

	// Flood.
	if part("flood") {
		emu := testkit.NewEmulator(b, tgemu.WithLimits(tgemu.DefaultLimits()))
		a, c, tag, stop := run(emu, "TELEGRAM_GLOBAL_RATE=30", "TELEGRAM_CHAT_RATE=1", "TELEGRAM_GROUP_RATE=20")
		flooder := models.User{ID: 777_001, FirstName: "Flooder"}
		emu.AddChat(models.Chat{ID: flooder.ID, Type: models.ChatTypePrivate, FirstName: "Flooder"})
		before, _ := bytesOf(c, tag)
		const total = 3000
		start := time.Now()
		for i := range total {
			time.Sleep(time.Until(start.Add(time.Duration(i) * time.Millisecond)))
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: flooder.ID, From: flooder, Text: "/help"})
			require.NoError(b, err)
		}
		require.Eventually(b, func() bool { return len(emu.PendingUpdates()) == 0 }, wait, time.Millisecond)
		floodEnd := time.Now()
		require.Eventually(b, func() bool { return handledOK(a)+droppedAll(a) >= total }, wait, time.Millisecond)
		after, afterKeys := bytesOf(c, tag)
		handled, dropped := handledOK(a), droppedAll(a)
		st, err := a.store.Inspector().Stats(ctx, tgjob.QueueReply, 0)
		require.NoError(b, err)
		queued := float64(len(emu.Messages(flooder.ID)) + st.Pending + st.InFlight)
		metric(time.Since(start).Seconds(), "flood_s")
		metric(handled, "flood_handled")
		metric(dropped, "flood_dropped")
		metric(queued, "flood_replies_queued")
		metric(float64(before), "flood_bytes_before")
		metric(float64(after), "flood_bytes_after")
		metric(float64(after-before)/max(dropped, 1), "flood_bytes/dropped")
		b.Logf("flood: %d /help in %v: %v handled, %v dropped, %v replies queued (notice included); keys %d bytes before, %d after (%d keys)",
			total, floodEnd.Sub(start).Round(time.Millisecond), handled, dropped, queued, before, after, afterKeys)
		// 10 s after the flood: the next command.
		time.Sleep(time.Until(floodEnd.Add(10 * time.Second)))
		n := len(emu.Messages(flooder.ID))
		t0 := time.Now()
		_, err = emu.InjectMessage(tgemu.TextMessage{ChatID: flooder.ID, From: flooder, Text: "/start"})
		require.NoError(b, err)
		wctx, cancel := context.WithTimeout(ctx, time.Minute)
		var answered time.Duration
		require.NoError(b, emu.WaitUntil(wctx, func() bool {
			for _, m := range emu.Messages(flooder.ID)[n:] {
				if strings.Contains(m.CurrentText(), "Welcome") {
					answered = time.Since(t0)
					return true
				}
			}
			return false
		}))
		cancel()
		metric(answered.Seconds()*1000, "flood_next_ms")
		// Once the replies are delivered and the window has passed.
		require.Eventually(b, func() bool {
			st, err := a.store.Inspector().Stats(ctx, tgjob.QueueReply, 0)
			return err == nil && st.Pending+st.InFlight == 0
		}, 2*time.Minute, 10*time.Millisecond)
		time.Sleep(time.Until(floodEnd.Add(flood.DefaultWindow + 12*time.Second)))
		rest, restKeys := bytesOf(c, tag)
		fl, err := valkeytest.Keys(ctx, c, "{"+tag+"}:app:fl:*")
		require.NoError(b, err)
		metric(float64(rest), "flood_bytes_rest")
		metric(float64(len(fl)), "flood_keys_left")
		b.Logf("flood: the flooder's /start 10 s later answered in %v; %d bytes (%d keys) once delivered and the window passed, %d keys of the limits left",
			answered.Round(time.Millisecond), rest, restKeys, len(fl))
		stop()
	}

	// Memory at rest, with stored languages.
	if part("rest") {
		chats := 100_000
		if v, err := strconv.Atoi(os.Getenv("CODEMOJEX_BENCH_CHATS")); err == nil && v > 0 {
			chats = v
		}
		emu := testkit.NewEmulator(b, testkit.Unlimited("measures the handling path's cost, not pacing"))
		emu.SetAllowAnyChat(true)
		a, c, tag, stop := run(emu, "TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_REPLY_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000", "WORKERS=64")
		before, beforeKeys := bytesOf(c, tag)
		groupsBefore := breakdown(c, tag)
		sent := func() float64 { return gatherCounter(b, a, "codemojex_worker_sent_total", "") }
		// Each user's language_code is one of the catalog's in turn (en is
		// not recorded, the other four are: {T}:app:ulang), and every 4th
		// chat sends "/language <another>" instead of /start (a stored
		// choice: {T}:app:lang).
		codes := []string{"en", "ru", "es", "pt-BR", "fa"}
		for i := range chats {
			id := int64(1_000_000 + i)
			text := "/start"
			if i%4 == 0 {
				text = "/language " + codes[(i+2)%len(codes)]
			}
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: id, From: models.User{ID: id, FirstName: "U", LanguageCode: codes[i%len(codes)]}, Text: text})
			require.NoError(b, err)
		}
		require.Eventually(b, func() bool { return sent() >= float64(chats) }, 15*time.Minute, 50*time.Millisecond)
		delivered := time.Now()
		time.Sleep(time.Second) // the last acks
		atOnce, keysOnce := bytesOf(c, tag)
		logBreakdown("right after delivery", groupsBefore, breakdown(c, tag), chats)
		time.Sleep(time.Until(delivered.Add(61 * time.Second)))
		atMinute, keysMinute := bytesOf(c, tag)
		logBreakdown("61 s after delivery", groupsBefore, breakdown(c, tag), chats)
		metric(float64(chats), "rest_chats")
		metric(float64(atOnce-before)/float64(chats), "rest_bytes/chat")
		metric(float64(atMinute-before)/float64(chats), "rest_bytes/chat_1min")
		metric(float64(keysMinute-beforeKeys)/float64(chats), "rest_keys/chat_1min")
		choices, recorded := languageFields(ctx, b, c, tag)
		metric(float64(choices), "rest_lang_choices")
		metric(float64(recorded), "rest_lang_codes")
		b.Logf("at rest: %d chats (%d /language choices, %d language_codes recorded), one message each, delivered: %d bytes/chat (%.2f keys/chat) at once, %d bytes/chat (%.2f keys/chat) 61 s later",
			chats, choices, recorded, (atOnce-before)/int64(chats), float64(keysOnce-beforeKeys)/float64(chats),
			(atMinute-before)/int64(chats), float64(keysMinute-beforeKeys)/float64(chats))
		// Messages never edited.
		const msgs = 10_000
		base := sent()
		for i := range msgs {
			_, err := a.notifier.Notify(ctx, int64(1_000_000+i%chats), notifier.Message{Text: "news", Class: notifier.Notification})
			require.NoError(b, err)
		}
		require.Eventually(b, func() bool { return sent() >= base+msgs }, 5*time.Minute, 50*time.Millisecond)
		time.Sleep(time.Second)
		msgBytes, _ := bytesOf(c, tag)
		// Pace logs of the chats written again: compare a minute later too.
		time.Sleep(61 * time.Second)
		msgBytesMinute, _ := bytesOf(c, tag)
		metric(float64(msgBytes-atMinute)/msgs, "msg_bytes/delivered")
		metric(float64(msgBytesMinute-atMinute)/msgs, "msg_bytes/delivered_1min")
		b.Logf("messages: %d delivered, never edited: %.1f bytes/message kept at once (pace logs included), %.1f a minute later",
			msgs, float64(msgBytes-atMinute)/msgs, float64(msgBytesMinute-atMinute)/msgs)
		stop()
	}

	// The limit's cost on the whole normal path: updates fetched from the
	// emulator by the poller, recorded (with the limits' check or the plain
	// ZADD NX), claimed, handled, their replies enqueued and their done
	// marks written, by the real app in process: a BOT_ROLE=poller app and
	// a BOT_ROLE=handler app (default HANDLERS) on one server of their own,
	// no worker (the replies stay queued: sending them is the worker's
	// cost, which the limits do not touch).
	if part("cost") {
		srv := valkeytest.Start(b, valkeytest.Options{})
		c := srv.Client(b)
		tin := intake.NewInbox(c, nil, lanes.DefaultTag)
		const chats, per = 2000, 3
		type pathRun struct {
			rate, valkeyUs, goUs float64
			run                  intakeRun
		}
		pathOnce := func(on bool) pathRun {
			require.NoError(b, c.Do(ctx, c.B().Flushall().Build()).Error())
			emu := testkit.NewEmulator(b, testkit.Unlimited("measures the handling path's cost, not pacing"))
			env := []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(), "VALKEY_URL=" + srv.URL,
				"TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000", "LOG_LEVEL=error"}
			if !on {
				env = append(env, "FLOOD_WINDOW=0")
			}
			start := func(role string) (*App, func()) {
				cfg, err := config.FromEnv(append(slices.Clone(env), "BOT_ROLE="+role))
				require.NoError(b, err)
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				require.NoError(b, err)
				a, err := New(cfg, WithListener(ln), WithLogger(quiet), WithPollTimeout(time.Second))
				require.NoError(b, err)
				stop := testkit.RunInBackground(b, role, wait, a.Run)
				return a, func() { require.NoError(b, stop()) }
			}
			poller, stopPoller := start(config.RolePoller)
			handler, stopHandler := start(config.RoleHandler)
			require.Equal(b, on, poller.floods != nil && poller.floods.Limiter() != nil, "the limits on only when asked")
			handled := func() float64 { return gatherCounter(b, handler, "codemojex_updates_handled_total", "ok") }
			// Warm up: one update through the whole path (getMe, scripts
			// loaded, connections open).
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: 99, From: models.User{ID: 99, FirstName: "U"}, Text: "/help"})
			require.NoError(b, err)
			require.Eventually(b, func() bool { return handled() == 1 }, wait, 5*time.Millisecond)
			require.Eventually(b, func() bool { return poller.lastPoll.Load() != 0 && emu.Polling() }, wait, time.Millisecond)
			total := int64(chats * per)
			from := takeSample(ctx, b, tin, c, nil)
			for i := range total {
				id := int64(100_000 + i%chats)
				_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: id, From: models.User{ID: id, FirstName: "U"}, Text: "/help"})
				require.NoError(b, err)
			}
			// Done once every update is counted handled and its done mark
			// written (the counter moves just before the mark).
			unmarked := func() int64 { n, err := tin.Unhandled(ctx); require.NoError(b, err); return n }
			for deadline := time.Now().Add(2 * time.Minute); handled() < float64(total+1) || unmarked() > 0; time.Sleep(2 * time.Millisecond) {
				require.True(b, time.Now().Before(deadline), "%v of %d updates handled", handled()-1, total)
			}
			to := takeSample(ctx, b, tin, c, nil)
			require.Zero(b, droppedAll(poller), "no update over the limits")
			stopHandler()
			stopPoller()
			from.left = total
			r := intakeRunOf(from, to)
			// A run's line names this process's CPU "handler processes":
			// both apps and the emulator run here.
			r.goUs = (to.benchCPU - from.benchCPU) * 1e6 / float64(total)
			return pathRun{rate: r.rate, valkeyUs: r.valkeyUs, goUs: r.goUs, run: r}
		}
		var onP, offP []pathRun
		for range costPairs {
			if side != "on" {
				offP = append(offP, pathOnce(false))
			}
			if side != "off" {
				onP = append(onP, pathOnce(true))
			}
		}
		rate := func(r pathRun) float64 { return r.rate }
		vus := func(r pathRun) float64 { return r.valkeyUs }
		gus := func(r pathRun) float64 { return r.goUs }
		for _, sd := range []struct {
			name string
			rs   []pathRun
		}{{"on", onP}, {"off", offP}} {
			if len(sd.rs) == 0 {
				continue
			}
			metric(median(sd.rs, rate), "path_"+sd.name+"_updates/s")
			metric(median(sd.rs, vus), "path_"+sd.name+"_valkey_us/update")
			metric(median(sd.rs, gus), "path_"+sd.name+"_go_us/update")
			for i, r := range sd.rs {
				// A run's "handler processes" is this process: both apps
				// and the emulator.
				b.Logf("  whole path, %-3s run %d: %s", sd.name, i+1, r.run)
			}
		}
		if len(onP) > 0 && len(offP) > 0 {
			// Each on run against the off run just before it (the same
			// moment's load), the median of those ratios.
			cpuRatio, rateRatio := pairRatios(onP, offP, vus), pairRatios(onP, offP, rate)
			metric(median(cpuRatio, ident), "path_valkey_us_ratio")
			metric(median(rateRatio, ident), "path_updates_ratio")
			b.Logf("limit cost, whole path (getUpdates -> recorded -> claimed -> handled -> reply enqueued -> done mark), %d /help from %d chats, poller + handler app in process, %d alternating runs each: "+
				"on %.0f/s, %.1f µs Valkey CPU/update, %.1f µs this process's CPU/update; off %.0f/s, %.1f µs, %.1f µs (medians); on/off per pair: Valkey CPU/update %.3f (%.3f-%.3f), updates/s %.3f (%.3f-%.3f)",
				chats*per, chats, len(onP), median(onP, rate), median(onP, vus), median(onP, gus), median(offP, rate), median(offP, vus), median(offP, gus),
				median(cpuRatio, ident), slices.Min(cpuRatio), slices.Max(cpuRatio), median(rateRatio, ident), slices.Min(rateRatio), slices.Max(rateRatio))
		}
	}

	// The limit's cost on the record step alone.
	if part("cost") {
		srv := valkeytest.Start(b, valkeytest.Options{})
		c := srv.Client(b)
		const chats, per = 2000, 10
		ups := make([]intake.Update, 0, chats*per)
		for i := range chats * per {
			ups = append(ups, benchUpdate(int64(i+1), int64(100_000+i%chats), "🍎🍌🍇🍒"))
		}
		cpu := func() float64 { return serverCPU(c) }
		once := func(on bool) (rate, us float64) {
			require.NoError(b, c.Do(ctx, c.B().Flushall().Build()).Error())
			tag := valkeytest.Namespace(b)
			store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(tag))...)
			require.NoError(b, err)
			in := intake.NewInbox(c, store, tag)
			if on {
				in.WithLimits(flood.New(tag, flood.DefaultLimits(), nil), nil)
			}
			c0, t0 := cpu(), time.Now()
			for chunk := range slices.Chunk(ups, 100) {
				_, err := in.Accept(ctx, chunk)
				require.NoError(b, err)
			}
			el := time.Since(t0)
			return float64(len(ups)) / el.Seconds(), (cpu() - c0) * 1e6 / float64(len(ups))
		}
		var onRate, offRate, onUs, offUs []float64
		for range costPairs {
			if side != "on" {
				r, u := once(false)
				offRate, offUs = append(offRate, r), append(offUs, u)
			}
			if side != "off" {
				r, u := once(true)
				onRate, onUs = append(onRate, r), append(onUs, u)
			}
		}
		if side != "" {
			b.Logf("record step, limits %s only: %v updates/s, %v µs Valkey CPU/update", side, append(onRate, offRate...), append(onUs, offUs...))
		} else {
			med := func(v []float64) float64 { return median(v, ident) }
			metric(med(pairRatios(onUs, offUs, ident)), "limit_valkey_us_ratio")
			metric(med(onRate), "limit_on_updates/s")
			metric(med(offRate), "limit_off_updates/s")
			metric(med(onUs), "limit_on_valkey_us/update")
			metric(med(offUs), "limit_off_valkey_us/update")
			b.Logf("limit cost, record of %d updates (batches of 100): on %.0f/s, %.1f µs Valkey CPU/update; off %.0f/s, %.1f µs (medians; runs on %.0f / off %.0f updates/s, on %.1f / off %.1f µs)",
				len(ups), med(onRate), med(onUs), med(offRate), med(offUs), onRate, offRate, onUs, offUs)
		}
	}

	// A group's conversation, none of it to the bot; and the baseline: the
	// same 3,000 messages from the same 30 members as /help (on a fresh
	// server and emulator each).
	if part("chatter") {
		talk := func(prefix string, texts []string) {
			emu := testkit.NewEmulator(b, tgemu.WithLimits(tgemu.DefaultLimits()))
			a, c, tag, stop := run(emu, "TELEGRAM_GLOBAL_RATE=30", "TELEGRAM_CHAT_RATE=1", "TELEGRAM_GROUP_RATE=20")
			keys := a.inbox.Keys()
			polling := []string{keyPattern(keys.Offset()), keyPattern(keys.Lease()), keyPattern(keys.Polled()), keyPattern("{" + tag + "}:s:floor:1"),
				keyPattern("{" + tag + "}:app:procs"), keyPattern("{" + tag + "}:app:proc:1")}
			// The processes' liveness is written whatever the updates too:
			// each consumer's heartbeat in its queues' claimers sets
			// (consumer.KeepAlive) and each process's in the procs list
			// (internal/procs); a run measured them as 376 B "added".
			spent := func() int64 {
				var n int64
				for p, g := range breakdown(c, tag) {
					if !slices.Contains(polling, p) && !strings.HasSuffix(p, ":claimers") {
						n += g.bytes
					}
				}
				return n
			}
			ignored := func() float64 { return gatherCounter(b, a, "codemojex_updates_ignored_total", "") }
			const group, members, total = int64(-100_777_001), 30, 3000
			before, cpu0, mem0, cmd0, t0 := spent(), serverCPU(c), usedMemory(ctx, b, c), commandUsec(ctx, b, c), time.Now()
			for i := range total {
				from := models.User{ID: int64(777_100 + i%members), FirstName: "Member"}
				_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: group, From: from, Text: texts[i%len(texts)]})
				require.NoError(b, err)
			}
			require.Eventually(b, func() bool {
				return len(emu.PendingUpdates()) == 0 && ignored()+handledOK(a)+droppedAll(a) >= total
			}, wait, time.Millisecond)
			cpu1, mem1, cmd1, took := serverCPU(c), usedMemory(ctx, b, c), commandUsec(ctx, b, c), time.Since(t0)
			after := spent()
			st, err := a.store.Inspector().Stats(ctx, tgjob.QueueReply, 0)
			require.NoError(b, err)
			replies := len(emu.Messages(group)) + st.Pending + st.InFlight
			metric(ignored(), prefix+"_ignored")
			metric(handledOK(a), prefix+"_handled")
			metric(droppedAll(a), prefix+"_dropped")
			metric(float64(after-before), prefix+"_bytes")
			metric(float64(mem1-mem0), prefix+"_used_memory")
			metric((cpu1-cpu0)*1e6/total, prefix+"_valkey_us/message")
			metric(float64(cmd1-cmd0)/total, prefix+"_cmd_us/message")
			metric(float64(replies), prefix+"_replies")
			b.Logf("%s: %d group messages from %d members, confirmed in %v: %v dropped unrecorded, %v handled, %v dropped by the limits, %+d bytes of the bot's keys (the polling's state aside), used_memory %+d B, %.2f µs Valkey CPU/message (INFO cpu), %.2f µs in commands/message (INFO commandstats), %d replies sent or queued",
				prefix, total, members, took.Round(time.Millisecond), ignored(), handledOK(a), droppedAll(a), after-before, mem1-mem0,
				(cpu1-cpu0)*1e6/total, float64(cmd1-cmd0)/total, replies)
			stop()
		}
		talk("chatter", []string{"hi all", "did you see the match?", "🍎🍌🍒🍇", "lol", "/nope", "/help@other_bot", "@someone look"})
		talk("chatterhelp", []string{"/help"})
	}

	for b.Loop() {
	}
	for _, m := range metrics {
		b.ReportMetric(m.v, m.unit)
	}
}

// keyGroup is the keys of one pattern: their count and MEMORY USAGE bytes.
type keyGroup struct {
	keys  int
	bytes int64
}

// keyPattern is k with every run of digits (a chat, user, update or job
// id) written N, e.g. {T}:app:in:seen:N.
func keyPattern(k string) string {
	var sb strings.Builder
	digits := false
	for _, r := range k {
		if r >= '0' && r <= '9' {
			if !digits {
				sb.WriteByte('N')
			}
			digits = true
			continue
		}
		digits = false
		sb.WriteRune(r)
	}
	return sb.String()
}

// usedMemory is the server's INFO memory used_memory, bytes.
func usedMemory(ctx context.Context, b *testing.B, c valkey.Client) int64 {
	return infoSum(ctx, b, c, "memory", func(k string) bool { return k == "used_memory" })
}

// commandUsec is the server's time in commands so far, µs: the sum of
// INFO commandstats' usec over every command.
func commandUsec(ctx context.Context, b *testing.B, c valkey.Client) int64 {
	return infoSum(ctx, b, c, "commandstats", func(string) bool { return true })
}

// infoSum sums, over INFO section's lines whose key passes keep, the
// line's value when it is a number, or its usec= field (commandstats).
func infoSum(ctx context.Context, b *testing.B, c valkey.Client, section string, keep func(string) bool) int64 {
	info, err := c.Do(ctx, c.B().Info().Section(section).Build()).ToString()
	require.NoError(b, err)
	var sum int64
	for _, l := range strings.Split(info, "\r\n") {
		k, v, ok := strings.Cut(l, ":")
		if !ok || !keep(k) {
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			sum += n
			continue
		}
		for _, f := range strings.Split(v, ",") {
			if u, ok := strings.CutPrefix(f, "usec="); ok {
				n, err := strconv.ParseInt(u, 10, 64)
				require.NoError(b, err)
				sum += n
			}
		}
	}
	return sum
}

// gatherCounter sums the counter name of a's registry over the series
// whose labels include value (every series when value is "").
func gatherCounter(b *testing.B, a *App, name, value string) float64 {
	mfs, err := a.reg.Gather()
	require.NoError(b, err)
	var sum float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			match := value == ""
			for _, l := range m.GetLabel() {
				if l.GetValue() == value {
					match = true
				}
			}
			if match {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

// median is the median of f over vs (the upper one of an even count).
func median[T any](vs []T, f func(T) float64) float64 {
	v := make([]float64, len(vs))
	for i, x := range vs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v[len(v)/2]
}

func ident(v float64) float64 { return v }

// pairRatios is f(on[i]) / f(off[i]) for each pair of runs.
func pairRatios[T any](on, off []T, f func(T) float64) []float64 {
	out := make([]float64, min(len(on), len(off)))
	for i := range out {
		out[i] = f(on[i]) / f(off[i])
	}
	return out
}

// languageFields counts the fields of the bot's language hashes on c under
// tag: the /language choices ({T}:app:lang:<b>) and the language_codes
// recorded for broadcasts ({T}:app:ulang:<b>).
func languageFields(ctx context.Context, b *testing.B, c valkey.Client, tag string) (choices, codes int64) {
	b.Helper()
	k := chats.NewKeys(tag)
	for bucket := range int64(chats.Buckets) {
		n, err := c.Do(ctx, c.B().Hlen().Key(k.LangBucket(bucket)).Build()).AsInt64()
		require.NoError(b, err)
		choices += n
		n, err = c.Do(ctx, c.B().Hlen().Key(k.CodeBucket(bucket)).Build()).AsInt64()
		require.NoError(b, err)
		codes += n
	}
	return choices, codes
}
