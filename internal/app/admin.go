package app

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
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Admin command limits.
const (
	lanesTop = 10    // deepest lanes shown per queue by /lanes
	dlqShown = 10    // dead letters shown by /dlq
	dlqBatch = 1_000 // dead letters per queue /dlq requeue or /dlq purge acts on
)

const weightUsage = "Usage: /weight <chat_id> [<weight 1-1000>]"

// admin wraps an admin command. A sender not in ADMIN_IDS gets a refusal
// and nothing else happens (an empty ADMIN_IDS means nobody is admin). An
// admin gets the command's answer only in a private chat with the bot:
// admin answers carry other users' chat ids and delivery failures, so in a
// group (or a channel) the admin gets privateOnlyText there, with no data,
// and nothing else happens.
func (a *App) admin(h update.HandlerFunc) update.HandlerFunc {
	return func(ctx context.Context, r *update.Request) (out update.Outcome) {
		m := r.Update.Message
		c, _ := a.cmd(r.Update)
		if m.From == nil || !a.cfg.IsAdmin(m.From.ID) {
			a.reply(&out, m, "⛔ /"+c.Name+" is for bot admins only.")
			return out
		}
		if !adminChat(m) {
			a.reply(&out, m, privateOnlyText(c.Name))
			return out
		}
		return h(ctx, r)
	}
}

// toastAdminOnly answers a tap on an admin's button by anyone else.
const toastAdminOnly = "⛔ For bot admins only, in a private chat with the bot."

// adminTap is admin's gate for taps: only an admin, in the admin's private
// chat, may tap the buttons h handles (the broadcasts'); anyone else gets
// toastAdminOnly and nothing happens.
func (a *App) adminTap(h tapdata.Handler) tapdata.Handler {
	return func(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
		m := q.Message.Message
		if !a.cfg.IsAdmin(q.From.ID) || !update.IsPrivate(m) || m.Chat.ID != q.From.ID {
			return toastAdminOnly
		}
		return h(ctx, r, out, q, d)
	}
}

// adminChat reports whether m was written in the private chat of its
// sender with the bot (Telegram: a private chat's id is the user's id).
func adminChat(m *models.Message) bool {
	return m.From != nil && update.IsPrivate(m) && m.Chat.ID == m.From.ID
}

