package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// Two bots on one Valkey Cluster (issue 27, "Measured": their keys on
// different primaries; each one's replies unaffected while the other
// broadcasts). The real bot (cmd/bot, built by this section) runs as two
// OS processes against two emulators (two tokens), on one 3-primary
// cluster, VALKEY_KEY_TAG chosen so their slots are on different primaries.
// Bot A answers a steady stream of /help from its users; bot B idles, then
// sends a paid broadcast to a synthetic audience at 1,000/s, then idles
// again. The figures: A's reply latency while B broadcasts against while B
// idles, and each primary's CPU in both phases.
const (
	twoBotsPrimaries = 3
	twoBotsUsers     = 40              // bot A's users (private chats 1..40)
	twoBotsEvery     = 2 * time.Second // each user sends /help this often: 20/s in all
	twoBotsAudience  = 40_000          // bot B's synthetic audience: 40 s at the paid rate
	twoBotsAdmin     = int64(900_001)  // both bots' admin (ADMIN_IDS)
	twoBotsIdle      = 30 * time.Second
	twoBotsAfter     = 15 * time.Second
	// twoBotsWarmUp is the /help stream's first stretch, counted in no
	// phase: the bots' start-up work (B's audience migration check, the
	// senders' first round trips) out of the idle figures.
	twoBotsWarmUp = 10 * time.Second
	// twoBotsSettle is left out between the broadcast's last copy and the
	// idle phase after it (the progress message's last edits, the filler's
	// end).
	twoBotsSettle = 2 * time.Second
	// twoBotsGoal: A's reply p99 while B broadcasts within this factor of
	// its p99 while B idles.
	twoBotsGoal = 1.2
	// twoBotsShareGoal: B's primary takes at least this share of what the
	// cluster's CPU grew by while B broadcasts.
	twoBotsShareGoal = 0.9
	// twoBotsPaidButton is the preview's paid send button (the admin's
	// language is English).
	twoBotsPaidButton  = "💫 Send paid"
	twoBotsPreviewHead = "📣 Broadcast preview."
	twoBotsTagPrefix   = "bot-"
)

// twoBotsWait bounds each wait for the bots (start, warm-up, preview).
const twoBotsWait = 90 * time.Second

// twoBot is one bot of the section: its emulator, VALKEY_KEY_TAG, the
// hash slot of its keys and the primary owning it, and its process.
type twoBot struct {
	name    string // "A" or "B"
	emu     *tgemu.Emulator
	tag     string
	slot    int64
	primary string // the owning primary's address
	proc    *botProc
}

// twoBotsMark is the state at one moment of the run: the time, each
// primary's CPU (INFO cpu, in the cluster's start order) and commands
// called (INFO commandstats, those run by scripts included), each bot
// process's CPU (/proc) and the host's (/proc/stat).
type twoBotsMark struct {
	at    time.Time
	nodes []time.Duration
	calls []int64
	// byCommand is each primary's calls by command (callsGrowth).
	byCommand []map[string]int64
	bots      [2]time.Duration
	host      hostCPU
}

func benchTwoBots(ctx context.Context, cfg config, _ *valkeyserver.Server, t *table) error {
	dir, err := os.MkdirTemp("", "codemojex-twobots-")
	if err != nil {
		return fmt.Errorf("temporary directory: %w", err)
	}
	defer os.RemoveAll(dir)
	bin, err := buildBot(ctx, cfg.repo, dir)
	if err != nil {
		return err
	}
	cl, err := valkeyserver.StartClusterWith(valkeyserver.ClusterOptions{Primaries: twoBotsPrimaries})
	if err != nil {
		return fmt.Errorf("start cluster: %w", err)
	}
	defer cl.Stop()
	c, err := cl.NewClient()
	if err != nil {
		return fmt.Errorf("connect to the cluster: %w", err)
	}
	defer c.Close()
	bots, err := twoBotsSetup(ctx, cl, c)
	if err != nil {
		return err
	}
	defer func() {
		for _, b := range bots {
			b.emu.Close()
		}
	}()
	if err := writeAudience(ctx, c, bots[1].tag, twoBotsAudience); err != nil {
		return err
	}
	for _, b := range bots {
		addr, err := freeAddr()
		if err != nil {
			return err
		}
		if b.proc, err = startBotProc(bin, dir, "bot "+b.name, twoBotsEnv(cl, b, addr)); err != nil {
			return err
		}
		defer b.proc.stop()
	}
	run, err := twoBotsRun(ctx, cfg, cl, c, bots)
	if err != nil {
		return errors.Join(err, bots[0].proc.failure(), bots[1].proc.failure())
	}
	keys, err := keysByNode(ctx, cl)
	if err != nil {
		return err
	}
	for _, b := range bots {
		if err := b.proc.stop(); err != nil {
			return fmt.Errorf("bot %s: %w\n%s", b.name, err, tail(b.proc.out.String(), 2000))
		}
	}
	twoBotsRows(t, bots, keys, run, cl.Nodes())
	return nil
}

