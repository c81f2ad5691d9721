package broadcast

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// clock is a test's settable clock (Config.Now).
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// composeService is a Service whose audience knows n chats, on clk, with
// its audit trail.
func composeService(t *testing.T, n int, clk *clock) (*Service, *auditTrail) {
	t.Helper()
	trail := &auditTrail{}
	s, _ := newService(t, time.Second, func(c *Config) { c.Audit, c.Now = trail, clk.Now })
	for i := range n {
		require.NoError(t, s.cfg.Audience.(*chats.Audience).Add(context.Background(), int64(5000+i)))
	}
	return s, trail
}

// refusal is err's *RefusedError text ("" when err is not one).
func refusal(err error) string {
	var re *RefusedError
	if errors.As(err, &re) {
		return re.Text
	}
	return ""
}

// A composed broadcast starts once however often, and however
// concurrently, it is confirmed: of ten concurrent confirmations one starts
// it (the answer the Telegram preview's edit gives) and the others answer
// that it is sent or being started, with one broadcast of every known chat,
// one audit entry by the confirming name with the Telegram path's detail,
// and its progress tracked without a progress message; a confirmation
// after that answers "Already sent" with its id, and completes the start
// when a crash left it untracked (the preview recording the id, nothing
// tracking it). The preview is the Telegram one.
func TestComposedBroadcastStartsOnceHoweverOftenConfirmed(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, trail := composeService(t, 3, clk)
	ctx := context.Background()
	pv, err := s.Compose(ctx, Composition{Text: "  📣 composed  "})
	require.NoError(t, err)
	require.True(t, validPreviewID(pv.Token), pv.Token)
	require.Equal(t, Preview{Token: pv.Token, Text: PreviewText("📣 composed", 3, 30), Chats: 3, Confirm: "✅ Send",
		Expires: clk.Now().Add(PreviewLifetime)}, pv)

	type result struct{ id, answer string }
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
	)
	for range 10 {
		wg.Go(func() {
			id, answer, err := s.StartComposed(ctx, "console", pv.Token)
			require.NoError(t, err)
			mu.Lock()
			results = append(results, result{id, answer})
			mu.Unlock()
		})
	}
	wg.Wait()
	var id string
	started := 0
	for _, r := range results {
		if strings.HasPrefix(r.answer, "📣 Sending to 3 chats: broadcast ") {
			started++
			id = r.id
		}
	}
	require.Equal(t, 1, started, "one confirmation starts it: %v", results)
	for _, r := range results {
		require.Contains(t, []result{{id, "📣 Sending to 3 chats: broadcast " + id + "."}, {id, "Already sent (broadcast " + id + ")."}, {"", composedStarted}}, r)
	}
	require.Equal(t, []string{"console|" + ActionSent + "|" + id + " to 3 chats"}, trail.recorded(), "audited once, as the Telegram path words it")
	p, err := s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 3, p.Total)
	require.Equal(t, 3, p.Queued, "its first copies are on their lanes")
	all, err := s.tracking.Tracked(ctx)
	require.NoError(t, err)
	require.JSONEq(t, `{"chat":0,"pv":"`+pv.Token+`","job":"","msg":0,"last":""}`, all[id], "tracked, without a progress message")

	again, answer, err := s.StartComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, []string{id, "Already sent (broadcast " + id + ")."}, []string{again, answer})
	require.Len(t, trail.recorded(), 1)

	// A confirmation whose process died after the preview recorded the id
	// and before the tracking: the next confirmation completes the start.
	require.NoError(t, s.tracking.Untrack(ctx, id))
	again, answer, err = s.StartComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, []string{id, "Already sent (broadcast " + id + ")."}, []string{again, answer})
	all, err = s.tracking.Tracked(ctx)
	require.NoError(t, err)
	require.Contains(t, all, id, "tracked again: /broadcasts and /metrics list it")
	require.Len(t, trail.recorded(), 1, "started once")
}

