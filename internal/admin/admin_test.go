package admin

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// newAdmin is an Admin over stores on a real Valkey, in the test's own
// namespace, without the bot around it (adminID is its one admin).
func newAdmin(t *testing.T) *Admin {
	t.Helper()
	c := valkeytest.Shared(t).Client(t)
	ns := valkeytest.Namespace(t)
	store, err := notifier.NewStore(c, notifier.DefaultLimits(), 0, lanes.WithTag(ns))
	require.NoError(t, err)
	n, err := notifier.New(c, store, notifier.Config{})
	require.NoError(t, err)
	upd, err := lanes.New(c, append(intake.StoreOptions(0), lanes.WithTag(ns))...)
	require.NoError(t, err)
	inbox := intake.NewInbox(c, upd, ns)
	audience := chats.NewAudience(c, ns)
	dir, err := chats.NewDirectory(c, ns)
	require.NoError(t, err)
	games, err := gamestore.New(c, ns)
	require.NoError(t, err)
	audit := NewAuditLog(c, ns, DefaultAuditCap, nil)
	bc, err := broadcast.New(broadcast.Config{Client: c, Tag: ns, Notifier: n, Audience: audience, Journal: inbox,
		Audit: audit, Codec: tapdata.New("1:test-token"), GlobalRate: 30})
	require.NoError(t, err)
	ad, err := New(Config{Outbound: store, Inbox: inbox, Directory: dir, Audience: audience, Games: games, Broadcasts: bc,
		Audit: audit, Client: c, Rates: config.Rates{GlobalRate: 30, ChatRate: 1, GroupRate: 20},
		IsAdmin: func(user int64) bool { return user == adminID }, Username: func() string { return "codemojex_test_bot" }})
	require.NoError(t, err)
	return ad
}

// Gate lets a command through only for an admin in the admin's private
// chat: anyone else gets the refusal, an admin elsewhere the hint with no
// data (threaded under the command in a group), and the command does not
// run.
func TestGateLetsOnlyAnAdminInTheirPrivateChat(t *testing.T) {
	ad := newAdmin(t)
	admin, eve := &models.User{ID: adminID}, &models.User{ID: 801}
	private := func(u *models.User) models.Chat { return models.Chat{ID: u.ID, Type: models.ChatTypePrivate} }
	group := models.Chat{ID: -100500, Type: models.ChatTypeSupergroup}
	for _, tc := range []struct {
		name    string
		from    *models.User
		chat    models.Chat
		want    []update.Reply
		through bool
	}{
		{"an admin in the private chat", admin, private(admin), nil, true},
		{"anyone else", eve, private(eve), []update.Reply{{ChatID: eve.ID, Text: "⛔ /weights is for bot admins only."}}, false},
		{"anyone else in a group", eve, group, []update.Reply{{ChatID: group.ID, Text: "⛔ /weights is for bot admins only.", ReplyTo: 7}}, false},
		{"no sender", nil, group, []update.Reply{{ChatID: group.ID, Text: "⛔ /weights is for bot admins only.", ReplyTo: 7}}, false},
		{"an admin in a group", admin, group, []update.Reply{{ChatID: group.ID, Text: PrivateOnlyText("weights"), ReplyTo: 7}}, false},
		{"an admin in another's private chat", admin, private(eve), []update.Reply{{ChatID: eve.ID, Text: PrivateOnlyText("weights")}}, false},
	} {
		ran := false
		h := ad.Gate(func(context.Context, *update.Request) update.Outcome { ran = true; return update.Outcome{} })
		r := &update.Request{ID: 1, Update: &models.Update{ID: 1, Message: &models.Message{ID: 7, From: tc.from, Chat: tc.chat,
			Text: "/weights@codemojex_test_bot", Entities: []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Length: 27}}}}}
		out := h(context.Background(), r)
		require.NoError(t, out.Err, tc.name)
		require.Equal(t, tc.want, out.Replies, tc.name)
		require.Equal(t, tc.through, ran, tc.name)
	}
}