// twoBotsSetup chooses the two bots' tags (bot-1 for A; for B the first
// bot-N whose slot's primary is not A's) and starts their emulators.
// Errors: the cluster's; no tag found on another primary.
func twoBotsSetup(ctx context.Context, cl *valkeyserver.Server, c valkey.Client) ([2]*twoBot, error) {
	bots := [2]*twoBot{{name: "A"}, {name: "B"}}
	for i := 1; i <= 64 && bots[1].tag == ""; i++ {
		tag := twoBotsTagPrefix + strconv.Itoa(i)
		slot, primary, err := tagOwner(ctx, cl, c, tag)
		if err != nil {
			return bots, err
		}
		switch {
		case bots[0].tag == "":
			bots[0].tag, bots[0].slot, bots[0].primary = tag, slot, primary
		case primary != bots[0].primary:
			bots[1].tag, bots[1].slot, bots[1].primary = tag, slot, primary
		}
	}
	if bots[1].tag == "" {
		return bots, fmt.Errorf("no tag %s1..64 on another primary than %s's", twoBotsTagPrefix, bots[0].tag)
	}
	for i, b := range bots {
		opts := []tgemu.Option{tgemu.WithToken(fmt.Sprintf("%d:AAtwoBotsBenchTokenOfBot%sxxxxxxxxxx", 300_000_001+i, b.name)),
			tgemu.WithLimits(paidEmuLimits())}
		if i == 1 {
			opts = append(opts, tgemu.WithAllowAnyChat()) // the synthetic audience
		}
		emu, err := tgemu.New(opts...)
		if err != nil {
			if i == 1 {
				bots[0].emu.Close()
			}
			return bots, fmt.Errorf("emulator of bot %s: %w", b.name, err)
		}
		b.emu = emu
	}
	// Enough Stars for every copy, ten times over (tenths of a Star: one a copy).
	bots[1].emu.SetStarBalance(10 * (twoBotsAudience + 1))
	return bots, nil
}

// tagOwner is the hash slot of tag's keys (CLUSTER KEYSLOT) and the
// address of the primary owning it (CLUSTER NODES). Errors: the cluster's.
func tagOwner(ctx context.Context, cl *valkeyserver.Server, c valkey.Client, tag string) (int64, string, error) {
	key := "{" + tag + "}:x"
	slot, err := c.Do(ctx, c.B().Arbitrary("CLUSTER", "KEYSLOT").Args(key).Build()).AsInt64()
	if err != nil {
		return 0, "", fmt.Errorf("cluster keyslot %s: %w", key, err)
	}
	primary, _, err := cl.Owner(ctx, c, key)
	if err != nil && !errors.Is(err, valkeyserver.ErrNoReplica) { // no replicas here
		return 0, "", err
	}
	return slot, primary.Addr, nil
}

// twoBotsEnv is bot b's environment: the default rates with paid
// broadcasts on at 1,000/s, its own token, emulator and VALKEY_KEY_TAG, the
// cluster's URL, its HTTP server on addr.
func twoBotsEnv(cl *valkeyserver.Server, b *twoBot, addr string) []string {
	return []string{"TELEGRAM_BOT_TOKEN=" + b.emu.Token(), "TELEGRAM_API_URL=" + b.emu.URL(), "VALKEY_URL=" + cl.URL,
		"VALKEY_KEY_TAG=" + b.tag, "ADMIN_IDS=" + strconv.FormatInt(twoBotsAdmin, 10),
		"TELEGRAM_PAID_BROADCAST_RATE=" + strconv.Itoa(paidRate), "LOG_LEVEL=warn", "HTTP_ADDR=" + addr}
}

// twoBotsResult is what a run measured.
type twoBotsResult struct {
	idle      latencies // A's replies to /help sent while B idled (before and after its broadcast)
	idleParts [2]latencies
	busy      latencies // ... while B broadcast
	sent      int       // /help sent in the stream
	marks     [6]twoBotsMark
	copies    int     // B's paid copies to its audience
	copyRate  float64 // their slope from 1 s after the first, msg/s
	tooMany   int     // 429s of both emulators
	expected  int     // B's audience as the preview counts it (the admin included)
	// trace is each /help's latency (or wait by the end) and sentAt when
	// it was sent, in sending order (traceLine).
	trace  []time.Duration
	sentAt []time.Time
}

