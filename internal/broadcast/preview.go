package broadcast

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// PreviewLifetime is how long a broadcast preview can be confirmed (Send)
// or cancelled; a later tap gets a toast and changes nothing.
const PreviewLifetime = 10 * time.Minute

// previewKeep is how long a preview's hash is kept (beyond its lifetime, so
// a late tap is told it expired rather than that it is unknown).
const previewKeep = 24 * time.Hour

// Preview states (field st).
const (
	previewPending   = "p"
	previewSent      = "s"
	previewCancelled = "c"
	previewExpired   = "x"
	// previewReplaced: a newer preview of the same composer replaced it
	// before it was decided (Supersede, replace.lua).
	previewReplaced = "r"
)

// preview is a broadcast waiting for the admin's Send or Cancel, stored in
// {T}:app:bcp:<id>.
type preview struct {
	ID    string
	Text  string    // the text as the chats will see it
	Chat  int64     // the admin's private chat
	Admin int64     // the admin's user id
	Chats int       // the chats it would reach when previewed
	At    time.Time // when it was made (the app's clock)
	State string    // one of the preview* states
	// Broadcast is the broadcast id once Send started it ("" before).
	Broadcast string
	// Plan is when it starts and how long it is spread over (plan.go).
	Plan plan
	// Texts are the texts of the languages with a section of their own
	// (parseTexts; nil: Text for all), kept as JSON in field tl.
	Texts map[string]string
	// Mode is a composed preview's send, chosen when it was composed
	// (Compose): btnSend, btnSendPaid or btnSendPaidCap; "" for a preview
	// shown in Telegram, whose button chooses. Chat and Admin are 0 then.
	Mode string
}

// decision is the outcome of previews.Decide.
type decision string

const (
	decided        decision = "ok"      // this call decided
	decidedBefore  decision = "decided" // an earlier call decided (preview.State says what)
	decisionLate   decision = "expired" // older than PreviewLifetime
	decisionNoSuch decision = "unknown" // no such preview (never made, or kept no longer)
)

// previews owns the broadcast previews ({T}:app:bcp:<id> hashes): every
// Valkey command on them is one of its methods.
type previews struct {
	c       valkey.Client
	keys    Keys
	decide  *valkey.Lua
	claim   *valkey.Lua
	latest  *valkey.Lua
	replace *valkey.Lua
}

func newPreviews(c valkey.Client, keys Keys) *previews {
	return &previews{c: c, keys: keys, decide: luascript.Must(luaFS, "decide"), claim: luascript.Must(luaFS, "claim"),
		latest: luascript.Must(luaFS, "latest"), replace: luascript.Must(luaFS, "replace")}
}

// Supersede makes preview id composer's latest (latest.lua) and settles
// the preview it displaces as replaced when still pending (replace.lua):
// a composer ("tg:<admin>", "console:<session>") has one preview to
// confirm, its newest, so two tabs, the browser's Back or an old preview
// message higher in the chat cannot start a second broadcast. origin is
// the command's key ("" for none): the same command handled again
// displaces nothing. It returns the id replaced ("" for none). Errors:
// the store's (the earlier preview may still be pending then).
func (s *previews) Supersede(ctx context.Context, composer, id, origin string) (string, error) {
	old, err := s.latest.Exec(ctx, s.c, []string{s.keys.Latest(composer)},
		[]string{id, origin, strconv.FormatInt(previewKeep.Milliseconds(), 10)}).ToString()
	if err != nil {
		return "", fmt.Errorf("broadcast: preview %s: latest of %s: %w", id, composer, err)
	}
	if old == "" {
		return "", nil
	}
	n, err := s.replace.Exec(ctx, s.c, []string{s.keys.Preview(old)}, []string{id}).AsInt64()
	if err != nil {
		return "", fmt.Errorf("broadcast: preview %s: replace %s: %w", id, old, err)
	}
	if n == 0 {
		return "", nil
	}
	return old, nil
}

// newPreviewID returns a fresh preview id: 16 base32 characters (80 random
// bits), short enough for a button's 64-byte callback_data.
func newPreviewID() string {
	var b [10]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return strings.ToLower(base32.StdEncoding.EncodeToString(b[:]))
}

// validPreviewID reports whether id has newPreviewID's shape.
func validPreviewID(id string) bool {
	if len(id) != 16 {
		return false
	}
	_, err := base32.StdEncoding.DecodeString(strings.ToUpper(id))
	return err == nil
}