// A composition's plan is /broadcast's: written the same way and held to
// the same bounds, shown with the same lines; a scheduled one is started
// as scheduled (its answer and audit entry say from when and over how
// long), and once stopped it is untracked. Empty text, paid with paid
// broadcasts off, a bad plan or no known chats are refused with
// /broadcast's words, nothing stored.
func TestComposeTakesThePlanAndRefusesWhatBroadcastRefuses(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now().UTC().Truncate(time.Minute)} // the filler starts a plan whose start is past at once
	start := clk.Now().Add(2 * time.Hour)
	at := start.Format("2006-01-02 15:04:05 UTC")
	ctx := context.Background()
	empty, _ := composeService(t, 0, clk)
	_, err := empty.Compose(ctx, Composition{Text: "hi"})
	require.Equal(t, "No known chats to broadcast to.", refusal(err))

	s, trail := composeService(t, 3, clk)
	for _, tc := range []struct {
		c    Composition
		want string
	}{
		{Composition{Text: " \n "}, "❌ Missing text."},
		{Composition{Text: "hi", Paid: true}, "💫 Paid broadcasts are off (TELEGRAM_PAID_BROADCAST_RATE=0)."},
		{Composition{Text: "hi", In: "30s"}, `❌ "in" 30s: want 1 minute to 7 days.`},
		{Composition{Text: "hi", Over: "8d"}, `❌ "over" 8d: want 1 minute to 7 days.`},
		{Composition{Text: "hi", In: "soon"}, `❌ "in" soon: not a duration (like 90m, 2h or 1d12h).`},
	} {
		_, err := s.Compose(ctx, tc.c)
		require.Equal(t, tc.want, refusal(err), "%+v", tc.c)
	}

	pv, err := s.Compose(ctx, Composition{Text: "🕘 later", In: "2h", Over: " 1m "})
	require.NoError(t, err)
	require.Equal(t, previewText("🕘 later", 3, 30, plan{Start: start, Spread: time.Minute})+"\n\n🕘 Starts at "+at+" (in 2 h).\n⏳ Spread over 1 min: about one message every 20 s.", pv.Text)
	id, answer, err := s.StartComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, "🕘 Scheduled for "+at+" to 3 chats: broadcast "+id+".", answer)
	require.Equal(t, []string{"console|" + ActionSent + "|" + id + " to 3 chats, from " + at + ", over 1 min"}, trail.recorded())
	p, err := s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, start, p.At.UTC())
	require.True(t, p.Scheduled(time.Now()), "scheduled")
	require.InDelta(t, 0.05, p.Rate, 1e-9, "spread")

	stop, err := s.Stop(ctx, "console", id)
	require.NoError(t, err)
	require.Equal(t, "🛑 Broadcast "+id+" stopped: 0 sent before the stop, 3 cancelled.", stop)
	require.NoError(t, s.trackOnce(ctx))
	all, err := s.tracking.Tracked(ctx)
	require.NoError(t, err)
	require.Empty(t, all, "done, untracked")
}

// A composed preview is confirmed within PreviewLifetime (on the app's
// clock) or not at all; an unknown token, one not shaped like a preview's,
// or a Telegram preview's id (its buttons decide it) starts nothing.
func TestComposedPreviewExpiresAndOnlyItsTokenStartsIt(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, trail := composeService(t, 2, clk)
	ctx := context.Background()
	pv, err := s.Compose(ctx, Composition{Text: "late"})
	require.NoError(t, err)
	clk.Add(PreviewLifetime + time.Millisecond)
	_, _, err = s.StartComposed(ctx, "console", pv.Token)
	require.Equal(t, composedLate, refusal(err))
	_, _, err = s.StartComposed(ctx, "console", pv.Token)
	require.Equal(t, composedLate, refusal(err), "expired stays expired")

	tg := preview{ID: newPreviewID(), Text: "telegram", Chat: adminID, Admin: adminID, Chats: 2, At: clk.Now()}
	require.NoError(t, s.previews.Create(ctx, tg))
	for _, token := range []string{tg.ID, newPreviewID(), "not-a-token", ""} {
		_, _, err = s.StartComposed(ctx, "console", token)
		require.Equal(t, composedGone, refusal(err), token)
	}
	require.Empty(t, trail.recorded(), "nothing started")
}