// traceLine is the worst /help latency of each 5 s from mark 0 (by when
// the /help was sent): where in the run the slow replies were.
func (r twoBotsResult) traceLine() string {
	worst := map[int]time.Duration{}
	last := 0
	for i, s := range r.sentAt {
		if s.Before(r.marks[0].at) {
			continue
		}
		k := int(s.Sub(r.marks[0].at) / (5 * time.Second))
		worst[k] = max(worst[k], r.trace[i])
		last = max(last, k)
	}
	var parts []string
	for k := 0; k <= last; k++ {
		parts = append(parts, fmt.Sprintf("%ds:%v", 5*k, worst[k].Round(time.Millisecond)))
	}
	return strings.Join(parts, " ")
}

// idleSpan and busySpan are the two phases' lengths.
func (r twoBotsResult) idleSpan() time.Duration {
	return r.marks[1].at.Sub(r.marks[0].at) + r.marks[5].at.Sub(r.marks[4].at)
}
func (r twoBotsResult) busySpan() time.Duration { return r.marks[3].at.Sub(r.marks[2].at) }

// nodeRates are primary i's CPU per second of wall time while B idled and
// while it broadcast.
func (r twoBotsResult) nodeRates(i int) (idle, busy float64) {
	m := r.marks
	idle = float64(m[1].nodes[i]-m[0].nodes[i]+m[5].nodes[i]-m[4].nodes[i]) / float64(r.idleSpan())
	busy = float64(m[3].nodes[i]-m[2].nodes[i]) / float64(r.busySpan())
	return idle, busy
}

// callRates are primary i's commands per second while B idled and while it
// broadcast.
func (r twoBotsResult) callRates(i int) (idle, busy float64) {
	m := r.marks
	idle = float64(m[1].calls[i]-m[0].calls[i]+m[5].calls[i]-m[4].calls[i]) / r.idleSpan().Seconds()
	busy = float64(m[3].calls[i]-m[2].calls[i]) / r.busySpan().Seconds()
	return idle, busy
}

// botRates are bot process b's CPU per second while B idled and broadcast.
func (r twoBotsResult) botRates(b int) (idle, busy float64) {
	m := r.marks
	idle = float64(m[1].bots[b]-m[0].bots[b]+m[5].bots[b]-m[4].bots[b]) / float64(r.idleSpan())
	busy = float64(m[3].bots[b]-m[2].bots[b]) / float64(r.busySpan())
	return idle, busy
}

// hostRates are the host's busy share while B idled and broadcast.
func (r twoBotsResult) hostRates() (idle, busy float64) {
	m := r.marks
	idle = m[0].host.busyTo(m[1].host, m[4].host, m[5].host)
	busy = m[2].host.busyTo(m[3].host)
	return idle, busy
}

// twoBotsRun warms both bots up, streams /help to A, and marks the phases:
// B idle (marks 0-1), B's paid broadcast from its first copy to its last
// (2-3), B idle again after a settle (4-5). Errors: a bot not answering, the
// broadcast not starting or not finishing, a /help with other than one
// reply.
func twoBotsRun(ctx context.Context, cfg config, cl *valkeyserver.Server, c valkey.Client, bots [2]*twoBot) (twoBotsResult, error) {
	var res twoBotsResult
	a, b := bots[0], bots[1]
	nodes, closeNodes, err := nodeClientsOf(cl)
	if err != nil {
		return res, err
	}
	defer closeNodes()
	mark := func() (twoBotsMark, error) { return takeTwoBotsMark(ctx, nodes, bots) }
	if err := twoBotsWarm(ctx, a, b); err != nil {
		return res, err
	}
	if res.expected, err = chats.NewAudience(c, b.tag).Size(ctx); err != nil {
		return res, err
	}
	base := map[int64]int{}
	for u := range int64(twoBotsUsers) {
		base[1+u] = len(a.emu.Messages(1 + u))
	}
	stream := startHelpStream(ctx, a.emu)
	defer stream.stop()
	sleepCtx(ctx, twoBotsWarmUp)
	steps := []func() error{
		func() error { sleepCtx(ctx, twoBotsIdle); return ctx.Err() },
		func() error { return startPaidBroadcast(ctx, b.emu) },
		func() error { return waitPaid(ctx, b.emu, res.expected) },
		func() error { sleepCtx(ctx, twoBotsSettle); return ctx.Err() },
		func() error { sleepCtx(ctx, twoBotsAfter); return ctx.Err() },
	}
	if res.marks[0], err = mark(); err != nil {
		return res, err
	}
	for i, step := range steps {
		if err := step(); err != nil {
			return res, err
		}
		if res.marks[i+1], err = mark(); err != nil {
			return res, err
		}
		cfg.log.Info("two bots", "phase", []string{"idle", "preview and tap", "broadcast", "settle", "idle after"}[i],
			"A's /help sent", stream.count(), "B's paid copies", b.emu.PaidSent())
	}
	sent, err := stream.stop()
	if err != nil {
		return res, err
	}
	if err := res.tally(ctx, a.emu, b.emu, sent, base); err != nil {
		return res, err
	}
	for i, n := range cl.Nodes() {
		cfg.log.Debug("two bots: commands whose rate moved most, while B idled → while it broadcast", "primary", n.Addr, "commands", res.callsGrowth(i))
	}
	return res, nil
}

