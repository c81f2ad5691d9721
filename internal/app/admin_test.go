package app

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/tgemu"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

func TestAdminCommands(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	adminUser, eve := user(adminID, "Admin"), user(801, "Eve")
	ctx := context.Background()
	weight := func(chat string) int {
		w, err := r.app.Store().Inspector().Weight(ctx, chat)
		require.NoError(t, err)
		return w
	}

	for _, tc := range []struct {
		name string
		from int64
		text string
		want string
	}{
		{"refused weight", eve.ID, "/weight 42 5", "⛔ /weight is for bot admins only."},
		{"refused weights", eve.ID, "/weights", "⛔ /weights is for bot admins only."},
		{"refused lanes", eve.ID, "/lanes", "⛔ /lanes is for bot admins only."},
		{"refused dlq", eve.ID, "/dlq", "⛔ /dlq is for bot admins only."},
		{"refused broadcast", eve.ID, "/broadcast hi", "⛔ /broadcast is for bot admins only."},
		{"missing arguments", adminID, "/weight", "❌ Missing arguments: which chat? Usage: /weight <chat_id> [<weight 1-1000>]"},
		{"non-numeric chat id", adminID, "/weight abc 5", `❌ Chat id "abc" is not a number. Usage: /weight <chat_id> [<weight 1-1000>]`},
		{"chat id too large", adminID, "/weight 99999999999999999999 5", "❌ Chat id 99999999999999999999 is too large to be a chat id."},
		{"chat id zero", adminID, "/weight 0 5", "❌ Chat id 0 is not a chat."},
		{"weight zero", adminID, "/weight 42 0", "❌ Weight 0 is too small: the minimum is 1 (weights are 1 to 1000)."},
		{"weight negative", adminID, "/weight 42 -3", "❌ Weight -3 is negative: weights are 1 to 1000."},
		{"weight fractional", adminID, "/weight 42 2.5", "❌ Weight 2.5: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight in exponent form", adminID, "/weight 42 1e3", "❌ Weight 1e3: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight with a decimal point", adminID, "/weight 42 1.0", "❌ Weight 1.0: write the weight as a whole number from 1 to 1000, like 5."},
		{"weight negative fractional", adminID, "/weight 42 -0.5", "❌ Weight -0.5 is negative: weights are 1 to 1000."},
		{"weight too negative for an integer", adminID, "/weight 42 -99999999999999999999", "❌ Weight -99999999999999999999 is negative: weights are 1 to 1000."},
		{"weight above maximum", adminID, "/weight 42 1001", "❌ Weight 1001 is above the maximum of 1000."},
		{"weight too large for an integer", adminID, "/weight 42 99999999999999999999", "❌ Weight 99999999999999999999 is too large for an integer; the maximum is 1000."},
		{"weight not a number", adminID, "/weight 42 heavy", `❌ Weight "heavy" is not a number: use a whole number from 1 to 1000.`},
		{"extra arguments", adminID, "/weight 42 5 7", "❌ Too many arguments: 3 given, at most 2. Usage: /weight <chat_id> [<weight 1-1000>]"},
		{"weights extra arguments", adminID, "/weights all", "❌ /weights takes no arguments."},
		{"lanes extra arguments", adminID, "/lanes x", "❌ /lanes takes no arguments."},
		{"dlq unknown argument", adminID, "/dlq x", `❌ Unknown argument "x". ` + admin.DLQUsage},
		{"audit extra arguments", adminID, "/audit x", "❌ /audit takes no arguments."},
		{"refused audit", eve.ID, "/audit", "⛔ /audit is for bot admins only."},
		{"list default", adminID, "/weights", "Every chat has the default weight 1."},
		{"show default", adminID, "/weight 42", "Chat 42: weight 1 (default 1), for replies and notifications alike."},
		{"set", adminID, "/weight 42 5", "✅ Chat 42: weight set to 5 (was 1), for replies and notifications alike."},
		{"set group", adminID, "/weight@codemojex_test_bot -100777 300", "✅ Chat -100777: weight set to 300 (was 1), for replies and notifications alike."},
		{"show set", adminID, "/weight 42", "Chat 42: weight 5 (default 1), for replies and notifications alike."},
		{"list", adminID, "/weights", "Chat weights, for replies and notifications alike (others: 1):\n• chat -100777: 300\n• chat 42: 5"},
		{"dlq empty", adminID, "/dlq", "No dead letters."},
		{"broadcast without text", adminID, "/broadcast", "❌ Missing text. Usage: /broadcast [in <duration>] [over <duration>] <text>"},
	} {
		from := user(tc.from, "U")
		require.Equal(t, tc.want, h.ask(0, from, tc.text), tc.name)
	}
	require.Equal(t, 5, weight("42"), "refused and bad commands changed nothing")
	require.Equal(t, 300, weight("-100777"))

	// /lanes: the deepest lanes with depth, weight and in flight. The lane
	// is parked (as after a 429) so its notifications stay pending.
	n := r.app.Notifier()
	_, err := r.app.Store().Inspector().Park(ctx, tgjob.QueueNotify, "42", time.Minute)
	require.NoError(t, err)
	for range 3 {
		_, err := n.Notify(ctx, 42, notifyMsg("queued"))
		require.NoError(t, err)
	}
	// An update waiting on its (parked) lane of the update queue.
	_, err = r.app.inbox.Store().Inspector().Park(ctx, intake.QueueName, "43", time.Minute)
	require.NoError(t, err)
	h.say(0, user(43, "Waiting"), "/help")
	require.Eventually(t, func() bool { n, err := r.app.inbox.Unhandled(ctx); return err == nil && n == 1 }, wait, 10*time.Millisecond)
	lanesReply := h.ask(0, adminUser, "/lanes")
	// (The update in flight is this /lanes.)
	require.Regexp(t, `^Queue update: 1 pending, 1 in flight, 0 dead, \d+ lane\(s\) ready, 1 parked\n• chat 43: depth 1, weight 1, in flight 0, parked until `, lanesReply)
	require.Contains(t, lanesReply, "Queue reply:")
	require.Contains(t, lanesReply, "Queue notify:")
	require.Contains(t, lanesReply, "• chat 42: depth 3, weight 5, in flight 0, parked until ")
	// The send budgets, none lowered: replies and bulk together at their
	// start (the bulk rate), each queue's own at its configured rate. A
	// budget that sent in a proof epoch (10 s of the server clock) that
	// ended during the test also shows what it proved.
	proven := `(, proven \d+ \(bursts of 429s forgiven: 0\))?`
	require.Regexp(t, `\n\nSend budgets \(limits, not use\), messages per second \(a 1\.01 s window, for the server clock's rounding\): each one's limit now, learned from Telegram's 429s, and its configured ceiling:\n`+
		`• global: limit (\d+), ceiling \d+ \(replies and bulk together: started at (\d+), raised while messages wait, a 429 takes a raise back\)`+proven+`, never lowered\n`+
		`• bulk: limit \d+, ceiling \d+`+proven+`, never lowered\n• reply: limit \d+, ceiling \d+`+proven+`, never lowered\n`, lanesReply)

	// /dlq after a message to a chat that blocked the bot.
	h.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err = n.Notify(ctx, 4242, notifyMsg("hello?"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ds, err := r.app.Store().Inspector().DeadLetters(ctx, tgjob.QueueNotify, lanes.DeadQuery{Newest: 1})
		return err == nil && len(ds) == 1
	}, wait, 20*time.Millisecond)
	require.Regexp(t, `Recent dead letters \(newest first\):\n• \S+ \S+ chat 4242 \(notify\): forbidden.*, \d+ attempts?`, h.ask(0, adminUser, "/dlq"))
}

