package app

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// BenchmarkHandlerLanguages measures what the players' languages cost the
// handlers (one measurement whatever b.N; figures reported as metrics):
// the same updates handled by the real bot (cmd/bot, BOT_ROLE=handler,
// default HANDLERS, an OS process of its own on a Valkey server of its
// own, no worker: replies and board edits stay queued) from players whose
// Telegram is English, against the same updates from players of Russian
// and Persian (language_code ru and fa by turns), half of whom chose the
// other language with /language (a stored choice, read in every update's
// pipeline; their language_codes recorded for broadcasts by the process's
// first update of each). Updates: 2,000 private chats (
// CODEMOJEX_BENCH_LANG_CHATS to change) each play a game: /play, three
// typed guesses (each answered and the board re-rendered), /top: 10,000
// updates recorded up front; the window runs from the first update seen
// handled to the last. Per run: the handler process's CPU per update
// (/proc) and Valkey's (INFO cpu). Runs alternate, English then localized,
// CODEMOJEX_BENCH_LANG_PAIRS pairs (default 5); each figure's median and
// the median of each pair's ratio (localized over English, lower is
// better) are reported.
//
// Run: go test -run '^$' -bench '^BenchmarkHandlerLanguages$' -benchtime 1x ./internal/app/
func BenchmarkHandlerLanguages(b *testing.B) {
	ctx := context.Background()
	nchats, pairs := 2000, 5
	if v, err := strconv.Atoi(os.Getenv("CODEMOJEX_BENCH_LANG_CHATS")); err == nil && v > 0 {
		nchats = v
	}
	if v, err := strconv.Atoi(os.Getenv("CODEMOJEX_BENCH_LANG_PAIRS")); err == nil && v > 0 {
		pairs = v
	}
	emu := testkit.NewEmulator(b, testkit.Unlimited("measures the handlers' CPU, not pacing"))
	bin := testkit.BuildBot(b)
	srv := valkeytest.Start(b, valkeytest.Options{})
	c := srv.Client(b)
	store, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(lanes.DefaultTag))...)
	require.NoError(b, err)
	in := intake.NewInbox(c, store, lanes.DefaultTag)
	langs := chats.NewLanguages(c, lanes.DefaultTag)
	game := []string{"/play", "🥝🥝🥝🥝", "🍋🍋🍋🍋", "🍎🍌🍇🍒", "/top"}

	// run handles the game of every chat, its players' language_code
	// code(i) and, where choice(i) is not "", their stored choice.
	run := func(code, choice func(i int) string) intakeRun {
		require.NoError(b, c.Do(ctx, c.B().Flushall().Build()).Error())
		for i := range nchats {
			if l := choice(i); l != "" {
				require.NoError(b, langs.Set(ctx, int64(500_000+i), l))
			}
		}
		ups := make([]intake.Update, 0, nchats*len(game))
		for turn, text := range game {
			for i := range nchats {
				id := int64(turn*nchats + i + 1)
				ups = append(ups, langUpdate(id, int64(500_000+i), code(i), text))
			}
		}
		for chunk := range slices.Chunk(ups, 100) { // getUpdates batches
			_, err := in.Accept(ctx, chunk)
			require.NoError(b, err)
		}
		p := testkit.StartBot(b, bin, "handler", []string{"TELEGRAM_BOT_TOKEN=" + emu.Token(), "TELEGRAM_API_URL=" + emu.URL(),
			"VALKEY_URL=" + srv.URL, "TELEGRAM_GLOBAL_RATE=10000", "TELEGRAM_CHAT_RATE=100", "TELEGRAM_GROUP_RATE=6000",
			"LOG_LEVEL=error", "BOT_ROLE=handler", "HTTP_ADDR=" + testkit.FreeAddr(b)})
		total := int64(len(ups))
		left := total
		for left == total {
			left, err = in.Unhandled(ctx)
			require.NoError(b, err)
			require.False(b, p.Exited(), "the handler exited: %v", p.ExitErr())
			time.Sleep(time.Millisecond)
		}
		from := takeSample(ctx, b, in, c, []*testkit.Proc{p})
		for deadline := time.Now().Add(5 * time.Minute); left > 0; time.Sleep(2 * time.Millisecond) {
			require.True(b, time.Now().Before(deadline), "%d updates still unhandled", left)
			left, err = in.Unhandled(ctx)
			require.NoError(b, err)
		}
		to := takeSample(ctx, b, in, c, []*testkit.Proc{p})
		require.NoError(b, p.Stop())
		return intakeRunOf(from, to)
	}
	english := func(int) string { return "en" }
	none := func(int) string { return "" }
	code := func(i int) string { return []string{"ru", "fa"}[i%2] }
	chosen := func(i int) string { // half of them chose the other language
		if i%4 < 2 {
			return []string{"fa", "ru"}[i%2]
		}
		return ""
	}
	var en, loc []intakeRun
	var goRatios, valkeyRatios []float64
	for range pairs {
		e, l := run(english, none), run(code, chosen)
		en, loc = append(en, e), append(loc, l)
		goRatios = append(goRatios, l.goUs/e.goUs)
		valkeyRatios = append(valkeyRatios, l.valkeyUs/e.valkeyUs)
		b.Logf("pair %d: handler %.1f µs/update English, %.1f localized (%.3fx); Valkey %.1f, %.1f (%.3fx); %.0f, %.0f updates/s",
			len(en), e.goUs, l.goUs, l.goUs/e.goUs, e.valkeyUs, l.valkeyUs, l.valkeyUs/e.valkeyUs, e.rate, l.rate)
		b.Logf("  English   %s", e)
		b.Logf("  localized %s", l)
	}
	goUs := func(r intakeRun) float64 { return r.goUs }
	valkeyUs := func(r intakeRun) float64 { return r.valkeyUs }
	id := func(v float64) float64 { return v }
	for b.Loop() {
		// One measurement above; the figures are the reported metrics.
	}
	b.ReportMetric(float64(nchats*len(game)), "lang_updates")
	b.ReportMetric(float64(pairs), "lang_pairs")
	b.ReportMetric(median(en, goUs), "lang_en_go_us/update")
	b.ReportMetric(median(loc, goUs), "lang_loc_go_us/update")
	b.ReportMetric(median(goRatios, id), "lang_go_ratio")
	b.ReportMetric(median(en, valkeyUs), "lang_en_valkey_us/update")
	b.ReportMetric(median(loc, valkeyUs), "lang_loc_valkey_us/update")
	b.ReportMetric(median(valkeyRatios, id), "lang_valkey_ratio")
}

// langUpdate is a text message update from user chat (its private chat)
// whose language_code is code.
func langUpdate(id, chat int64, code, text string) intake.Update {
	return intake.Update{ID: id, JSON: fmt.Appendf(nil, `{"update_id":%d,"message":{"message_id":%d,"date":1700000000,`+
		`"chat":{"id":%d,"type":"private","first_name":"U"},"from":{"id":%d,"is_bot":false,"first_name":"U","language_code":%q},"text":%q%s}}`,
		id, id, chat, chat, code, text, entities(text))}
}
