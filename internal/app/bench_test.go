package app

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

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
//     worker runs: the replies only go on the reply queue). Baseline: one
//     handler process with HANDLERS=1, a single handler loop (on the
//     lanes queue: the same per-update work as the loop it replaces, plus
//     a claim and an ack). Then one process with the default HANDLERS, and
//     two such processes (two Apps in this test binary, each with its own
//     Valkey connections: the second process's share of the CPU is this
//     process's).
//   - fairness: a 3,000-update raid from one group (plain messages, no
//     reply) is recorded, then ten private chats' /start; the time from a
//     /start's recording to the end of its handling, p100 over the ten.
//   - webhook: 2,000 POSTs of 1,800 distinct update_ids (200 repeated, as
//     Telegram resends) from 50 concurrent clients to the webhook handler;
//     every update recorded once, none lost, the p99 response time.
//
// Run: go test -run '^$' -bench Intake -benchtime 1x ./internal/app/
func BenchmarkIntake(b *testing.B) {
	emu := testkit.NewEmulator(b, testkit.Unlimited())
	srv := valkeytest.Shared(b)
	c := srv.Client(b)
	env := []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(), "VALKEY_URL=" + srv.URL,
		"TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000", "LOG_LEVEL=error"}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()

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

	// Throughput.
	const chats, perChat = 2000, 3
	throughput := func(procs, handlers int) float64 {
		in, tag := newInbox()
		ups := make([]intake.Update, 0, chats*perChat)
		for i := range chats * perChat {
			ups = append(ups, benchUpdate(int64(i+1), int64(100_000+i%chats), "/help"))
		}
		record(in, ups)
		t0 := time.Now()
		stop := start(tag, procs, handlers)
		drained(in)
		dt := time.Since(t0)
		stop()
		return float64(len(ups)) / dt.Seconds()
	}
	n := config.DefaultHandlers()
	base := throughput(1, 1)
	one := throughput(1, n)
	two := throughput(2, n)
	b.ReportMetric(base, "baseline_updates/s")
	b.ReportMetric(one, "1proc_updates/s")
	b.ReportMetric(two, "2proc_updates/s")
	b.ReportMetric(one/base, "1proc/baseline")
	b.ReportMetric(two/base, "2proc/baseline")
	b.ReportMetric(two/one, "2proc/1proc")
	b.Logf("throughput, %d /help from %d chats: HANDLERS=1 %.0f/s; 1 process HANDLERS=%d %.0f/s (%.2fx); 2 processes %.0f/s (%.2fx, %.2fx of one)",
		chats*perChat, chats, base, n, one, one/base, two, two/base, two/one)

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
	b.ReportMetric(float64(fairN.Milliseconds()), "quiet_p100_ms")
	b.ReportMetric(float64(fair1.Milliseconds()), "quiet_p100_ms_handlers1")
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
		hs := httptest.NewServer(a.webhookHandler())
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
		b.ReportMetric(float64(p99.Microseconds())/1000, "webhook_p99_ms")
		b.ReportMetric(float64(posts)/took.Seconds(), "webhook_posts/s")
		b.Logf("webhook: %d POSTs (%d distinct update_ids) from %d clients in %v: all 200, %d recorded (once each), p50 %v, p99 %v",
			posts, distinct, clients, took.Round(time.Millisecond), unhandled, lat[len(lat)/2].Round(time.Microsecond), p99.Round(time.Microsecond))
	}
	for b.Loop() {
		// One measured run above; the figures are the reported metrics.
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