// privateOnlyText is the hint an admin gets for admin command name sent
// outside a private chat with the bot: it carries no data.
func privateOnlyText(name string) string {
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

func (a *App) onWeight(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	c, _ := a.cmd(u)
	args, bad := parseWeightArgs(c.Args)
	if bad != "" {
		a.reply(&out, u.Message, bad)
		return out
	}
	if !args.HasWeight {
		old, err := a.store.Inspector().Weight(ctx, tgjob.Group(args.Chat))
		if err != nil {
			out.Fail(err)
			return out
		}
		a.reply(&out, u.Message, fmt.Sprintf("Chat %d: weight %d (default 1), for replies and notifications alike.", args.Chat, old))
		return out
	}
	ans, err := a.setWeight(ctx, adminWho(u.Message.From.ID), args.Chat, args.Weight)
	if err != nil {
		out.Fail(err)
		return out
	}
	a.reply(&out, u.Message, ans)
	return out
}

func (a *App) onWeights(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c, _ := a.cmd(u); c.Args != "" {
		a.reply(&out, u.Message, "❌ /weights takes no arguments.")
		return out
	}
	ws, err := a.store.Inspector().Weights(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	if len(ws) == 0 {
		a.reply(&out, u.Message, "Every chat has the default weight 1.")
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
	a.reply(&out, u.Message, b.String())
	return out
}

func (a *App) onLanes(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c, _ := a.cmd(u); c.Args != "" {
		a.reply(&out, u.Message, "❌ /lanes takes no arguments.")
		return out
	}
	qs, err := a.Admin().Queues(ctx, lanesTop)
	if err != nil {
		out.Fail(err)
		return out
	}
	var b strings.Builder
	// The update queue first (recorded updates waiting for a handler, per
	// chat), then the outbound queues.
	for i, st := range qs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Queue %s: %d pending, %d in flight, %d dead, %d lanes ready, %d parked",
			st.Name, st.Pending, st.InFlight, st.Dead, st.Ring, st.Parked)
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
	lim, err := a.limitedText(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	b.WriteString("\n\n" + lim)
	a.reply(&out, u.Message, b.String())
	return out
}

// dlqUpdatesNote ends /dlq requeue's reply: dead updates stay dead on
// purpose (their chat's handled mark has passed them, so a requeued one
// would be skipped, or applied out of order).
const dlqUpdatesNote = "Dead updates are not requeued (their chat has moved on); /dlq purge deletes them."

const dlqUsage = "Usage: /dlq (list), /dlq requeue (put the dead letters back on their lanes) or /dlq purge (delete them)"

// onDLQ lists the recent dead letters, or with "requeue" / "purge" acts on
// the dead letters of every queue (at most dlqBatch per queue per command;
// recorded in the audit stream).
func (a *App) onDLQ(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	switch c, _ := a.cmd(u); c.Args {
	case "":
	case "requeue":
		a.dlqRequeue(ctx, u, &out)
		return out
	case "purge":
		a.dlqPurge(ctx, u, &out)
		return out
	default:
		a.reply(&out, u.Message, fmt.Sprintf("❌ Unknown argument %q. %s", c.Args, dlqUsage))
		return out
	}
	var all []DeadView
	for _, src := range a.deadSources(true) {
		page, err := a.deadPage(ctx, DeadFilter{Queue: src.q, Limit: dlqShown})
		if err != nil {
			out.Fail(err)
			return out
		}
		all = append(all, page.Letters...)
	}
	if len(all) == 0 {
		a.reply(&out, u.Message, "No dead letters.")
		return out
	}
	slices.SortStableFunc(all, func(x, y DeadView) int { return y.At.Compare(x.At) })
	all = all[:min(len(all), dlqShown)]
	var b strings.Builder
	b.WriteString("Recent dead letters (newest first):")
	for _, d := range all {
		fmt.Fprintf(&b, "\n• %s chat %s (%s): %s, %d attempts", d.At.UTC().Format(time.DateTime), d.Group, d.Queue, d.Reason, d.Attempts)
	}
	a.reply(&out, u.Message, b.String())
	return out
}

// dlqRequeue puts the newest dlqBatch dead letters of each outbound queue
// back on their lanes (attempts reset). Dead updates are not requeued: a
// chat's later updates have been handled since, and an update is applied
// only in update_id order (its chat's handled mark has passed it); /dlq
// shows them and /dlq purge removes them.
func (a *App) dlqRequeue(ctx context.Context, u *models.Update, out *update.Outcome) {
	ans, err := a.requeueDead(ctx, adminWho(u.Message.From.ID), a.deadSources(false), DeadFilter{}, nil)
	if err != nil {
		out.Fail(err)
		return
	}
	a.reply(out, u.Message, ans)
}

// dlqPurge deletes up to dlqBatch dead letters of each queue, the update
// queue included.
func (a *App) dlqPurge(ctx context.Context, u *models.Update, out *update.Outcome) {
	ans, err := a.purgeDead(ctx, adminWho(u.Message.From.ID), a.deadSources(true), DeadFilter{}, nil)
	if err != nil {
		out.Fail(err)
		return
	}
	a.reply(out, u.Message, ans)
}

// deadSource is one queue whose dead letters the admin commands read.
type deadSource struct {
	in *lanes.Inspector
	q  string
}

// deadSources lists the outbound queues and, with updates, the update queue
// (updates that failed too often: a handler panic, say; its store has no
// Telegram limits).
func (a *App) deadSources(updates bool) []deadSource {
	var out []deadSource
	if updates {
		out = append(out, deadSource{a.inbox.Store().Inspector(), intake.QueueName})
	}
	for _, q := range tgjob.AllQueues() {
		if q == tgjob.QueuePaid && a.cfg.PaidBroadcastRate <= 0 {
			continue // paid broadcasts off: the paid queue holds nothing
		}
		out = append(out, deadSource{a.store.Inspector(), q})
	}
	return out
}