// twoBotsWarm waits until both bots answer: each of A's users and B's
// admin send /help and get the reply. Errors: no reply within twoBotsWait.
func twoBotsWarm(ctx context.Context, a, b *twoBot) error {
	wctx, cancel := context.WithTimeout(ctx, twoBotsWait)
	defer cancel()
	if _, err := b.emu.InjectMessage(tgemu.TextMessage{ChatID: twoBotsAdmin, Text: "/help"}); err != nil {
		return err
	}
	for u := range int64(twoBotsUsers) {
		if _, err := a.emu.InjectMessage(tgemu.TextMessage{ChatID: 1 + u, Text: "/help"}); err != nil {
			return err
		}
	}
	if _, err := b.emu.WaitForMessages(wctx, twoBotsAdmin, 1); err != nil {
		return fmt.Errorf("bot B's first reply: %w", err)
	}
	if err := a.emu.WaitUntil(wctx, func() bool { return len(a.emu.AllMessages()) >= twoBotsUsers }); err != nil {
		return fmt.Errorf("bot A's first replies (%d of %d): %w", len(a.emu.AllMessages()), twoBotsUsers, err)
	}
	return nil
}

// startPaidBroadcast has B's admin send /broadcast with the lazy section's
// 1,000-character text and tap the preview's paid button, and waits for
// the first paid copy. Errors: no preview, no paid button, no copy within
// twoBotsWait.
func startPaidBroadcast(ctx context.Context, emu *tgemu.Emulator) error {
	wctx, cancel := context.WithTimeout(ctx, twoBotsWait)
	defer cancel()
	if _, err := emu.InjectMessage(tgemu.TextMessage{ChatID: twoBotsAdmin, Text: "/broadcast " + lazyText()}); err != nil {
		return err
	}
	var pv tgemu.Message
	if err := emu.WaitUntil(wctx, func() bool {
		for _, m := range emu.Messages(twoBotsAdmin) {
			if strings.HasPrefix(m.Text, twoBotsPreviewHead) {
				pv = m
				return true
			}
		}
		return false
	}); err != nil {
		return fmt.Errorf("bot B's broadcast preview: %w", err)
	}
	data, err := buttonData(pv.ReplyMarkup, twoBotsPaidButton)
	if err != nil {
		return fmt.Errorf("bot B's preview %q: %w", pv.Text, err)
	}
	if _, err := emu.InjectCallbackQuery(tgemu.CallbackQuery{ChatID: twoBotsAdmin, MessageID: pv.ID, From: models.User{ID: twoBotsAdmin}, Data: data}); err != nil {
		return err
	}
	if err := emu.WaitUntil(wctx, func() bool { return emu.PaidSent() > 0 }); err != nil {
		return fmt.Errorf("bot B's first paid copy: %w", err)
	}
	return nil
}

// waitPaid waits until emu accepted n paid copies (at the paid rate, with
// a minute to spare). Errors: fewer by then.
func waitPaid(ctx context.Context, emu *tgemu.Emulator, n int) error {
	wctx, cancel := context.WithTimeout(ctx, time.Duration(n/paidRate)*time.Second+time.Minute)
	defer cancel()
	if err := emu.WaitUntil(wctx, func() bool { return emu.PaidSent() >= n }); err != nil {
		return fmt.Errorf("bot B's broadcast: %d of %d paid copies: %w", emu.PaidSent(), n, err)
	}
	return nil
}