// A weight set with /weight is the chat's in every queue the bot declares
// (tgjob.Queues): /lanes shows it, as applied, on the chat's lane in each
// queue; set back to 1 with /weight it equals no weight (the same reply,
// weight and lanes) and leaves no weight key behind.
func TestWeightCommandGovernsEveryQueue(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	adminUser := user(adminID, "Admin")
	ctx := context.Background()
	in := r.app.Store().Inspector()
	weightKeys := func() []string {
		keys, err := h.c.Do(ctx, h.c.B().Keys().Pattern("{"+h.tag+"}*").Build()).AsStrSlice()
		require.NoError(t, err)
		var out []string
		for _, k := range keys {
			if strings.Contains(k, "weight") {
				out = append(out, k)
			}
		}
		return out
	}
	require.Empty(t, weightKeys())
	fresh := h.ask(0, adminUser, "/weight 42")
	require.Equal(t, "✅ Chat 42: weight set to 5 (was 1), for replies and notifications alike.", h.ask(0, adminUser, "/weight 42 5"))
	require.Len(t, weightKeys(), 1, "one write, one key")

	// Park chat 42 in every queue and give it a job in each, so /lanes lists it.
	n := r.app.Notifier()
	for _, q := range tgjob.Queues() {
		_, err := in.Park(ctx, q, "42", time.Minute)
		require.NoError(t, err)
	}
	for _, class := range []notifier.Class{notifier.Reply, notifier.Notification} {
		_, err := n.Notify(ctx, 42, notifier.Message{Text: "queued", Class: class})
		require.NoError(t, err)
	}
	lanesReply := h.ask(0, adminUser, "/lanes")
	for _, q := range tgjob.Queues() {
		st, err := in.Stats(ctx, q, 10)
		require.NoError(t, err)
		require.Len(t, st.Top, 1, "queue %s", q)
		require.Equal(t, 5, st.Top[0].Weight, "queue %s: the weight applied to chat 42's lane", q)
		require.Contains(t, lanesReply, "Queue "+q+":")
	}
	require.Equal(t, 2, strings.Count(lanesReply, "• chat 42: depth 1, weight 5, in flight 0"), lanesReply)

	require.Equal(t, "✅ Chat 42: weight set to 1 (was 5), for replies and notifications alike.", h.ask(0, adminUser, "/weight 42 1"))
	require.Equal(t, fresh, h.ask(0, adminUser, "/weight 42"), "weight 1 reads as no weight")
	require.Equal(t, "Every chat has the default weight 1.", h.ask(0, adminUser, "/weights"))
	require.Empty(t, weightKeys(), "weight 1 leaves no key behind")
	require.Equal(t, 2, strings.Count(h.ask(0, adminUser, "/lanes"), "• chat 42: depth 1, weight 1, in flight 0"))
}