// Create stores p as pending.
func (s *previews) Create(ctx context.Context, p preview) error {
	key := s.keys.Preview(p.ID)
	tl := ""
	if len(p.Texts) > 0 {
		raw, err := json.Marshal(p.Texts)
		if err != nil {
			return fmt.Errorf("broadcast: preview %s: %w", p.ID, err)
		}
		tl = string(raw)
	}
	cmds := s.c.DoMulti(ctx,
		s.c.B().Hset().Key(key).FieldValue().
			FieldValue("text", p.Text).
			FieldValue("chat", strconv.FormatInt(p.Chat, 10)).
			FieldValue("admin", strconv.FormatInt(p.Admin, 10)).
			FieldValue("n", strconv.Itoa(p.Chats)).
			FieldValue("at", strconv.FormatInt(p.At.UnixMilli(), 10)).
			FieldValue("sa", strconv.FormatInt(planStartMS(p.Plan), 10)).
			FieldValue("sp", strconv.FormatInt(p.Plan.Spread.Milliseconds(), 10)).
			FieldValue("m", p.Mode).
			FieldValue("tl", tl).
			FieldValue("st", previewPending).Build(),
		s.c.B().Pexpire().Key(key).Milliseconds(previewKeep.Milliseconds()).Build())
	for _, r := range cmds {
		if err := r.Error(); err != nil {
			return fmt.Errorf("broadcast: preview %s: %w", p.ID, err)
		}
	}
	return nil
}

// Get reads preview id; ok is false when there is none.
func (s *previews) Get(ctx context.Context, id string) (p preview, ok bool, err error) {
	m, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.keys.Preview(id)).Build()).AsStrMap()
	if err != nil {
		return preview{}, false, fmt.Errorf("broadcast: preview %s: %w", id, err)
	}
	if len(m) == 0 {
		return preview{}, false, nil
	}
	chat, _ := strconv.ParseInt(m["chat"], 10, 64)
	admin, _ := strconv.ParseInt(m["admin"], 10, 64)
	n, _ := strconv.Atoi(m["n"])
	at, _ := strconv.ParseInt(m["at"], 10, 64)
	p = preview{ID: id, Text: m["text"], Chat: chat, Admin: admin, Chats: n, At: time.UnixMilli(at), State: m["st"], Broadcast: m["bc"], Mode: m["m"]}
	if sa, _ := strconv.ParseInt(m["sa"], 10, 64); sa > 0 {
		p.Plan.Start = time.UnixMilli(sa)
	}
	sp, _ := strconv.ParseInt(m["sp"], 10, 64)
	p.Plan.Spread = time.Duration(sp) * time.Millisecond
	if tl := m["tl"]; tl != "" {
		if err := json.Unmarshal([]byte(tl), &p.Texts); err != nil {
			return preview{}, false, fmt.Errorf("broadcast: preview %s: texts: %w", id, err)
		}
	}
	return p, true, nil
}

// planStartMS is p's start in unix ms, 0 for at once.
func planStartMS(p plan) int64 {
	if p.Start.IsZero() {
		return 0
	}
	return p.Start.UnixMilli()
}

// SetBroadcast records the broadcast id preview id started.
func (s *previews) SetBroadcast(ctx context.Context, id, broadcast string) error {
	if err := s.c.Do(ctx, s.c.B().Hset().Key(s.keys.Preview(id)).FieldValue().FieldValue("bc", broadcast).Build()).Error(); err != nil {
		return fmt.Errorf("broadcast: preview %s: %w", id, err)
	}
	return nil
}

// Decide settles preview id with Send (previewSent) or Cancel
// (previewCancelled) at now, once (decide.lua): it returns what happened
// and the preview's state afterwards.
func (s *previews) Decide(ctx context.Context, id, what string, now time.Time) (decision, string, error) {
	v, err := s.decide.Exec(ctx, s.c, []string{s.keys.Preview(id)},
		[]string{what, strconv.FormatInt(now.UnixMilli(), 10), strconv.FormatInt(PreviewLifetime.Milliseconds(), 10)}).AsStrSlice()
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("malformed reply %q", v)
	}
	if err != nil {
		return "", "", fmt.Errorf("broadcast: preview %s: %w", id, err)
	}
	return decision(v[0]), v[1], nil
}