// buttonData is the callback data of the inline button labelled label in
// reply_markup markup. Errors: no such button.
func buttonData(markup, label string) (string, error) {
	var kb models.InlineKeyboardMarkup
	if err := json.Unmarshal([]byte(markup), &kb); err != nil {
		return "", fmt.Errorf("reply_markup %q: %w", markup, err)
	}
	var labels []string
	for _, row := range kb.InlineKeyboard {
		for _, btn := range row {
			if btn.Text == label {
				return btn.CallbackData, nil
			}
			labels = append(labels, btn.Text)
		}
	}
	return "", fmt.Errorf("no button %q (buttons: %q)", label, labels)
}

// tally turns the run into its figures: each /help's latency (its
// injection to its reply's acceptance; the k-th /help of a chat is
// answered by the chat's k-th message after base) in its phase, B's paid
// copies and their rate, the 429s. Errors: a chat with more replies than
// /help (a /help answered by more than one message: the pairing would be
// wrong).
func (r *twoBotsResult) tally(ctx context.Context, a, b *tgemu.Emulator, sent []helpSent, base map[int64]int) error {
	// The replies to the last /help: a second or so, at most 10 s.
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_ = a.WaitUntil(wctx, func() bool { return len(a.AllMessages()) >= len(sent)+twoBotsUsers })
	end := time.Now()
	r.sent = len(sent)
	nth := map[int64]int{}
	msgs := map[int64][]tgemu.Message{}
	for _, s := range sent {
		if _, ok := msgs[s.chat]; !ok {
			msgs[s.chat] = a.Messages(s.chat)
		}
		k := base[s.chat] + nth[s.chat]
		nth[s.chat]++
		var d time.Duration
		delivered := k < len(msgs[s.chat])
		if delivered {
			d = msgs[s.chat][k].Time.Sub(s.at)
		} else {
			d = end.Sub(s.at)
		}
		r.add(s.at, d, delivered)
		r.trace, r.sentAt = append(r.trace, d), append(r.sentAt, s.at)
	}
	for chat, ms := range msgs {
		if len(ms) > base[chat]+nth[chat] {
			return fmt.Errorf("bot A's chat %d got %d messages for %d /help: a /help answered by more than one message", chat, len(ms), base[chat]+nth[chat])
		}
	}
	var times []time.Time
	for _, m := range b.AllMessages() {
		if m.Paid && m.ChatID >= lazyChatBase {
			times = append(times, m.Time)
		}
	}
	slices.SortFunc(times, func(x, y time.Time) int { return x.Compare(y) })
	r.copies = len(times)
	if len(times) > 0 {
		i, _ := slices.BinarySearchFunc(times, times[0].Add(time.Second), func(x, y time.Time) int { return x.Compare(y) })
		r.copyRate = slope(times[i:])
	}
	r.tooMany = a.Stats().TooManyRequests + b.Stats().TooManyRequests
	return nil
}

// add puts one /help's latency d (delivered, or waited that long by the
// end) into the phase its sending time at falls in; the transitions (the
// preview and tap, the settle) count in none.
func (r *twoBotsResult) add(at time.Time, d time.Duration, delivered bool) {
	in := func(from, to twoBotsMark) bool { return !at.Before(from.at) && at.Before(to.at) }
	put := func(l *latencies) {
		if delivered {
			l.delivered = append(l.delivered, d)
		} else {
			l.waited = append(l.waited, d)
		}
	}
	m := r.marks
	switch {
	case in(m[0], m[1]):
		put(&r.idle)
		put(&r.idleParts[0])
	case in(m[4], m[5]):
		put(&r.idle)
		put(&r.idleParts[1])
	case in(m[2], m[3]):
		put(&r.busy)
	}
}

