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

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/intake"
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
func (a *App) admin(h bot.HandlerFunc) bot.HandlerFunc {
	return func(ctx context.Context, b *bot.Bot, u *models.Update) {
		m := u.Message
		c, _ := a.cmd(u)
		if m.From == nil || !a.cfg.IsAdmin(m.From.ID) {
			a.reply(ctx, m, "⛔ /"+c.Name+" is for bot admins only.")
			return
		}
		if !adminChat(m) {
			a.reply(ctx, m, privateOnlyText(c.Name))
			return
		}
		h(ctx, b, u)
	}
}

// adminChat reports whether m was written in the private chat of its
// sender with the bot (Telegram: a private chat's id is the user's id).
func adminChat(m *models.Message) bool {
	return m.From != nil && isPrivate(m) && m.Chat.ID == m.From.ID
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
	var out weightArgs
	chat, err := strconv.ParseInt(f[0], 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		return weightArgs{}, fmt.Sprintf("❌ Chat id %s is too large to be a chat id.", f[0])
	case err != nil:
		return weightArgs{}, fmt.Sprintf("❌ Chat id %q is not a number. %s", f[0], weightUsage)
	case chat == 0:
		return weightArgs{}, "❌ Chat id 0 is not a chat."
	}
	out.Chat = chat
	if len(f) == 1 {
		return out, ""
	}
	ws := f[1]
	negative := fmt.Sprintf("❌ Weight %s is negative: weights are 1 to %d.", ws, lanes.MaxWeight)
	w, err := strconv.ParseInt(ws, 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) && strings.HasPrefix(ws, "-"):
		return weightArgs{}, negative
	case errors.Is(err, strconv.ErrRange):
		return weightArgs{}, fmt.Sprintf("❌ Weight %s is too large for an integer; the maximum is %d.", ws, lanes.MaxWeight)
	case err != nil:
		if x, ferr := strconv.ParseFloat(ws, 64); ferr == nil && !math.IsNaN(x) && !math.IsInf(x, 0) {
			if x < 0 {
				return weightArgs{}, negative
			}
			// 2.5, but also 1e3 or 1.0: a whole value not written as one.
			return weightArgs{}, fmt.Sprintf("❌ Weight %s: write the weight as a whole number from 1 to %d, like 5.", ws, lanes.MaxWeight)
		}
		return weightArgs{}, fmt.Sprintf("❌ Weight %q is not a number: use a whole number from 1 to %d.", ws, lanes.MaxWeight)
	case w == 0:
		return weightArgs{}, fmt.Sprintf("❌ Weight 0 is too small: the minimum is 1 (weights are 1 to %d).", lanes.MaxWeight)
	case w < 0:
		return weightArgs{}, negative
	case w > lanes.MaxWeight:
		return weightArgs{}, fmt.Sprintf("❌ Weight %d is above the maximum of %d.", w, lanes.MaxWeight)
	}
	out.Weight, out.HasWeight = int(w), true
	return out, ""
}

func (a *App) onWeight(ctx context.Context, _ *bot.Bot, u *models.Update) {
	c, _ := a.cmd(u)
	args, bad := parseWeightArgs(c.Args)
	if bad != "" {
		a.reply(ctx, u.Message, bad)
		return
	}
	group := tgjob.Group(args.Chat)
	// A weight is the chat's (lanes keeps one per group, read by every
	// queue's claim): its share of everything the bot sends it, replies and
	// notifications alike, while the global rate binds.
	old, err := a.store.Inspector().Weight(ctx, group)
	if err != nil {
		runOf(ctx).fail(err)
		return
	}
	if !args.HasWeight {
		a.reply(ctx, u.Message, fmt.Sprintf("Chat %d: weight %d (default 1), for replies and notifications alike.", args.Chat, old))
		return
	}
	if args.Weight == old {
		// Nothing changes: nothing to write, nothing audited.
		a.reply(ctx, u.Message, fmt.Sprintf("Chat %d: weight is already %d; unchanged.", args.Chat, old))
		return
	}
	if err := a.store.Inspector().SetWeight(ctx, group, args.Weight); err != nil {
		runOf(ctx).fail(err)
		return
	}
	a.audit(ctx, u, actionWeightSet, fmt.Sprintf("chat %d: weight %d (was %d)", args.Chat, args.Weight, old))
	a.reply(ctx, u.Message, fmt.Sprintf("✅ Chat %d: weight set to %d (was %d), for replies and notifications alike.", args.Chat, args.Weight, old))
}