// The audit log pages newest first: Audit gives the newest, AuditBefore
// the ones before an entry's id; a malformed id is an *InputError with
// its answer; /audit names an admin by user id and the console as such.
func TestAuditPagesNewestFirst(t *testing.T) {
	ad := newAdmin(t)
	ctx := context.Background()
	for i := range 5 {
		who := Who(adminID)
		if i%2 == 1 {
			who = WhoConsole
		}
		require.NoError(t, ad.audit.Record(ctx, who, ActionWeightSet, fmt.Sprintf("entry %d", i)))
	}
	details := func(es []AuditEntry) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Detail)
		}
		return out
	}
	first, err := ad.Audit(ctx, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"entry 4", "entry 3"}, details(first))
	require.Equal(t, "admin 9001", first[0].Actor())
	require.Equal(t, "console", first[1].Actor())
	next, err := ad.AuditBefore(ctx, first[1].ID, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"entry 2", "entry 1"}, details(next))
	last, err := ad.AuditBefore(ctx, next[1].ID, 2)
	require.NoError(t, err)
	require.Equal(t, []string{"entry 0"}, details(last))

	_, err = ad.AuditBefore(ctx, "1-2; DEL x", 2)
	var ie *InputError
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, `❌ "1-2; DEL x" is not an audit entry's id.`, ie.Text)
}

// A broadcast composed through the admin API is the Telegram one: the
// same preview text, refusals as *InputError with /broadcast's answer, a
// confirmation that starts it once (a second answers that it is sent)
// audited with who the console and the Telegram detail, listed by
// Broadcasts; an unknown token starts nothing, nor a cancelled preview's
// (CancelBroadcast), and a confirmed one cannot be cancelled. Paid composition is
// offered only with paid broadcasts on.
func TestComposeBroadcastPreviewsThenStartsOnceAuditedAsConsole(t *testing.T) {
	ad := newAdmin(t)
	ctx := context.Background()
	var ie *InputError
	_, err := ad.ComposeBroadcast(ctx, Composition{Text: "hello"})
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "No known chats to broadcast to.", ie.Text)
	for _, c := range []int64{7001, 7002} {
		require.NoError(t, ad.cfg.Audience.(*chats.Audience).Add(ctx, c))
	}
	_, err = ad.ComposeBroadcast(ctx, Composition{Text: "hello", In: "10s"})
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, `❌ "in" 10s: want 1 minute to 7 days.`, ie.Text)

	pv, err := ad.ComposeBroadcast(ctx, Composition{Text: "hello"})
	require.NoError(t, err)
	require.Equal(t, broadcast.PreviewText("hello", 2, 30), pv.Text)
	require.Equal(t, "✅ Send", pv.Confirm)
	answer, err := ad.StartBroadcast(ctx, WhoConsole, pv.Token)
	require.NoError(t, err)
	m := regexp.MustCompile(`^📣 Sending to 2 chats: broadcast (bc_\w+)\.$`).FindStringSubmatch(answer)
	require.NotNil(t, m, answer)
	id := m[1]
	again, err := ad.StartBroadcast(ctx, WhoConsole, pv.Token)
	require.NoError(t, err)
	require.Equal(t, "Already sent (broadcast "+id+").", again)

	es, err := ad.Audit(ctx, 10)
	require.NoError(t, err)
	require.Len(t, es, 1, "audited once")
	require.Equal(t, []string{"console", broadcast.ActionSent, id + " to 2 chats"}, []string{es[0].Actor(), es[0].Action, es[0].Detail})
	bs, err := ad.Broadcasts(ctx, 10)
	require.NoError(t, err)
	require.Len(t, bs, 1)
	require.Equal(t, []string{id, WhoConsole}, []string{bs[0].ID, bs[0].By})
	require.Equal(t, 2, bs[0].Total)

	_, err = ad.StartBroadcast(ctx, WhoConsole, "aaaaaaaaaaaaaaaa")
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "This preview is no longer known: nothing was sent. Compose it again.", ie.Text)

	cancelled, err := ad.ComposeBroadcast(ctx, Composition{Text: "hello again"})
	require.NoError(t, err)
	answer, err = ad.CancelBroadcast(ctx, WhoConsole, cancelled.Token)
	require.NoError(t, err)
	require.Equal(t, broadcast.ComposedCancelled, answer)
	_, err = ad.StartBroadcast(ctx, WhoConsole, cancelled.Token)
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, broadcast.ToastWasCancelled, ie.Text, "a cancelled preview starts nothing")
	_, err = ad.CancelBroadcast(ctx, WhoConsole, pv.Token)
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "This preview was confirmed already (broadcast "+id+"): it cannot be cancelled; stop the broadcast instead.", ie.Text)
	es, err = ad.Audit(ctx, 10)
	require.NoError(t, err)
	require.Len(t, es, 1, "the cancel starts nothing (and is not audited, as the Telegram Cancel)")

	require.False(t, ad.PaidBroadcasts())
	_, err = ad.ComposeBroadcast(ctx, Composition{Text: "hello", Paid: true})
	require.True(t, errors.As(err, &ie), "%v", err)
	require.Equal(t, "💫 Paid broadcasts are off (TELEGRAM_PAID_BROADCAST_RATE=0).", ie.Text)
	ad.cfg.Rates.PaidBroadcastRate = 100
	require.True(t, ad.PaidBroadcasts())
}