// twoBotsRows adds the section's rows.
func twoBotsRows(t *table, bots [2]*twoBot, keys map[string]map[string]int, r twoBotsResult, nodes []*valkeyserver.Server) {
	a, b := bots[0], bots[1]
	placed := true
	var where []string
	for _, bt := range bots {
		for addr, byTag := range keys {
			if n := byTag[bt.tag]; n > 0 {
				where = append(where, fmt.Sprintf("%s's %s keys on %s", bt.name, commas(n), addr))
				placed = placed && addr == bt.primary
			}
		}
		placed = placed && keys[bt.primary][bt.tag] > 0
	}
	slices.Sort(where)
	t.add(fmt.Sprintf("where the two bots' keys are: VALKEY_KEY_TAG, its hash slot (CLUSTER KEYSLOT) and the primary owning it (CLUSTER NODES); every key of each tag after the run (SCAN of every node: %s)",
		strings.Join(where, "; ")),
		fmt.Sprintf("A `%s` slot %d on %s; B `%s` slot %d on %s", a.tag, a.slot, a.primary, b.tag, b.slot, b.primary), "none: a check",
		"goal: different primaries, every key on its tag's: "+verdict(a.primary != b.primary && placed))
	p50b, p99b := r.busy.quantile(0.50), r.busy.quantile(0.99)
	p50i, p99i := r.idle.quantile(0.50), r.idle.quantile(0.99)
	t.add(fmt.Sprintf("bot A's reply latency p50 / p99 (a user's `/help` injected into A's emulator to the reply accepted), %d users each sending `/help` every %v (%d/s), while B sends a paid broadcast to %s chats vs while B idles (%s replies vs %s: %v before the broadcast, p99 %v, and %v after, p99 %v)",
		twoBotsUsers, twoBotsEvery, twoBotsUsers*int(time.Second)/int(twoBotsEvery), commas(r.expected), commas(len(r.busy.delivered)+len(r.busy.waited)),
		commas(len(r.idle.delivered)+len(r.idle.waited)), twoBotsIdle, r.idleParts[0].quantile(0.99), twoBotsAfter, r.idleParts[1].quantile(0.99)),
		fmt.Sprintf("%v / %v", p50b, p99b), fmt.Sprintf("%v / %v", p50i, p99i),
		fmt.Sprintf("p99 %s, p50 %s; goal p99 ≤ %.1f×: %s", boundRatio(p99b, p99i), boundRatio(p50b, p50i), twoBotsGoal, verdict(withinGoal(p99b, p99i, twoBotsGoal))))
	t.add(fmt.Sprintf("bot B's paid broadcast: copies delivered ÷ limit (least-squares slope from 1 s after the first copy; %s of %s copies to the audience, 429s of both emulators %d) vs the paid rate",
		commas(r.copies), commas(twoBotsAudience), r.tooMany),
		fmt.Sprintf("%.2f (%.0f msg/s)", r.copyRate/paidRate, r.copyRate), fmt.Sprintf("limit: %s/s", commas(paidRate)), ratio(r.copyRate, paidRate))
	var total [2]float64
	for i := range nodes {
		idle, busy := r.nodeRates(i)
		total[0], total[1] = total[0]+idle, total[1]+busy
	}
	added := total[1] - total[0]
	for i, n := range nodes {
		idle, busy := r.nodeRates(i)
		ci, cb := r.callRates(i)
		role := "no bot's slot"
		switch n.Addr {
		case a.primary:
			role = "A's slot"
		case b.primary:
			role = "B's slot"
		}
		share := (busy - idle) / max(added, 1e-9)
		judged := fmt.Sprintf("; %.0f%% of the cluster's added CPU", 100*share)
		if n.Addr == b.primary {
			judged += fmt.Sprintf(" (goal ≥ %.0f%%: %s)", 100*twoBotsShareGoal, verdict(added > 0 && share >= twoBotsShareGoal))
		}
		t.add(fmt.Sprintf("Valkey CPU of primary %d (%s, %s), INFO cpu used_cpu_sys + used_cpu_user per second of wall time (commands run per second, scripts' own included: %s vs %s), while B broadcasts vs while B idles",
			i+1, n.Addr, role, commas(int(cb+0.5)), commas(int(ci+0.5))),
			cpuShare(busy), cpuShare(idle), ratio(busy, idle)+judged)
	}
	ai, ab := r.botRates(0)
	bi, bb := r.botRates(1)
	hi, hb := r.hostRates()
	t.note(fmt.Sprintf("The host's CPUs are shared by the two bots, their emulators (in this process) and the three Valkey nodes, so A's latency also carries what B's broadcast costs the machine, not only the cluster. While B broadcast vs while it idled: the host's CPUs %.0f%% vs %.0f%% busy (/proc/stat, every process on the machine); bot A's process %s vs %s, bot B's %s vs %s (/proc/<pid>/stat). /help sent to A in all: %s (the first %v of them, the warm-up, in no phase).",
		100*hb, 100*hi, cpuShare(ab), cpuShare(ai), cpuShare(bb), cpuShare(bi), commas(r.sent), twoBotsWarmUp))
	t.note("A's worst reply latency in each 5 s of the run, by when the `/help` was sent, from the idle phase's start (B's first paid copy at " +
		shortDuration(r.marks[2].at.Sub(r.marks[0].at)) + ", its last at " + shortDuration(r.marks[3].at.Sub(r.marks[0].at)) + "): " + r.traceLine() + ".")
}

// withinGoal reports whether a ≤ goal × b holds for certain (a's upper
// bound against b's lower one).
func withinGoal(a, b bound, goal float64) bool {
	return !a.inf && b.lo > 0 && a.hi.Seconds() <= goal*b.lo.Seconds()
}