// shareChats is the scene of the weighted-share tests: 30 chats, the first
// one (heavyChat) at weight 5, each with 20 messages queued at once.
const (
	shareChats   = 30
	sharePerChat = 20
	heavyChat    = int64(20_000)
)

// weightedShare counts, in delivery order, the messages of msgs to chats
// that match, over the first half of them or until heavy's perChat are
// done, whichever comes first; it returns heavy's count over the median
// count of the other chats.
func weightedShare(t testing.TB, msgs []tgemu.Message, chats []int64, heavy int64, perChat int, match func(tgemu.Message) bool) (float64, map[int64]int) {
	t.Helper()
	in := map[int64]bool{}
	for _, c := range chats {
		in[c] = true
	}
	var seq []int64
	for _, m := range msgs {
		if in[m.ChatID] && match(m) {
			seq = append(seq, m.ChatID)
		}
	}
	require.Len(t, seq, len(chats)*perChat, "every message delivered exactly once")
	count := map[int64]int{}
	for _, c := range seq[:len(seq)/2] {
		count[c]++
		if count[heavy] == perChat {
			break
		}
	}
	var others []int
	for _, c := range chats {
		if c != heavy {
			others = append(others, count[c])
		}
	}
	sort.Ints(others)
	median := float64(others[len(others)/2])
	if len(others)%2 == 0 {
		median = float64(others[len(others)/2-1]+others[len(others)/2]) / 2
	}
	require.Positive(t, median, "counts %v", count)
	return float64(count[heavy]) / median, count
}