// A send budget's window is said as a rate per second: Telegram's second
// stretched by the slack for the server clock's rounding
// (notifier.DefaultSlack) is "per second" with the window given in
// seconds, not "per 1.01s", which read as an odd unit; another window is
// said as it is.
func TestABudgetsWindowIsSaidPerSecond(t *testing.T) {
	for _, tc := range []struct {
		w    time.Duration
		want string
	}{
		{time.Second + notifier.DefaultSlack, "per second (a 1.01 s window, for the server clock's rounding)"},
		{time.Second + 50*time.Millisecond, "per second (a 1.05 s window, for the server clock's rounding)"},
		{time.Second, "per second"},
		{time.Minute + notifier.DefaultSlack, "per 1m0.01s"},
		{2 * time.Second, "per 2s"},
	} {
		t.Run(tc.w.String(), func(t *testing.T) {
			require.Equal(t, tc.want, PerWindow(tc.w))
		})
	}
}

// /lanes shows each send budget's learned rate against its configured
// ceiling, as limits (an idle budget reads "limit 30, ceiling 30", not "30
// of 30", which read as fully used): untouched, "never lowered"; after
// 429s from several chats halved it, the limit now, when, why, the rate
// that brought it and the hold's cap.
func TestLanesShowsEachBudgetsLearnedRate(t *testing.T) {
	ad := newAdmin(t)
	ctx := context.Background()
	text, err := ad.budgetsText(ctx)
	require.NoError(t, err)
	require.Equal(t, "Send budgets (limits, not use), messages per second (a 1.01 s window, for the server clock's rounding): each one's limit now, learned from Telegram's 429s, and its configured ceiling:\n• global: limit 30, ceiling 30, never lowered", text)
	lowered, rate, err := ad.cfg.Outbound.Inspector().LowerBudget(ctx, "notify", "429 from several chats")
	require.NoError(t, err)
	require.True(t, lowered)
	require.Equal(t, 15, rate)
	text, err = ad.budgetsText(ctx)
	require.NoError(t, err)
	require.Regexp(t, `^Send budgets \(limits, not use\), messages per second \(a 1.01 s window, for the server clock's rounding\): each one's limit now, learned from Telegram's 429s, and its configured ceiling:
• global: limit 15, ceiling 30, lowered at \d\d:\d\d:\d\d UTC \(429 from several chats, from 30\), at most 22 until \d\d:\d\d:\d\d UTC; decreases in all: 1$`, text)
}