// cpuShare prints CPU seconds per second as ms/s.
func cpuShare(v float64) string { return fmt.Sprintf("%.1f ms/s", v*1000) }

// helpSent is one /help of the stream: its chat and when it was injected.
type helpSent struct {
	chat int64
	at   time.Time
}

// helpStream injects /help into bot A's emulator, one every
// twoBotsEvery/twoBotsUsers, its users in turn, until stopped.
type helpStream struct {
	mu     sync.Mutex
	sent   []helpSent
	err    error
	cancel context.CancelFunc
	done   chan struct{}
}

func startHelpStream(ctx context.Context, emu *tgemu.Emulator) *helpStream {
	ctx, cancel := context.WithCancel(ctx)
	s := &helpStream{cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(twoBotsEvery / twoBotsUsers)
		defer tick.Stop()
		for i := int64(0); ; i++ {
			select {
			case <-tick.C:
			case <-ctx.Done():
				return
			}
			chat := 1 + i%twoBotsUsers
			at := time.Now()
			_, err := emu.InjectMessage(tgemu.TextMessage{ChatID: chat, Text: "/help"})
			s.mu.Lock()
			s.sent = append(s.sent, helpSent{chat, at})
			s.err = err
			s.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return s
}

func (s *helpStream) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.sent)
}

// stop ends the stream and returns what it sent. Errors: an injection's.
func (s *helpStream) stop() ([]helpSent, error) {
	s.cancel()
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, fmt.Errorf("/help stream: %w", s.err)
	}
	return slices.Clone(s.sent), nil
}

// takeTwoBotsMark reads the state now (see twoBotsMark). Errors: INFO's,
// /proc's.
func takeTwoBotsMark(ctx context.Context, nodes []valkey.Client, bots [2]*twoBot) (twoBotsMark, error) {
	m := twoBotsMark{at: time.Now()}
	for _, c := range nodes {
		cpu, err := clientCPU(ctx, c)
		if err != nil {
			return m, err
		}
		calls, err := clientCalls(ctx, c)
		if err != nil {
			return m, err
		}
		m.nodes, m.calls, m.byCommand = append(m.nodes, cpu), append(m.calls, sumCalls(calls)), append(m.byCommand, calls)
	}
	for i, b := range bots {
		cpu, err := procCPU(b.proc.cmd.Process.Pid)
		if err != nil {
			return m, err
		}
		m.bots[i] = cpu
	}
	var err error
	m.host, err = readHostCPU()
	return m, err
}

// clientCalls is the commands the server c talks to has run, by command
// (INFO commandstats' calls; those a script runs included). Errors: INFO's.
func clientCalls(ctx context.Context, c valkey.Client) (map[string]int64, error) {
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		return nil, fmt.Errorf("info commandstats: %w", err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(info, "\n") {
		name, fields, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		for _, kv := range strings.Split(fields, ",") {
			if v, ok := strings.CutPrefix(kv, "calls="); ok {
				n, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return nil, fmt.Errorf("info commandstats %q: %w", line, err)
				}
				out[name] = n
			}
		}
	}
	return out, nil
}

// sumCalls is the total of calls by command.
func sumCalls(calls map[string]int64) int64 {
	var n int64
	for _, v := range calls {
		n += v
	}
	return n
}

// callsGrowth lists primary i's commands whose rate changed most between
// the idle phases and the broadcast, per second (for -v's log).
func (r twoBotsResult) callsGrowth(i int) string {
	m := r.marks
	idle, busy := r.idleSpan().Seconds(), r.busySpan().Seconds()
	type rateOf struct {
		name       string
		idle, busy float64
	}
	var rates []rateOf
	for name := range m[5].byCommand[i] {
		c := func(k int) float64 { return float64(m[k].byCommand[i][name]) }
		rates = append(rates, rateOf{name, (c(1) - c(0) + c(5) - c(4)) / idle, (c(3) - c(2)) / busy})
	}
	slices.SortFunc(rates, func(x, y rateOf) int { return cmpAbs(y.busy-y.idle, x.busy-x.idle) })
	var parts []string
	for _, rt := range rates[:min(8, len(rates))] {
		parts = append(parts, fmt.Sprintf("%s %.0f→%.0f/s", rt.name, rt.idle, rt.busy))
	}
	return strings.Join(parts, ", ")
}