// One confirmation at a time starts a sent preview's broadcast (claim.lua):
// a second within the lease is busy, one after a released claim (a failed
// start) or after the lease (a crashed one) takes over, and once the
// broadcast id is recorded every claim returns it; a preview not decided
// as sent cannot be claimed.
func TestClaimLetsOneConfirmationStartAtATime(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, _ := composeService(t, 1, clk)
	ctx := context.Background()
	pv, err := s.Compose(ctx, Composition{Text: "claimed"})
	require.NoError(t, err)
	claim := func() []string {
		o, bc, err := s.previews.Claim(ctx, pv.Token, clk.Now())
		require.NoError(t, err)
		return []string{o, bc}
	}
	require.Equal(t, []string{claimedBusy, ""}, claim(), "pending, not decided")
	_, _, err = s.previews.Decide(ctx, pv.Token, previewSent, clk.Now())
	require.NoError(t, err)
	require.Equal(t, []string{claimed, ""}, claim())
	require.Equal(t, []string{claimedBusy, ""}, claim())
	require.NoError(t, s.previews.Release(ctx, pv.Token))
	require.Equal(t, []string{claimed, ""}, claim(), "released: taken at once")
	clk.Add(claimLease - time.Millisecond)
	require.Equal(t, []string{claimedBusy, ""}, claim())
	clk.Add(time.Millisecond)
	require.Equal(t, []string{claimed, ""}, claim(), "the lease is over")
	require.NoError(t, s.previews.SetBroadcast(ctx, pv.Token, "bc_x"))
	require.Equal(t, []string{claimedSent, "bc_x"}, claim())
}

// A confirmation whose start fails midway (here: the audit entry cannot
// be recorded, after the broadcast was started) releases its claim, and the
// next confirmation completes it: the same broadcast (keyed by the
// preview), audited.
func TestAFailedConfirmationIsCompletedByTheNext(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	failing := &failingAudit{}
	s, _ := newService(t, time.Second, func(c *Config) { c.Audit, c.Now = failing, clk.Now })
	ctx := context.Background()
	require.NoError(t, s.cfg.Audience.(*chats.Audience).Add(ctx, 6001))
	pv, err := s.Compose(ctx, Composition{Text: "retry"})
	require.NoError(t, err)
	failing.fail = true
	_, _, err = s.StartComposed(ctx, "console", pv.Token)
	require.ErrorIs(t, err, errAuditDown)
	failing.fail = false
	id, answer, err := s.StartComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, "📣 Sending to 1 chats: broadcast "+id+".", answer)
	require.Equal(t, []string{"console|" + ActionSent + "|" + id + " to 1 chats"}, failing.recorded())
	p, err := s.notifier.Progress(ctx, id)
	require.NoError(t, err)
	require.Equal(t, 1, p.Total)
	st, err := s.notifier.Store().Inspector().Stats(ctx, tgjob.QueueNotify, 0)
	require.NoError(t, err)
	require.Equal(t, 1, st.Pending, "one copy: the retry got the first start's broadcast back")
}

var errAuditDown = errors.New("audit down")

// failingAudit is an audit trail that refuses entries while fail is set.
type failingAudit struct {
	auditTrail
	fail bool
}

func (a *failingAudit) Record(ctx context.Context, who, action, detail string) error {
	if a.fail {
		return errAuditDown
	}
	return a.auditTrail.Record(ctx, who, action, detail)
}

func (a *failingAudit) RecordOnce(ctx context.Context, key string, keep time.Duration, who, action, detail string) (bool, error) {
	if a.fail {
		return false, errAuditDown
	}
	return a.auditTrail.RecordOnce(ctx, key, keep, who, action, detail)
}