// claimLease is how long a confirmation of a composed preview has to
// start its broadcast before another confirmation may take over (Claim).
const claimLease = 30 * time.Second

// Claim outcomes.
const (
	claimed     = "ok"   // this call starts the broadcast
	claimedSent = "sent" // started before: the broadcast id is returned
	claimedBusy = "busy" // another confirmation is starting it (within claimLease)
)

// Claim lets one confirmation at a time start sent preview id's broadcast
// (claim.lua, at now): claimed, claimedSent with the broadcast id, or
// claimedBusy; a preview not decided as sent is claimedBusy too (Decide
// comes first).
func (s *previews) Claim(ctx context.Context, id string, now time.Time) (outcome, broadcast string, err error) {
	v, err := s.claim.Exec(ctx, s.c, []string{s.keys.Preview(id)},
		[]string{strconv.FormatInt(now.UnixMilli(), 10), strconv.FormatInt(claimLease.Milliseconds(), 10)}).AsStrSlice()
	if err == nil && len(v) != 2 {
		err = fmt.Errorf("malformed reply %q", v)
	}
	if err != nil {
		return "", "", fmt.Errorf("broadcast: preview %s: claim: %w", id, err)
	}
	return v[0], v[1], nil
}

// Release gives up a claim on preview id (its start failed): the next
// confirmation may start it at once.
func (s *previews) Release(ctx context.Context, id string) error {
	if err := s.c.Do(ctx, s.c.B().Hdel().Key(s.keys.Preview(id)).Field("cl").Build()).Error(); err != nil {
		return fmt.Errorf("broadcast: preview %s: release: %w", id, err)
	}
	return nil
}

// estimate is how long n messages take at rate messages/s (whole seconds,
// at least 1 s).
func estimate(n, rate int) time.Duration {
	if rate <= 0 {
		rate = 1
	}
	return time.Duration(max((n+rate-1)/rate, 1)) * time.Second
}

// humanDuration renders d as "45 s", "1 min 7 s", "2 h 5 min".
func humanDuration(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%d s", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%d min", s/60)
		}
		return fmt.Sprintf("%d min %d s", s/60, s%60)
	default:
		if (s%3600)/60 == 0 {
			return fmt.Sprintf("%d h", s/3600)
		}
		return fmt.Sprintf("%d h %d min", s/3600, (s%3600)/60)
	}
}

// previewOf is the preview of text to chats chats under plan pl (the
// message Telegram shows, and the console) and the sends it offers, as
// (label, button action) pairs, Cancel aside. Free (paid false): the free
// preview (PreviewText) offering ✅ Send. Paid (paid broadcasts on): the
// paid preview (paidPreviewText, with the Stars balance: balanceLine)
// offering ✅ Send free and 💫 Send paid; or ✅ Send free and "💫 N paid,
// rest free" when the balance covers N copies but not all; or ✅ Send
// free alone when it covers none. The paid preview asks to choose among
// its buttons (Telegram), or, composed in the console (composed true: one
// Confirm, the paid send, or none), to confirm that one (composedAsk).
// With texts per language, the languages' texts and counts follow
// (langLines). Either ends with the plan's lines (planLines). Errors: the
// store's (the counts).
func (s *Service) previewOf(ctx context.Context, text string, texts map[string]string, chats int, pl plan, paid, composed bool) (string, [][2]string, error) {
	copies := chats * len(notifier.Split(text, tgtext.MaxTextUnits))
	rate, paidRate := s.rates(ctx)
	ptext := previewText(text, chats, rate, pl)
	offers := [][2]string{{"✅ Send", btnSend}}
	if paid {
		line, covers, coverable := s.balanceLine(ctx, copies)
		switch {
		case covers:
			offers = [][2]string{{"✅ Send free", btnSend}, {"💫 Send paid", btnSendPaid}}
		case coverable > 0: // paid as far as the balance goes, then free
			offers = [][2]string{{"✅ Send free", btnSend}, {fmt.Sprintf("💫 %d paid, rest free", coverable), btnSendPaidCap}}
		default: // not started paid: the admin adds Stars first, or sends it free
			offers = [][2]string{{"✅ Send free", btnSend}}
		}
		ask := fmt.Sprintf("Choose, or Cancel, within %d minutes.", int(PreviewLifetime/time.Minute))
		if composed {
			ask = composedAsk(offers)
		}
		ptext = paidPreviewText(text, chats, copies, rate, paidRate, line, pl, ask)
	}
	if len(texts) > 0 {
		counts, exact, err := s.langCounts(ctx, texts, chats)
		if err != nil {
			return "", nil, err
		}
		ptext += "\n\n" + langLines(texts, counts, exact)
	}
	if lines := planLines(pl, copies, rate, s.now()); lines != "" {
		ptext += "\n\n" + strings.TrimSuffix(lines, "\n")
	}
	return ptext, offers, nil
}