// cmpAbs compares |a| and |b|.
func cmpAbs(a, b float64) int {
	a, b = max(a, -a), max(b, -b)
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nodeClientsOf connects one client to each node of cluster cl (in its
// start order); closeAll closes them. Errors: a connection's.
func nodeClientsOf(cl *valkeyserver.Server) (clients []valkey.Client, closeAll func(), err error) {
	closeAll = func() {
		for _, c := range clients {
			c.Close()
		}
	}
	for _, n := range cl.Nodes() {
		c, err := n.NodeClient()
		if err != nil {
			closeAll()
			return nil, nil, fmt.Errorf("connect to node %s: %w", n.Addr, err)
		}
		clients = append(clients, c)
	}
	return clients, closeAll, nil
}

// keysByNode counts every key of every node of cl by its hash tag ("" for
// none): node address -> tag -> keys (SCAN on each node). Errors: the
// nodes'.
func keysByNode(ctx context.Context, cl *valkeyserver.Server) (map[string]map[string]int, error) {
	clients, closeAll, err := nodeClientsOf(cl)
	if err != nil {
		return nil, err
	}
	defer closeAll()
	out := map[string]map[string]int{}
	for i, n := range cl.Nodes() {
		c := clients[i]
		out[n.Addr] = map[string]int{}
		for cursor := uint64(0); ; {
			e, err := c.Do(ctx, c.B().Scan().Cursor(cursor).Count(1000).Build()).AsScanEntry()
			if err != nil {
				return nil, fmt.Errorf("scan %s: %w", n.Addr, err)
			}
			for _, k := range e.Elements {
				out[n.Addr][hashTag(k)]++
			}
			if cursor = e.Cursor; cursor == 0 {
				break
			}
		}
	}
	return out, nil
}

// hashTag is the hash tag of key k ("{tag}:..."), or "" when it has none.
func hashTag(k string) string {
	rest, ok := strings.CutPrefix(k, "{")
	if !ok {
		return ""
	}
	tag, _, ok := strings.Cut(rest, "}")
	if !ok {
		return ""
	}
	return tag
}

// hostCPU is the host's CPU time so far (/proc/stat's cpu line, clock
// ticks): busy (all but idle and iowait) and total.
type hostCPU struct{ busy, total int64 }

// busyTo is the busy share of the host over the spans from h to ends[0],
// then ends[1] to ends[2], and so on (pairs after the first end).
func (h hostCPU) busyTo(ends ...hostCPU) float64 {
	busy, total := ends[0].busy-h.busy, ends[0].total-h.total
	for i := 1; i+1 < len(ends); i += 2 {
		busy += ends[i+1].busy - ends[i].busy
		total += ends[i+1].total - ends[i].total
	}
	return float64(busy) / float64(max(total, 1))
}

// readHostCPU reads /proc/stat's first line. Errors: /proc's.
func readHostCPU() (hostCPU, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return hostCPU{}, fmt.Errorf("host cpu: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return hostCPU{}, fmt.Errorf("host cpu: /proc/stat begins %q", line)
	}
	var h hostCPU
	for i, v := range f[1:] {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return hostCPU{}, fmt.Errorf("host cpu: %w", err)
		}
		h.total += n
		if i != 3 && i != 4 { // idle, iowait
			h.busy += n
		}
	}
	return h, nil
}

// buildBot builds cmd/bot of the checkout at repo into dir and returns the
// binary's path. Errors: the build's, with its output.
func buildBot(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "bot")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/bot")
	cmd.Dir = repo
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/bot in %s: %w\n%s", repo, err, out)
	}
	return bin, nil
}

// freeAddr is a loopback host:port that was free a moment ago. Errors:
// the listen's.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// botProc is one running bot process.
type botProc struct {
	name    string
	cmd     *exec.Cmd
	out     *lockedBuffer // its stdout and stderr
	done    chan struct{}
	err     error // its exit, once done is closed
	once    sync.Once
	stopErr error
}

// startBotProc runs the bot binary bin in dir (no .env there) with exactly
// env (PATH and HOME added). Errors: the start's.
func startBotProc(bin, dir, name string, env []string) (*botProc, error) {
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p := &botProc{name: name, cmd: cmd, out: &lockedBuffer{}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.out, p.out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// stop asks the process to stop (SIGTERM), waits (SIGKILL after 20 s) and
// returns its exit error; later calls return the same.
func (p *botProc) stop() error {
	p.once.Do(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
		p.stopErr = p.err
	})
	return p.stopErr
}

// failure is nil while the process runs, else its exit and its output's
// tail (why a run failed).
func (p *botProc) failure() error {
	select {
	case <-p.done:
		return fmt.Errorf("%s exited (%v):\n%s", p.name, p.err, tail(p.out.String(), 2000))
	default:
		return nil
	}
}

// tail is the last n bytes of s, marked with "..." when cut.
func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// lockedBuffer is a bytes.Buffer safe for a process's two output streams.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