func (a *App) onWeights(ctx context.Context, _ *bot.Bot, u *models.Update) {
	if c, _ := a.cmd(u); c.Args != "" {
		a.reply(ctx, u.Message, "❌ /weights takes no arguments.")
		return
	}
	ws, err := a.store.Inspector().Weights(ctx)
	if err != nil {
		runOf(ctx).fail(err)
		return
	}
	if len(ws) == 0 {
		a.reply(ctx, u.Message, "Every chat has the default weight 1.")
		return
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
	a.reply(ctx, u.Message, b.String())
}

func (a *App) onLanes(ctx context.Context, _ *bot.Bot, u *models.Update) {
	if c, _ := a.cmd(u); c.Args != "" {
		a.reply(ctx, u.Message, "❌ /lanes takes no arguments.")
		return
	}
	var b strings.Builder
	// The update queue first (recorded updates waiting for a handler, per
	// chat), then the outbound queues.
	for i, src := range a.deadSources(true) {
		q := src.q
		st, err := src.in.Stats(ctx, q, lanesTop)
		if err != nil {
			runOf(ctx).fail(err)
			return
		}
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Queue %s: %d pending, %d in flight, %d dead, %d lanes ready, %d parked",
			q, st.Pending, st.InFlight, st.Dead, st.Ring, st.Parked)
		if len(st.Top) == 0 {
			b.WriteString("\n  no pending lanes")
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
		runOf(ctx).fail(err)
		return
	}
	b.WriteString("\n\n" + lim)
	a.reply(ctx, u.Message, b.String())
}

// dlqUpdatesNote ends /dlq requeue's reply: dead updates stay dead on
// purpose (their chat's handled mark has passed them, so a requeued one
// would be skipped, or applied out of order).
const dlqUpdatesNote = "Dead updates are not requeued (their chat has moved on); /dlq purge deletes them."

const dlqUsage = "Usage: /dlq (list), /dlq requeue (put the dead letters back on their lanes) or /dlq purge (delete them)"

// onDLQ lists the recent dead letters, or with "requeue" / "purge" acts on
// the dead letters of every queue (at most dlqBatch per queue per command;
// recorded in the audit stream).
func (a *App) onDLQ(ctx context.Context, _ *bot.Bot, u *models.Update) {
	switch c, _ := a.cmd(u); c.Args {
	case "":
	case "requeue":
		a.dlqRequeue(ctx, u)
		return
	case "purge":
		a.dlqPurge(ctx, u)
		return
	default:
		a.reply(ctx, u.Message, fmt.Sprintf("❌ Unknown argument %q. %s", c.Args, dlqUsage))
		return
	}
	type dl struct {
		lanes.DeadLetter
		queue string
	}
	var all []dl
	for _, src := range a.deadSources(true) {
		ds, err := src.in.DeadLetters(ctx, src.q, lanes.DeadQuery{Newest: dlqShown})
		if err != nil {
			runOf(ctx).fail(err)
			return
		}
		for _, d := range ds {
			all = append(all, dl{d, src.q})
		}
	}
	if len(all) == 0 {
		a.reply(ctx, u.Message, "No dead letters.")
		return
	}
	slices.SortStableFunc(all, func(x, y dl) int { return y.At.Compare(x.At) })
	all = all[:min(len(all), dlqShown)]
	var b strings.Builder
	b.WriteString("Recent dead letters (newest first):")
	for _, d := range all {
		reason := d.Reason
		if reason == "" {
			reason = "unknown"
		}
		fmt.Fprintf(&b, "\n• %s chat %s (%s): %s, %d attempts", d.At.UTC().Format(time.DateTime), d.Group, d.queue, reason, d.Attempts)
	}
	a.reply(ctx, u.Message, b.String())
}

// dlqRequeue puts the newest dlqBatch dead letters of each outbound queue
// back on their lanes (attempts reset). Dead updates are not requeued: a
// chat's later updates have been handled since, and an update is applied
// only in update_id order (its chat's handled mark has passed it); /dlq
// shows them and /dlq purge removes them.
func (a *App) dlqRequeue(ctx context.Context, u *models.Update) {
	total := 0
	var per []string
	for _, src := range a.deadSources(false) {
		in, q := src.in, src.q
		ds, err := in.DeadLetters(ctx, q, lanes.DeadQuery{Newest: dlqBatch})
		if err != nil {
			runOf(ctx).fail(err)
			return
		}
		ids := make([]lanes.JobID, len(ds))
		for i, d := range ds {
			ids[i] = d.ID
		}
		n, err := in.RequeueDead(ctx, q, ids...)
		if err != nil {
			runOf(ctx).fail(err)
			return
		}
		total += n
		per = append(per, fmt.Sprintf("%s %d", q, n))
	}
	if total == 0 {
		a.reply(ctx, u.Message, "No dead letters to requeue. "+dlqUpdatesNote)
		return
	}
	a.audit(ctx, u, actionDeadRequeued, fmt.Sprintf("%d (%s)", total, strings.Join(per, ", ")))
	a.reply(ctx, u.Message, fmt.Sprintf("✅ Requeued %d dead letters (%s). %s", total, strings.Join(per, ", "), dlqUpdatesNote))
}

// dlqPurge deletes up to dlqBatch dead letters of each queue, the update
// queue included.
func (a *App) dlqPurge(ctx context.Context, u *models.Update) {
	total := 0
	var per []string
	for _, src := range a.deadSources(true) {
		n, err := src.in.PurgeDead(ctx, src.q, 0, dlqBatch)
		if err != nil {
			runOf(ctx).fail(err)
			return
		}
		total += n
		per = append(per, fmt.Sprintf("%s %d", src.q, n))
	}
	if total == 0 {
		a.reply(ctx, u.Message, "No dead letters to purge.")
		return
	}
	a.audit(ctx, u, actionDeadPurged, fmt.Sprintf("%d (%s)", total, strings.Join(per, ", ")))
	a.reply(ctx, u.Message, fmt.Sprintf("🗑 Purged %d dead letters (%s).", total, strings.Join(per, ", ")))
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
	for _, q := range tgjob.Queues() {
		out = append(out, deadSource{a.store.Inspector(), q})
	}
	return out
}