// The console's compose takes a text per language as /broadcast does: the
// preview shows each language's text and its chats (a chat's /language
// choice counted), a code the catalog lacks is refused, and a service
// without Config.Languages refuses sections.
func TestComposedBroadcastTakesATextPerLanguage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clk := &clock{now: time.Now()}
	trail := &auditTrail{}
	s, _ := newService(t, time.Second, func(c *Config) {
		c.Audit, c.Now = trail, clk.Now
		c.Languages = chats.NewLanguages(c.Client, c.Tag)
	})
	for i := range 3 {
		require.NoError(t, s.cfg.Audience.(*chats.Audience).Add(ctx, int64(5000+i)))
	}
	require.NoError(t, s.cfg.Languages.(*chats.Languages).Set(ctx, 5001, "ru"))
	pv, err := s.Compose(ctx, Composition{Text: "Hi\n[ru]\nПривет"})
	require.NoError(t, err)
	require.Contains(t, pv.Text, PreviewText("Hi", 3, 30))
	require.Contains(t, pv.Text, "🌐 [ru] 1 chat will see:\n\nПривет\n\n🌐 The default text goes to 2 chats")
	require.NotContains(t, pv.Text, "Estimated")
	p, ok, err := s.previews.Get(ctx, pv.Token)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, map[string]string{"ru": "Привет"}, p.Texts, "the preview keeps the texts per language")

	_, err = s.Compose(ctx, Composition{Text: "Hi\n[xx]\nfoo"})
	require.Contains(t, refusal(err), "❌ unknown language [xx]")
	plain, _ := composeService(t, 1, clk)
	_, err = plain.Compose(ctx, Composition{Text: "Hi\n[ru]\nПривет"})
	require.Contains(t, refusal(err), "texts per language are off here")
}

// A broadcast spread over a time says at its start that it started and is
// spread, not that it was sent: nothing is sent yet (its copies go out over
// the spread). One at once says sent, as before.
func TestASpreadBroadcastSaysStartedNotSentAtItsStart(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, _ := composeService(t, 3, clk)
	ctx := context.Background()
	for _, tc := range []struct {
		over string
		want string // the answer, %s the broadcast id
	}{
		{"2h", "📣 Started to 3 chats, spread over 2 h: broadcast %s."},
		{"", "📣 Sending to 3 chats: broadcast %s."},
	} {
		pv, err := s.Compose(ctx, Composition{Text: "spread " + tc.over, Over: tc.over})
		require.NoError(t, err)
		id, answer, err := s.StartComposed(ctx, "console", pv.Token)
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf(tc.want, id), answer, "over %q", tc.over)
	}
}

// A composed preview's Cancel (CancelComposed) decides it as the Telegram
// preview's Cancel does: a later confirmation answers that it was
// cancelled and starts nothing, and a second Cancel says it was cancelled
// before; a confirmed preview cannot be cancelled (its broadcast is
// stopped instead: the answer names it), nor an expired one, an unknown
// token or a Telegram preview's id (its buttons decide it).
func TestCancelledComposedPreviewStartsNothingAndSaysWhy(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, trail := composeService(t, 2, clk)
	ctx := context.Background()
	pv, err := s.Compose(ctx, Composition{Text: "maybe"})
	require.NoError(t, err)
	answer, err := s.CancelComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, ComposedCancelled, answer)
	id, answer, err := s.StartComposed(ctx, "console", pv.Token)
	require.Equal(t, ToastWasCancelled, refusal(err))
	require.Empty(t, id+answer)
	answer, err = s.CancelComposed(ctx, "console", pv.Token)
	require.NoError(t, err)
	require.Equal(t, ToastWasCancelled, answer, "cancelled once")
	require.Empty(t, trail.recorded(), "nothing started")

	sent, err := s.Compose(ctx, Composition{Text: "wanted"})
	require.NoError(t, err)
	id, _, err = s.StartComposed(ctx, "console", sent.Token)
	require.NoError(t, err)
	_, err = s.CancelComposed(ctx, "console", sent.Token)
	require.Equal(t, "This preview was confirmed already (broadcast "+id+"): it cannot be cancelled; stop the broadcast instead.", refusal(err))

	late, err := s.Compose(ctx, Composition{Text: "late"})
	require.NoError(t, err)
	clk.Add(PreviewLifetime + time.Millisecond)
	_, err = s.CancelComposed(ctx, "console", late.Token)
	require.Equal(t, cancelLate, refusal(err))

	tg := preview{ID: newPreviewID(), Text: "telegram", Chat: adminID, Admin: adminID, Chats: 2, At: clk.Now()}
	require.NoError(t, s.previews.Create(ctx, tg))
	for _, token := range []string{tg.ID, newPreviewID(), "not-a-token", ""} {
		_, err = s.CancelComposed(ctx, "console", token)
		require.Equal(t, composedGone, refusal(err), token)
	}
	p, ok, err := s.previews.Get(ctx, tg.ID)
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, previewPending, p.State, "a Telegram preview is its buttons'")
}