// shareHarness starts the bot with only the global rate binding (60
// messages/s; per-chat 100/s and the emulator unlimited), has every chat of
// the scene talk to it once, and sets heavyChat's weight with /weight.
func shareHarness(t testing.TB) (*harness, *running, []int64) {
	// Each chat sends sharePerChat commands at once (a backlog per chat is
	// what the weights share): over the default intake limits by design.
	// Both budgets at 60/s: the reply test's replies and the broadcast
	// test's copies are each bound by theirs.
	h := newHarness(t, "TELEGRAM_GLOBAL_RATE=60", "TELEGRAM_REPLY_RATE=60", "FLOOD_USER_MESSAGES=0")
	r := h.start(nil)
	h.waitLeader(r)
	chats := make([]int64, shareChats)
	for i := range chats {
		chats[i] = heavyChat + int64(i)
	}
	require.Equal(t, "✅ Chat 20000: weight set to 5 (was 1), for replies and notifications alike.",
		h.ask(0, user(adminID, "Admin"), fmt.Sprintf("/weight %d 5", heavyChat)))
	return h, r, chats
}

// waitPending waits until queue holds n pending messages.
func waitPending(t testing.TB, r *running, queue string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		st, err := r.app.Store().Inspector().Stats(context.Background(), queue, 0)
		return err == nil && st.Pending >= n
	}, wait, 20*time.Millisecond, "%d messages queued in %s", n, queue)
}

// shareFloor is the least share, over the median chat's, that the tests
// of the weights ask of the chat of weight 5: a weight of 1 gives about 1
// (one message per turn of the ring, like every chat). The share itself is
// a throughput figure: an ordered lane serves one batch at a time and
// rejoins the ring when its send settles, so a loaded host, slower to
// settle, gives it fewer of its turns (4.00 measured beside eight builds,
// against 4.5 asserted until issue 32; BenchmarkWeightShareOfReplies and
// ...OfBroadcasts report it). The weight's exact share is lanes'
// TestWeightHoldsWhileGlobalRateBinds.
const shareFloor = 2.0

// While only the global rate binds and 30 chats have 20 replies each
// queued, the chat an admin gave weight 5 with /weight gets at least
// shareFloor times the median chat's replies, and every reply is delivered
// once.
func TestWeightIsTheChatsShareOfReplies(t *testing.T) {
	t.Parallel()
	ratio, count := shareOfReplies(t)
	t.Logf("replies: weight 5 chat / median chat = %.2f (counts %v)", ratio, count)
	require.GreaterOrEqual(t, ratio, shareFloor, "counts %v", count)
}

// BenchmarkWeightShareOfReplies: the share of shareOfReplies (the chat of
// weight 5's replies over the median chat's, over the first half of the
// deliveries; 5 is the weight's promise): metric weight5/median, the median
// over b.N runs.
// Run: go test -run '^$' -bench WeightShareOf -benchtime 3x ./internal/app/
func BenchmarkWeightShareOfReplies(b *testing.B) {
	var ratios []float64
	for range b.N {
		ratio, count := shareOfReplies(b)
		b.Logf("replies: weight 5 chat / median chat = %.2f (counts %v)", ratio, count)
		ratios = append(ratios, ratio)
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "weight5/median")
}

// shareOfReplies queues sharePerChat /help replies for each of the
// shareHarness chats at once (every queue paused until all are queued),
// waits for all of them and returns weightedShare's ratio and counts.
func shareOfReplies(tb testing.TB) (float64, map[int64]int) {
	tb.Helper()
	h, r, chats := shareHarness(tb)
	ctx := context.Background()
	// Hold sending while the commands are handled, so every chat has its
	// backlog at once when sending starts.
	require.NoError(tb, r.app.Store().Inspector().Pause(ctx, -1))
	for range sharePerChat {
		for _, c := range chats {
			h.say(0, user(c, "U"), "/help")
		}
	}
	waitPending(tb, r, tgjob.QueueReply, shareChats*sharePerChat)
	require.NoError(tb, r.app.Store().Inspector().Resume(ctx))
	for _, c := range chats {
		h.texts(c, sharePerChat)
	}
	return weightedShare(tb, h.emu.AllMessages(), chats, heavyChat, sharePerChat, func(tgemu.Message) bool { return true })
}

// The same for broadcasts: 20 broadcasts to the 30 chats queued at once,
// the chat of weight 5 gets at least shareFloor times the median chat's
// copies, and every copy is delivered once.
func TestWeightIsTheChatsShareOfBroadcasts(t *testing.T) {
	t.Parallel()
	ratio, count := shareOfBroadcasts(t)
	t.Logf("broadcasts: weight 5 chat / median chat = %.2f (counts %v)", ratio, count)
	require.GreaterOrEqual(t, ratio, shareFloor, "counts %v", count)
}

