package admin

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// Admin command limits.
const (
	AuditShown = 20    // entries /audit shows
	LanesTop   = 10    // deepest lanes shown per queue by /lanes
	dlqShown   = 10    // dead letters shown by /dlq
	dlqBatch   = 1_000 // dead letters per queue /dlq requeue or /dlq purge acts on
)

const weightUsage = "Usage: /weight <chat_id> [<weight 1-1000>]"

// Register puts the admin commands (/weight, /weights, /lanes, /dlq,
// /audit), each behind Gate, on m.
func (ad *Admin) Register(m *update.Mux) {
	for name, h := range map[string]update.HandlerFunc{
		"weight": ad.onWeight, "weights": ad.onWeights, "lanes": ad.onLanes, "dlq": ad.onDLQ, "audit": ad.onAudit,
	} {
		m.RouteFunc(update.IsCommand(name, ad.cfg.Username), ad.Gate(h))
	}
}

// cmd returns the command of update u, if any, for this bot
// (update.ParseCommand with the bot's username).
func (ad *Admin) cmd(u *models.Update) update.Command {
	if u.Message == nil {
		return update.Command{}
	}
	c, _ := update.ParseCommand(u.Message, ad.cfg.Username())
	return c
}

// Gate wraps an admin command. A sender not in ADMIN_IDS gets a refusal
// (Config.Refusal: in their language) and nothing else happens (an empty
// ADMIN_IDS means nobody is admin). An
// admin gets the command's answer only in a private chat with the bot:
// admin answers carry other users' chat ids and delivery failures, so in a
// group (or a channel) the admin gets PrivateOnlyText there, with no data,
// and nothing else happens.
func (ad *Admin) Gate(h update.HandlerFunc) update.HandlerFunc {
	return func(ctx context.Context, r *update.Request) (out update.Outcome) {
		m := r.Update.Message
		c := ad.cmd(r.Update)
		if m.From == nil || !ad.cfg.IsAdmin(m.From.ID) {
			reply(&out, m, ad.cfg.Refusal(r, c.Name))
			return out
		}
		if !adminChat(m) {
			reply(&out, m, PrivateOnlyText(c.Name))
			return out
		}
		return h(ctx, r)
	}
}

// reply queues text as the answer to message m (update.ReplyTo: threaded
// under m in a group). It is sent through the notifier once the handler
// returns.
func reply(out *update.Outcome, m *models.Message, text string) {
	out.Reply(update.ReplyTo(m, text))
}

// adminChat reports whether m was written in the private chat of its
// sender with the bot (Telegram: a private chat's id is the user's id).
func adminChat(m *models.Message) bool {
	return m.From != nil && update.IsPrivate(m) && m.Chat.ID == m.From.ID
}

// RefusalText is the English refusal a sender who is not an admin gets
// for admin command name (Config.Refusal's default).
func RefusalText(name string) string { return "⛔ /" + name + " is for bot admins only." }

// PrivateOnlyText is the hint an admin gets for admin command name sent
// outside a private chat with the bot: it carries no data.
func PrivateOnlyText(name string) string {
	return "🔒 /" + name + " works only in a private chat with me. Open a private chat with the bot and send it there."
}

// weightArgs are the parsed arguments of /weight.
type weightArgs struct {
	Chat      int64
	Weight    int
	HasWeight bool
}

// parseWeightArgs parses "/weight <chat_id> [<weight>]". The error text is
// the user-facing reply, one per kind of mistake.
func parseWeightArgs(args string) (weightArgs, string) {
	f := strings.Fields(args)
	switch {
	case len(f) == 0:
		return weightArgs{}, "❌ Missing arguments: which chat? " + weightUsage
	case len(f) > 2:
		return weightArgs{}, fmt.Sprintf("❌ Too many arguments: %d given, at most 2. %s", len(f), weightUsage)
	}
	chat, bad := parseChatID(f[0])
	if bad != "" {
		return weightArgs{}, bad
	}
	out := weightArgs{Chat: chat}
	if len(f) == 1 {
		return out, ""
	}
	if out.Weight, bad = parseWeight(f[1]); bad != "" {
		return weightArgs{}, bad
	}
	out.HasWeight = true
	return out, ""
}

// parseChatID parses /weight's chat id; the error text is the reply.
func parseChatID(s string) (int64, string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, "❌ Missing arguments: which chat? " + weightUsage
	}
	chat, err := strconv.ParseInt(s, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Sprintf("❌ Chat id %s is too large to be a chat id.", s)
	case err != nil:
		return 0, fmt.Sprintf("❌ Chat id %q is not a number. %s", s, weightUsage)
	case chat == 0:
		return 0, "❌ Chat id 0 is not a chat."
	}
	return chat, ""
}