// A composer has one preview to confirm, its newest: a new composition
// by the same composer replaces the earlier one still unconfirmed, whose
// confirmation then answers ToastReplaced and starts nothing (so two tabs
// or the browser's Back cannot start two broadcasts), and whose Cancel
// says so; another composer's preview, and a composition without a
// composer, replace nothing; a preview confirmed before the new one stays
// sent. The same command handled again (the same origin) replaces
// nothing: the preview it first showed stays the one to confirm.
func TestANewPreviewReplacesTheComposersEarlierUnconfirmedOne(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Now()}
	s, trail := composeService(t, 2, clk)
	ctx := context.Background()
	compose := func(text, composer string) string {
		t.Helper()
		pv, err := s.Compose(ctx, Composition{Text: text, Composer: composer})
		require.NoError(t, err)
		return pv.Token
	}
	first := compose("first", "console:a")
	other := compose("other's", "console:b")
	anon := compose("anonymous", "")
	second := compose("second", "console:a")

	id, answer, err := s.StartComposed(ctx, "console", first)
	require.Equal(t, ToastReplaced, refusal(err), "the earlier preview of the same composer")
	require.Empty(t, id+answer)
	answer, err = s.CancelComposed(ctx, "console", first)
	require.NoError(t, err)
	require.Equal(t, ToastReplaced, answer)
	require.Empty(t, trail.recorded(), "nothing started")
	p, _, err := s.previews.Get(ctx, first)
	require.NoError(t, err)
	require.Equal(t, previewReplaced, p.State)

	started := map[string]string{}
	for _, tok := range []string{second, other, anon} {
		id, _, err := s.StartComposed(ctx, "console", tok)
		require.NoError(t, err, tok)
		started[tok] = id
	}
	require.Len(t, trail.recorded(), 3, "the newest, another composer's and one without a composer start")

	third := compose("third", "console:a")
	id, answer, err = s.StartComposed(ctx, "console", second)
	require.NoError(t, err, "confirmed before the newer one: still sent")
	require.Equal(t, []string{started[second], "Already sent (broadcast " + started[second] + ")."}, []string{id, answer})
	_, _, err = s.StartComposed(ctx, "console", third)
	require.NoError(t, err)
	require.Len(t, trail.recorded(), 4)

	shown := preview{ID: newPreviewID(), Text: "shown", Chat: adminID, Admin: adminID, Chats: 2, At: clk.Now(), State: previewPending}
	again := preview{ID: newPreviewID(), Text: "shown", Chat: adminID, Admin: adminID, Chats: 2, At: clk.Now(), State: previewPending}
	for _, p := range []preview{shown, again} {
		require.NoError(t, s.previews.Create(ctx, p))
		replaced, err := s.previews.Supersede(ctx, "tg:1", p.ID, "upd:7:preview")
		require.NoError(t, err)
		require.Empty(t, replaced, "the first has none to replace; the command handled again replaces nothing")
	}
	p, _, err = s.previews.Get(ctx, shown.ID)
	require.NoError(t, err)
	require.Equal(t, previewPending, p.State, "the preview first shown stays the one to Send")
	next := preview{ID: newPreviewID(), Text: "next", Chat: adminID, Admin: adminID, Chats: 2, At: clk.Now(), State: previewPending}
	require.NoError(t, s.previews.Create(ctx, next))
	replaced, err := s.previews.Supersede(ctx, "tg:1", next.ID, "upd:8:preview")
	require.NoError(t, err)
	require.Equal(t, shown.ID, replaced, "a new command replaces the preview shown")
}