// BenchmarkWeightShareOfBroadcasts: the share of shareOfBroadcasts, as
// BenchmarkWeightShareOfReplies: metric weight5/median.
// Run: go test -run '^$' -bench WeightShareOf -benchtime 3x ./internal/app/
func BenchmarkWeightShareOfBroadcasts(b *testing.B) {
	var ratios []float64
	for range b.N {
		ratio, count := shareOfBroadcasts(b)
		b.Logf("broadcasts: weight 5 chat / median chat = %.2f (counts %v)", ratio, count)
		ratios = append(ratios, ratio)
	}
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "weight5/median")
}

// shareOfBroadcasts has the shareHarness chats talk to the bot once, then
// sends sharePerChat broadcasts to them (every queue paused until all
// copies are queued), waits for every copy and returns weightedShare's
// ratio and counts over the copies.
func shareOfBroadcasts(tb testing.TB) (float64, map[int64]int) {
	tb.Helper()
	h, r, chats := shareHarness(tb)
	ctx := context.Background()
	h.known(chats...)
	// Each broadcast is composed, then confirmed while every queue is
	// paused (a confirmation answers directly, not through the queues).
	// Composed through the administration API without a composer, not
	// previewed in Telegram: a new /broadcast replaces the admin's earlier
	// preview still unsent, so twenty previews could not all be sent later.
	var tokens []string
	for i := range sharePerChat {
		pv, err := r.app.Admin().ComposeBroadcast(ctx, admin.Composition{Text: fmt.Sprintf("📣 wave %d", i)})
		require.NoError(tb, err)
		require.NotEmpty(tb, pv.Token)
		tokens = append(tokens, pv.Token)
	}
	require.NoError(tb, r.app.Store().Inspector().Pause(ctx, -1))
	for _, tok := range tokens {
		_, err := r.app.Admin().StartBroadcast(ctx, admin.WhoConsole, tok)
		require.NoError(tb, err)
	}
	// Every chat of the scene and the admin's own chat get each broadcast.
	waitPending(tb, r, tgjob.QueueNotify, (shareChats+1)*sharePerChat)
	require.NoError(tb, r.app.Store().Inspector().Resume(ctx))
	for _, c := range chats {
		h.texts(c, 1+sharePerChat)
	}
	return weightedShare(tb, h.emu.AllMessages(), chats, heavyChat, sharePerChat, func(m tgemu.Message) bool {
		return strings.HasPrefix(m.Text, "📣 wave ")
	})
}

// TestAdminCommandsInAGroupAnswerOnlyAHint: an admin's /dlq, /lanes,
// /weights, /weight <chat> 3 and /broadcast sent in a group get the short
// "private chat only" hint there and nothing else: no chat id of anyone
// else reaches the group, no other chat receives anything, and the weight,
// the queues and the tracked broadcasts are as before.
func TestAdminCommandsInAGroupAnswerOnlyAHint(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	adminUser := user(adminID, "Admin")
	in := r.app.Store().Inspector()

	// Data a leaking answer would show: a weight, a dead letter, a known chat.
	require.NoError(t, in.SetWeight(ctx, "42", 7))
	h.emu.SetChatStatus(4242, tgemu.ChatBlocked)
	_, err := r.app.Notifier().Notify(ctx, 4242, notifyMsg("hello?"))
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		ds, err := in.DeadLetters(ctx, tgjob.QueueNotify, lanes.DeadQuery{Newest: 1})
		return err == nil && len(ds) == 1
	}, wait, 20*time.Millisecond)
	const other = 10_500
	h.say(0, user(other, "U"), "/start")
	h.texts(other, 1)
	stats := func() []lanes.Stats {
		var out []lanes.Stats
		for _, q := range tgjob.Queues() {
			st, err := in.Stats(ctx, q, admin.LanesTop)
			require.NoError(t, err)
			out = append(out, st)
		}
		return out
	}
	before := stats()

	const group = -100_500
	h.say(group, user(other, "U"), "/start") // the group is known to the bot
	h.texts(group, 1)
	for _, cmd := range []string{"/dlq", "/lanes", "/weights", "/weight 42 3", "/broadcast hi", "/weight@codemojex_test_bot 42 3"} {
		name := strings.TrimPrefix(strings.Fields(cmd)[0], "/")
		name, _, _ = strings.Cut(name, "@")
		got := h.ask(group, adminUser, cmd)
		require.Equal(t, admin.PrivateOnlyText(name), got, cmd)
		require.NotRegexp(t, `[0-9]`, got, "%s: the hint carries no chat id", cmd)
	}
	h.quiet(group, 500*time.Millisecond)
	require.Len(t, h.emu.Messages(adminID), 0, "the admin's private chat got nothing")
	require.Len(t, h.emu.Messages(other), 1, "no other chat got anything")
	require.Len(t, h.emu.Messages(42), 0)

	w, err := in.Weight(ctx, "42")
	require.NoError(t, err)
	require.Equal(t, 7, w, "/weight in a group changed nothing")
	after := stats()
	for i := range before {
		require.Equal(t, before[i].Pending, after[i].Pending, "no broadcast was queued")
		require.Equal(t, before[i].Dead, after[i].Dead)
	}
	tracked, err := h.tracked(ctx)
	require.NoError(t, err)
	require.Empty(t, tracked, "no broadcast is tracked")
}