// rates are the free and the paid broadcasts' rates the previews estimate
// with, in messages/s: the configured ones (Config.GlobalRate, PaidRate),
// or the rate a send budget holding their queue has learned now when it is
// lower (lanes.Inspector.Learned: halved after Telegram's 429s, climbing
// back), as /lanes and the console's Send budgets table show it. A budget
// that cannot be read leaves the configured rates (logged): the estimate
// is not worth refusing the preview.
func (s *Service) rates(ctx context.Context) (free, paid int) {
	free, paid = s.cfg.GlobalRate, s.cfg.PaidRate
	bs, err := s.notifier.Store().Inspector().Learned(ctx)
	if err != nil {
		s.log.Warn("broadcast preview: the learned send budgets could not be read", slog.Any("err", err))
		return free, paid
	}
	for _, b := range bs {
		switch b.Queue {
		case "", tgjob.QueueNotify: // the store's budget (the paid queue is outside it) or bulk's own
			free = lowerRate(free, b.Rate)
		case tgjob.QueuePaid:
			paid = lowerRate(paid, b.Rate)
		}
	}
	return free, paid
}

// lowerRate is learned when it is a rate (> 0) lower than configured,
// else configured.
func lowerRate(configured, learned int) int {
	if learned > 0 && learned < configured {
		return learned
	}
	return configured
}

// paidPreviewText is the preview message when paid broadcasts are on
// (TELEGRAM_PAID_BROADCAST_RATE > 0): the text, the number of chats, and
// both ways to send it, each with its estimated time under plan pl
// (timePhrase: counted from its start when scheduled); the paid one with
// its estimated cost, copies x 0.1 Star (a text split in parts is one
// copy per part); balance, when not "", is a line on the bot's Stars
// balance (balanceLine) put before the last, ask (what to do: "Choose, or
// Cancel, within 10 minutes.").
func paidPreviewText(text string, chats, copies, rate, paidRate int, balance string, pl plan, ask string) string {
	noun := "chats"
	if chats == 1 {
		noun = "chat"
	}
	paidTime := timePhrase(copies, paidRate, pl, fmt.Sprintf("at %d messages/s", paidRate))
	return fmt.Sprintf("📣 Broadcast preview. The chats will see:\n\n%s\n\nIt will reach %d %s:\n"+
		"• ✅ Send free: %s, no fee.\n"+
		"• 💫 Send paid: %s, for about %s Telegram Stars (%d copies × 0.1 Star, from the bot's balance).\n"+
		"%s%s", text, chats, noun, timePhrase(copies, rate, pl, currentRate(rate)),
		paidTime, notifier.FormatStars(copies*notifier.StarTenthsPerCopy), copies,
		balance, ask)
}

// composedAsk is a paid preview's last line in the console, where the
// composition chose paid and the page offers one Confirm, the paid send of
// offers (previewOf's), or none when the balance covers no copy: "Confirm
// 💫 Send paid, or Cancel, within 10 minutes (to send it free, choose free
// and preview again)."
func composedAsk(offers [][2]string) string {
	if len(offers) < 2 {
		return "It cannot be sent paid: Cancel, or choose free and preview again."
	}
	return fmt.Sprintf("Confirm %s, or Cancel, within %d minutes (to send it free, choose free and preview again).",
		offers[1][0], int(PreviewLifetime/time.Minute))
}

// balanceLine is the paid preview's line on the bot's Stars balance
// (Config.StarBalance) against the cost of copies paid copies, and whether
// the balance covers it (then Send paid is offered): enough; not enough
// (Send paid is not offered: a paid broadcast the balance cannot cover is
// not started paid); or that it could not be read ("" without a
// StarBalance): then Send paid is offered, and if the balance runs out the
// paid part halts and the admin is asked to continue free or stop.
func (s *Service) balanceLine(ctx context.Context, copies int) (line string, covers bool, coverable int) {
	if s.cfg.StarBalance == nil {
		return "", true, copies
	}
	tenths, err := s.starBalance(ctx)
	if err != nil {
		s.log.Warn("broadcast preview: the Stars balance could not be read", "err", err)
		return "The bot's Stars balance could not be read: a paid broadcast halts when it runs out (then ▶️ Continue free or 🛑 Stop).\n", true, copies
	}
	coverable = int(min(max(tenths, 0)/notifier.StarTenthsPerCopy, int64(copies)))
	return BalanceText(tenths, copies) + "\n", tenths >= int64(copies*notifier.StarTenthsPerCopy), coverable
}