// parseWeight parses /weight's weight (1..lanes.MaxWeight); the error text
// is the reply, one per kind of mistake.
func parseWeight(ws string) (int, string) {
	ws = strings.TrimSpace(ws)
	negative := fmt.Sprintf("❌ Weight %s is negative: weights are 1 to %d.", ws, lanes.MaxWeight)
	w, err := strconv.ParseInt(ws, 10, 64)
	switch {
	case ws == "":
		return 0, fmt.Sprintf("❌ Missing weight: use a whole number from 1 to %d.", lanes.MaxWeight)
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(ws, "-"):
		return 0, negative
	case errors.Is(err, strconv.ErrRange):
		return 0, fmt.Sprintf("❌ Weight %s is too large for an integer; the maximum is %d.", ws, lanes.MaxWeight)
	case err != nil:
		if x, ferr := strconv.ParseFloat(ws, 64); ferr == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
			if x < 0 {
				return 0, negative
			}
			// 2.5, but also 1e3 or 1.0: a whole value not written as one.
			return 0, fmt.Sprintf("❌ Weight %s: write the weight as a whole number from 1 to %d, like 5.", ws, lanes.MaxWeight)
		}
		return 0, fmt.Sprintf("❌ Weight %q is not a number: use a whole number from 1 to %d.", ws, lanes.MaxWeight)
	case w == 0:
		return 0, fmt.Sprintf("❌ Weight 0 is too small: the minimum is 1 (weights are 1 to %d).", lanes.MaxWeight)
	case w < 0:
		return 0, negative
	case w > lanes.MaxWeight:
		return 0, fmt.Sprintf("❌ Weight %d is above the maximum of %d.", w, lanes.MaxWeight)
	}
	return int(w), ""
}

func (ad *Admin) onWeight(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	c := ad.cmd(u)
	args, bad := parseWeightArgs(c.Args)
	if bad != "" {
		reply(&out, u.Message, bad)
		return out
	}
	if !args.HasWeight {
		old, err := ad.out.Weight(ctx, tgjob.Group(args.Chat))
		if err != nil {
			out.Fail(err)
			return out
		}
		reply(&out, u.Message, fmt.Sprintf("Chat %d: weight %d (default 1), for replies and notifications alike.", args.Chat, old))
		return out
	}
	ans, err := ad.setWeight(ctx, Who(u.Message.From.ID), args.Chat, args.Weight)
	if err != nil {
		out.Fail(err)
		return out
	}
	reply(&out, u.Message, ans)
	return out
}