// TestAdminAPIFindsChatsByNameAndAuditsTheConsoleAsConsole: a chat is found
// by the start of its title or @username as the bot last saw it (a rename
// replaces the old name in the index), or by id; the console's weight
// change validates like /weight, is audited with who "console" and /audit
// shows it so; /weight agrees.
func TestAdminAPIFindsChatsByNameAndAuditsTheConsoleAsConsole(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	ann := models.User{ID: 5151, FirstName: "Ann", LastName: "Lee", Username: "annlee"}
	h.emu.AddChat(models.Chat{ID: -100555, Title: "Rust Lovers"})
	_, err := h.emu.InjectMessage(tgemu.TextMessage{ChatID: -100555, From: ann, Text: "/help"})
	require.NoError(t, err)
	h.texts(-100555, 1)
	h.say(0, ann, "/help")
	h.texts(ann.ID, 1)
	ad := r.app.Admin()
	names := func(q string) []admin.ChatRef {
		cs, err := ad.FindChats(ctx, q, 10)
		require.NoError(t, err)
		return cs
	}
	require.Equal(t, []admin.ChatRef{{ID: -100555, Name: "Rust Lovers"}}, names("rust"))
	require.Equal(t, []admin.ChatRef{{ID: -100555, Name: "Rust Lovers"}}, names("LOV"), "by a later word of the title")
	require.Equal(t, []admin.ChatRef{{ID: 5151, Name: "Ann Lee (@annlee)"}}, names("@ANN"))
	require.Equal(t, []admin.ChatRef{{ID: 5151, Name: "Ann Lee (@annlee)"}}, names("ann l"))
	require.Equal(t, []admin.ChatRef{{ID: -100555, Name: "Rust Lovers"}}, names("-100555"))
	require.Empty(t, names("zed"))
	h.emu.AddChat(models.Chat{ID: -100555, Title: "Go Lovers"})
	_, err = h.emu.InjectMessage(tgemu.TextMessage{ChatID: -100555, From: ann, Text: "/help"})
	require.NoError(t, err)
	h.texts(-100555, 2)
	require.Empty(t, names("rust"), "the old title is out of the index")
	require.Equal(t, []admin.ChatRef{{ID: -100555, Name: "Go Lovers"}}, names("lovers"), "only once, by its new title")
	require.Equal(t, []admin.ChatRef{{ID: -100555, Name: "Go Lovers"}}, names("go"))

	_, err = ad.SetWeight(ctx, admin.WhoConsole, "42", "0")
	require.EqualError(t, err, h.ask(0, user(adminID, "Admin"), "/weight 42 0"), "the same answer as /weight 42 0")
	ans, err := ad.SetWeight(ctx, admin.WhoConsole, "42", "7")
	require.NoError(t, err)
	require.Equal(t, "✅ Chat 42: weight set to 7 (was 1), for replies and notifications alike.", ans)
	require.Equal(t, "Chat 42: weight 7 (default 1), for replies and notifications alike.", h.ask(0, user(adminID, "Admin"), "/weight 42"))
	require.Regexp(t, `\n• \S+ \S+ console: weight set, chat 42: weight 7 \(was 1\)$`, h.ask(0, user(adminID, "Admin"), "/audit"))
	v, err := ad.Chat(ctx, 5151)
	require.NoError(t, err)
	require.True(t, v.Known)
	require.Equal(t, "Ann Lee (@annlee)", v.Name)
	require.Len(t, v.Lanes, 3, "its lane in the update, reply and notify queues")
}