// starBalance reads the bot's Stars balance in tenths (Config.StarBalance,
// at most 5 s). Errors: no StarBalance configured; the Bot API's.
func (s *Service) starBalance(ctx context.Context) (int64, error) {
	if s.cfg.StarBalance == nil {
		return 0, fmt.Errorf("broadcast: the Stars balance is not known (no StarBalance)")
	}
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	return s.cfg.StarBalance(bctx)
}

// BalanceText is the paid preview's balance line: the bot's balance
// (tenths of a Star) against copies paid copies at 0.1 Star each.
func BalanceText(tenths int64, copies int) string {
	cost := int64(copies * notifier.StarTenthsPerCopy)
	bal := notifier.FormatStars(int(min(tenths, 1<<40)))
	if tenths >= cost {
		return fmt.Sprintf("The bot's Stars balance: %s Stars, enough for it.", bal)
	}
	covered := max(tenths, 0) / notifier.StarTenthsPerCopy
	if covered == 0 {
		return fmt.Sprintf("The bot's Stars balance: %s Stars, not enough for one paid copy of the %d, so Send paid is not offered; "+
			"add Stars and send /broadcast again, or send it free.", bal, copies)
	}
	return fmt.Sprintf("The bot's Stars balance: %s Stars, not enough: it pays for %d of the %d copies, so Send paid is not offered; "+
		"send the first %d paid and the rest free, add Stars and send /broadcast again, or send it free.", bal, covered, copies, covered)
}

// PreviewText is the preview message of a free broadcast sent at once:
// the text as the chats will see it, the number of chats (and the
// messages each gets when the text is split), and the estimated time of
// all the messages at rate messages/s.
func PreviewText(text string, chats, rate int) string {
	return previewText(text, chats, rate, plan{})
}

// currentRate is how the free preview names the budget's rate of rate
// messages/s: "at the current rate of 30 messages/s".
func currentRate(rate int) string {
	return fmt.Sprintf("at the current rate of %d messages/s", rate)
}

// timePhrase is how long copies messages take at rate messages/s under
// plan pl, as the previews write it, at naming the rate: "in about 2 min
// at the current rate of 30 messages/s"; scheduled (pl.Start set), counted
// from its start, which the plan's line gives: "taking about 2 min once
// it starts, at the current rate of 30 messages/s" (not "in about 2 min"
// beside "Starts in 1 h"); spread over longer than the budget needs,
// "over 2 h (spread)" ("over 2 h (spread) once it starts"): the plan's
// line gives the pace.
func timePhrase(copies, rate int, pl plan, at string) string {
	est := estimate(copies, rate)
	switch {
	case pl.Spread > est && pl.Start.IsZero():
		return fmt.Sprintf("over %s (spread)", humanDuration(pl.Spread))
	case pl.Spread > est:
		return fmt.Sprintf("over %s (spread) once it starts", humanDuration(pl.Spread))
	case pl.Start.IsZero():
		return fmt.Sprintf("in about %s %s", humanDuration(est), at)
	}
	return fmt.Sprintf("taking about %s once it starts, %s", humanDuration(est), at)
}

// previewText is PreviewText under plan pl (timePhrase).
func previewText(text string, chats, rate int, pl plan) string {
	noun := "chats"
	if chats == 1 {
		noun = "chat"
	}
	parts := len(notifier.Split(text, tgtext.MaxTextUnits))
	each := ""
	if parts > 1 { // the time is the messages': chats × parts
		each = fmt.Sprintf(" (%d messages each: the text is split in %d)", parts, parts)
	}
	return fmt.Sprintf("📣 Broadcast preview. The chats will see:\n\n%s\n\nIt will reach %d %s%s, %s. "+
		"Send or Cancel within %d minutes.", text, chats, noun, each, timePhrase(chats*parts, rate, pl, currentRate(rate)), int(PreviewLifetime/time.Minute))
}