func (ad *Admin) onWeights(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c := ad.cmd(u); c.Args != "" {
		reply(&out, u.Message, "❌ /weights takes no arguments.")
		return out
	}
	ws, err := ad.out.Weights(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	if len(ws) == 0 {
		reply(&out, u.Message, "Every chat has the default weight 1.")
		return out
	}
	groups := make([]string, 0, len(ws))
	for g := range ws {
		groups = append(groups, g)
	}
	sort.Slice(groups, func(i, j int) bool {
		if ws[groups[i]] != ws[groups[j]] {
			return ws[groups[i]] > ws[groups[j]]
		}
		return groups[i] < groups[j]
	})
	var b strings.Builder
	b.WriteString("Chat weights, for replies and notifications alike (others: 1):")
	for _, g := range groups {
		fmt.Fprintf(&b, "\n• chat %s: %d", g, ws[g])
	}
	reply(&out, u.Message, b.String())
	return out
}

func (ad *Admin) onLanes(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c := ad.cmd(u); c.Args != "" {
		reply(&out, u.Message, "❌ /lanes takes no arguments.")
		return out
	}
	qs, err := ad.Queues(ctx, LanesTop)
	if err != nil {
		out.Fail(err)
		return out
	}
	var b strings.Builder
	b.WriteString(queuesText(qs))
	budgets, err := ad.budgetsText(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	b.WriteString("\n\n" + budgets)
	lim, err := ad.limitedText(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	b.WriteString("\n\n" + lim)
	reply(&out, u.Message, b.String())
	return out
}

// queuesText is /lanes's part on the queues qs (Admin.Queues): per queue
// its totals, whether it is paused and why (a halted paid queue: the bot
// could not pay), and its deepest lanes; the update queue first (recorded
// updates waiting for a handler, per chat), then the outbound queues.
func queuesText(qs []QueueView) string {
	var b strings.Builder
	for i, st := range qs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Queue %s: %d pending, %d in flight, %d dead, %d lane(s) ready, %d parked",
			st.Name, st.Pending, st.InFlight, st.Dead, st.Ring, st.Parked)
		if st.Paused != "" {
			fmt.Fprintf(&b, "\n  ⏸ paused: %s", st.Paused)
		}
		if len(st.Top) == 0 {
			b.WriteString("\n  no pending lanes")
		}
		if !st.Complete {
			fmt.Fprintf(&b, "\n  (the deepest of the first %d lanes read)", LaneScan)
		}
		for _, l := range st.Top {
			fmt.Fprintf(&b, "\n• chat %s: depth %d, weight %d, in flight %d", l.Group, l.Depth, l.Weight, l.InFlight)
			if l.Indefinite {
				b.WriteString(", paused")
			} else if !l.ParkedUntil.IsZero() {
				fmt.Fprintf(&b, ", parked until %s", l.ParkedUntil.UTC().Format(time.TimeOnly))
			}
		}
	}
	return b.String()
}

// dlqUpdatesNote ends /dlq requeue's reply: dead updates stay dead on
// purpose (their chat's handled mark has passed them, so a requeued one
// would be skipped, or applied out of order).
const dlqUpdatesNote = "Dead updates are not requeued (their chat has moved on); /dlq purge deletes them."

// DLQUsage ends /dlq's answer to an unknown argument.
const DLQUsage = "Usage: /dlq (list), /dlq requeue (put the dead letters back on their lanes) or /dlq purge (delete them)"

// onDLQ lists the recent dead letters, or with "requeue" / "purge" acts on
// the dead letters of every queue (at most dlqBatch per queue per command;
// recorded in the audit stream).
func (ad *Admin) onDLQ(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	switch c := ad.cmd(u); c.Args {
	case "":
	case "requeue":
		ad.dlqRequeue(ctx, u, &out)
		return out
	case "purge":
		ad.dlqPurge(ctx, u, &out)
		return out
	default:
		reply(&out, u.Message, fmt.Sprintf("❌ Unknown argument %q. %s", c.Args, DLQUsage))
		return out
	}
	var all []DeadView
	for _, src := range ad.deadSources(true) {
		page, err := ad.deadPage(ctx, DeadFilter{Queue: src.q, Limit: dlqShown})
		if err != nil {
			out.Fail(err)
			return out
		}
		all = append(all, page.Letters...)
	}
	if len(all) == 0 {
		reply(&out, u.Message, "No dead letters.")
		return out
	}
	slices.SortStableFunc(all, func(x, y DeadView) int { return y.At.Compare(x.At) })
	all = all[:min(len(all), dlqShown)]
	var b strings.Builder
	b.WriteString("Recent dead letters (newest first):")
	for _, d := range all {
		fmt.Fprintf(&b, "\n• %s chat %s (%s): %s, %s", d.At.UTC().Format(time.DateTime), d.Group, d.Queue, d.Reason, tgtext.Plural(d.Attempts, "attempt", "attempts"))
	}
	reply(&out, u.Message, b.String())
	return out
}

// dlqRequeue puts the newest dlqBatch dead letters of each outbound queue
// back on their lanes (attempts reset), but a broadcast's copies
// (withoutCopies). Dead updates are not requeued: a
// chat's later updates have been handled since, and an update is applied
// only in update_id order (its chat's handled mark has passed it); /dlq
// shows them and /dlq purge removes them.
func (ad *Admin) dlqRequeue(ctx context.Context, u *models.Update, out *update.Outcome) {
	ans, err := ad.requeueDead(ctx, Who(u.Message.From.ID), ad.deadSources(false), DeadFilter{}, nil)
	if err != nil {
		out.Fail(err)
		return
	}
	reply(out, u.Message, ans)
}

// dlqPurge deletes up to dlqBatch dead letters of each queue, the update
// queue included.
func (ad *Admin) dlqPurge(ctx context.Context, u *models.Update, out *update.Outcome) {
	ans, err := ad.purgeDead(ctx, Who(u.Message.From.ID), ad.deadSources(true), DeadFilter{}, nil)
	if err != nil {
		out.Fail(err)
		return
	}
	reply(out, u.Message, ans)
}

// deadSource is one queue whose dead letters the admin commands read.
type deadSource struct {
	in *lanes.Inspector
	q  string
}

// deadSources lists the outbound queues and, with updates, the update queue
// (updates that failed too often: a handler panic, say; its store has no
// Telegram limits).
func (ad *Admin) deadSources(updates bool) []deadSource {
	var out []deadSource
	if updates {
		out = append(out, deadSource{ad.upd, intake.QueueName})
	}
	for _, q := range tgjob.AllQueues() {
		if q == tgjob.QueuePaid && ad.cfg.Rates.PaidBroadcastRate <= 0 {
			continue // paid broadcasts off: the paid queue holds nothing
		}
		out = append(out, deadSource{ad.out, q})
	}
	return out
}

// budgetsText is /lanes' paragraph on the send budgets: each one's limit
// now (lanes.LearnedBudget.Rate, the rate claims are held to: learned,
// halved on 429s from several chats, climbing back; a probed one says how
// it moves) and its configured ceiling, and why and when it last went
// down, e.g. "• global: limit 30, ceiling 30, never lowered". Both are
// limits, not use: "30 of 30" read as a budget fully used when it was
// idle (the use is codemojex_budget_use, on the dashboard).
func (ad *Admin) budgetsText(ctx context.Context) (string, error) {
	bs, err := ad.Budgets(ctx)
	if err != nil {
		return "", err
	}
	if len(bs) == 0 {
		return "Send budgets: none", nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Send budgets (limits, not use), messages %s: each one's limit now, learned from Telegram's 429s, and its configured ceiling:", PerWindow(bs[0].Window))
	for _, x := range bs {
		fmt.Fprintf(&b, "\n• %s: limit %d, ceiling %d", notifier.BudgetName(x.Queue), x.Rate, x.Configured)
		if x.Start > 0 {
			fmt.Fprintf(&b, " (replies and bulk together: started at %d, raised while messages wait, a 429 takes a raise back)", x.Start)
		}
		if x.Proven > 0 || x.Forgiven > 0 {
			fmt.Fprintf(&b, ", proven %d (bursts of 429s forgiven: %d)", x.Proven, x.Forgiven)
		}
		if x.Released > 0 {
			fmt.Fprintf(&b, ", holds released by bursts at its floor: %d", x.Released)
		}
		if x.Lowered.IsZero() {
			b.WriteString(", never lowered")
			continue
		}
		fmt.Fprintf(&b, ", lowered at %s UTC (%s, from %d)", x.Lowered.UTC().Format(time.TimeOnly), x.Why, x.Hit)
		if x.Cap < x.Configured {
			fmt.Fprintf(&b, ", at most %d until %s UTC", x.Cap, x.HoldUntil.UTC().Format(time.TimeOnly))
		}
		fmt.Fprintf(&b, "; decreases in all: %d", x.Decreases)
	}
	return b.String(), nil
}

// PerWindow says a send budget's window w for /lanes and the console's
// Queues page: "per second (a 1.01 s window, for the server clock's
// rounding)" for Telegram's second stretched by a slack under 100 ms
// (notifier.DefaultSlack, 10 ms: lanes scores sends in whole ms), "per
// second" for 1 s exactly, "per <w>" otherwise (a Go duration).
func PerWindow(w time.Duration) string {
	switch {
	case w == time.Second:
		return "per second"
	case w > time.Second && w < time.Second+100*time.Millisecond:
		return fmt.Sprintf("per second (a %s s window, for the server clock's rounding)", strconv.FormatFloat(w.Seconds(), 'f', -1, 64))
	}
	return "per " + w.String()
}

// limitedText is /lanes' paragraph on the chats being limited by the
// intake limits.
func (ad *Admin) limitedText(ctx context.Context) (string, error) {
	if ad.cfg.Flood == nil {
		return "Intake limits: off", nil
	}
	ls, err := ad.LimitedChats(ctx, LanesTop)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	l := ad.cfg.Flood.Limits()
	fmt.Fprintf(&b, "Intake limits per %v: user %s, %s; group %s, %s", l.Window,
		limitOf(l.UserMessages, "messages"), limitOf(l.UserTaps, "taps"), limitOf(l.ChatMessages, "messages"), limitOf(l.ChatTaps, "taps"))
	if len(ls) == 0 {
		b.WriteString("\n  no chat being limited")
	}
	for _, c := range ls {
		fmt.Fprintf(&b, "\n• chat %d limited, listed until %s", c.Chat, c.Until.UTC().Format(time.TimeOnly))
	}
	return b.String(), nil
}

// limitOf states one intake limit of /lanes: "20 messages", or "no limit
// on messages" for 0 (FLOOD_* = 0 turns that limit off, docs/floods.md).
func limitOf(n int, what string) string {
	if n <= 0 {
		return "no limit on " + what
	}
	return strconv.Itoa(n) + " " + what
}

// onAudit shows the last AuditShown admin actions, newest first.
func (ad *Admin) onAudit(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c := ad.cmd(u); c.Args != "" {
		reply(&out, u.Message, "❌ /audit takes no arguments.")
		return out
	}
	es, err := ad.Audit(ctx, AuditShown)
	if err != nil {
		out.Fail(err)
		return out
	}
	if len(es) == 0 {
		reply(&out, u.Message, "No admin actions recorded.")
		return out
	}
	var b strings.Builder
	if len(es) == 1 {
		b.WriteString("The last admin action:")
	} else {
		fmt.Fprintf(&b, "Last %d admin actions (newest first):", len(es))
	}
	for _, e := range es {
		fmt.Fprintf(&b, "\n• %s %s: %s, %s", e.At.UTC().Format(time.DateTime), e.Actor(), e.Action, e.Detail)
	}
	reply(&out, u.Message, b.String())
	return out
}