// TestDLQRequeueKeepsABroadcastsCopiesDead: /dlq requeue puts a plain
// message's dead letter back (delivered once its chat takes it again) but
// keeps a broadcast copy's dead, and says how many it kept: the broadcast's
// progress counted that copy failed, so a requeued copy delivered later
// would be counted sent too, and a stopped broadcast sends nothing after its
// stop. The broadcast's final counts stay as they were.
func TestDLQRequeueKeepsABroadcastsCopiesDead(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := h.start(nil)
	h.waitLeader(r)
	ctx := context.Background()
	adminUser := user(adminID, "Admin")
	const blocked, plain = int64(10_701), int64(4242)
	h.known(adminID, 10_700, blocked)
	h.emu.SetChatStatus(blocked, tgemu.ChatBlocked)
	h.emu.SetChatStatus(plain, tgemu.ChatBlocked)

	const text = "📣 kept dead"
	pv, buttons := h.broadcastPreview(text)
	h.tapAdmin(pv.ID, buttons["✅ Send"])
	final := "✅ Broadcast done: 2 sent, 1 failed (forbidden 1), 0 remaining of 3"
	h.poll("the broadcast's final counts", func() (bool, string) {
		for _, m := range h.progressMsgs() {
			if m.CurrentText() == final {
				return true, ""
			}
		}
		return false, fmt.Sprint(h.progressMsgs())
	})
	_, err := r.app.Notifier().Notify(ctx, plain, notifyMsg("hello again?"))
	require.NoError(t, err)
	dead := func() int {
		n := 0
		for _, q := range tgjob.Queues() {
			st, err := r.app.Store().Inspector().Stats(ctx, q, 0)
			require.NoError(t, err)
			n += st.Dead
		}
		return n
	}
	h.poll("two dead letters: the copy and the plain message", func() (bool, string) { n := dead(); return n == 2, fmt.Sprint(n) })

	// Both chats take messages again (their users pressed /start).
	h.emu.SetChatStatus(blocked, tgemu.ChatActive)
	h.emu.SetChatStatus(plain, tgemu.ChatActive)
	h.say(0, user(blocked, "U"), "/start")
	h.say(0, user(plain, "U"), "/start")
	h.texts(blocked, 2)
	h.texts(plain, 1)

	got := h.ask(0, adminUser, "/dlq requeue")
	require.Regexp(t, `^✅ Requeued 1 dead letter \(.*\)\. 1 broadcast copy kept dead: a broadcast counts its failed copies in its progress and sends nothing after its stop \(send a new broadcast to reach those chats; /dlq purge deletes the copies\)\. Dead updates are not requeued`, got)
	h.poll("the plain message delivered", func() (bool, string) {
		n := testkit.CopiesIn(h.emu, plain, "hello again?")
		return n == 1, fmt.Sprint(n)
	})
	h.quiet(blocked, 500*time.Millisecond)
	require.Zero(t, testkit.CopiesIn(h.emu, blocked, text), "the copy kept dead is not sent")
	require.Equal(t, 1, dead(), "the copy is still a dead letter")
	require.Equal(t, final, h.progressMsgs()[0].CurrentText(), "the counts stand")

	require.Equal(t, "No dead letters to requeue. 1 broadcast copy kept dead: a broadcast counts its failed copies in its progress and sends nothing after its stop (send a new broadcast to reach those chats; /dlq purge deletes the copies). Dead updates are not requeued (their chat has moved on); /dlq purge deletes them.",
		h.ask(0, adminUser, "/dlq requeue"))
}
