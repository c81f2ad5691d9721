package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// tracked is a broadcast whose progress message is kept up to date, as
// stored in {T}:app:bc (field: broadcast id).
type tracked struct {
	Chat    int64       `json:"chat"`        // the admin chat
	Job     lanes.JobID `json:"job"`         // the progress message's job
	Message int         `json:"msg"`         // its Telegram message id, once known
	Last    string      `json:"last"`        // the text it shows
	Edited  time.Time   `json:"at,omitzero"` // when it was last edited
}

// onBroadcast fans /broadcast <text> out to every known chat through the
// notifier (notification queue) and keeps one progress message in the
// admin's chat up to date. Handled again after a crash, it does not
// broadcast twice: the journal keeps the broadcast id (field bc), and the
// broadcast and the progress message carry idempotency keys derived from
// the update id, so a crash between enqueueing and journalling does not
// enqueue them twice either.
func (a *App) onBroadcast(ctx context.Context, _ *bot.Bot, u *models.Update) {
	m := u.Message
	c, _ := a.cmd(u)
	if c.Args == "" {
		a.reply(ctx, m, "❌ Missing text. Usage: /broadcast <text>")
		return
	}
	if f := strings.Fields(c.Args); len(f) == 2 && f[0] == "stop" {
		a.stopBroadcast(ctx, u, f[1])
		return
	}
	text := strings.TrimSpace(m.Text[len(m.Text)-len(c.Args):])
	run := runOf(ctx)
	j, err := a.loadJournal(ctx, run.id)
	if err != nil {
		run.fail(err)
		return
	}
	id := j.BC
	if id == "" {
		chats, err := a.audience.Chats(ctx)
		if err != nil {
			run.fail(err)
			return
		}
		if len(chats) == 0 {
			a.reply(ctx, m, "No known chats to broadcast to.")
			return
		}
		if err := a.inbox.SaveJournal(ctx, run.id, "bcs", "1"); err != nil {
			run.fail(err)
			return
		}
		// The key (the update id) makes a re-run after a crash get the
		// first call's broadcast id back instead of fanning out again.
		id, err = a.notifier.Broadcast(ctx, chats, notifier.Message{Text: text, Key: updateKey(run.epoch, run.id, "")})
		if errors.Is(err, notifier.ErrInvalid) {
			a.reply(ctx, m, "❌ This text cannot be sent: "+err.Error())
			return
		}
		if id == "" && err != nil {
			run.fail(err)
			return
		}
		if err != nil {
			a.log.Error("broadcast partly queued", slog.String("broadcast", id), slog.Any("err", err))
		}
		if j.BCStarted {
			// A re-run: the first run may have been cut while fanning out
			// (a repeat with the key does not resume it).
			p, err := a.notifier.Progress(ctx, id)
			if err != nil && !errors.Is(err, notifier.ErrUnknownBroadcast) {
				run.fail(err)
				return
			}
			if err != nil || p.Queued+p.Failed["inactive"] < p.Total {
				a.reply(ctx, m, "⚠️ A restart interrupted this broadcast while it was being queued; some chats may have it. Check /lanes before sending it again.")
				return
			}
		}
		// Recorded before the journal keeps the id: a re-run after a
		// failure here records it again rather than not at all.
		a.audit(ctx, u, actionBroadcastSent, fmt.Sprintf("%s to %d chats", id, len(chats)))
		if run.err != nil {
			return
		}
		if err := a.inbox.SaveJournal(ctx, run.id, "bc", id); err != nil {
			run.fail(err)
			return
		}
		a.log.Info("broadcast queued", slog.String("broadcast", id), slog.Int("chats", len(chats)))
	}
	exists, err := a.audience.IsTracked(ctx, id)
	if err != nil {
		run.fail(err)
		return
	}
	if exists {
		return
	}
	p, err := a.notifier.Progress(ctx, id)
	if err != nil {
		run.fail(err)
		return
	}
	txt := progressText(p)
	// Keyed: a re-run after a crash gets the same progress message back.
	jobs, err := a.notifier.Notify(ctx, m.Chat.ID, notifier.Message{Text: txt, Class: notifier.Reply, Key: updateKey(run.epoch, run.id, "progress")})
	if err != nil {
		run.fail(err)
		return
	}
	if err := a.audience.Track(ctx, id, tracked{Chat: m.Chat.ID, Job: jobs[0], Last: txt}); err != nil {
		run.fail(err)
		return
	}
	select {
	case a.bcWake <- struct{}{}:
	default:
	}
}

// stopBroadcast handles "/broadcast stop <id>": the copies still queued
// are removed from their lanes (notifier.StopBroadcast), the stop is
// audited, and the admin is told how many were sent before the stop, how
// many were cancelled and how many were in flight (delivered or failed as
// they settle). A broadcast already finished or already stopped is left as
// it is (nothing audited). The progress message shows the same counts at
// its next edit.
func (a *App) stopBroadcast(ctx context.Context, u *models.Update, id string) {
	m := u.Message
	before, err := a.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrInvalid):
		a.reply(ctx, m, fmt.Sprintf("❌ %q is not a broadcast id (like bc_01H…). Usage: /broadcast stop <id>", id))
		return
	case errors.Is(err, notifier.ErrUnknownBroadcast):
		a.reply(ctx, m, fmt.Sprintf("❌ No broadcast %s (unknown, or finished more than a day ago).", id))
		return
	case err != nil:
		runOf(ctx).fail(err)
		return
	case before.Stopped:
		a.reply(ctx, m, "Broadcast "+id+" was already stopped. "+progressText(before))
		return
	case before.Done():
		a.reply(ctx, m, "Broadcast "+id+" had already finished. "+progressText(before))
		return
	}
	p, err := a.notifier.StopBroadcast(ctx, id)
	if err != nil {
		runOf(ctx).fail(err)
		return
	}
	a.audit(ctx, u, actionBroadcastStop, fmt.Sprintf("%s: %d sent before the stop, %d cancelled, %d in flight", id, p.Sent, p.Cancelled, max(p.Remaining, 0)))
	a.reply(ctx, m, fmt.Sprintf("🛑 Broadcast %s stopped: %d sent before the stop, %d cancelled, %d in flight (counted as they settle).",
		id, p.Sent, p.Cancelled, max(p.Remaining, 0)))
	select {
	case a.bcWake <- struct{}{}:
	default:
	}
}

// progressText renders a broadcast's counts, e.g. "📣 Broadcast: 20 sent,
// 1 failed (forbidden 1), 4 remaining of 25"; a stopped one, e.g. "🛑
// Broadcast stopped: 60 sent before the stop, 0 failed, 1940 cancelled of
// 2000".
func progressText(p notifier.Progress) string {
	failed := 0
	reasons := make([]string, 0, len(p.Failed))
	for r, n := range p.Failed {
		if n > 0 {
			failed += n
			reasons = append(reasons, fmt.Sprintf("%s %d", r, n))
		}
	}
	sort.Strings(reasons)
	f := strconv.Itoa(failed) + " failed"
	if len(reasons) > 0 {
		f += " (" + strings.Join(reasons, ", ") + ")"
	}
	if p.Stopped {
		txt := fmt.Sprintf("🛑 Broadcast stopped: %d sent before the stop, %s, %d cancelled of %d", p.Sent, f, p.Cancelled, p.Total)
		if p.Remaining > 0 {
			txt += fmt.Sprintf(", %d in flight", p.Remaining)
		}
		return txt
	}
	head := "📣 Broadcast"
	if p.Done() {
		head = "✅ Broadcast done"
	}
	txt := fmt.Sprintf("%s: %d sent, %s, %d remaining of %d", head, p.Sent, f, max(p.Remaining, 0), p.Total)
	if !p.Done() {
		txt += "\nTo stop it: /broadcast stop " + p.ID
	}
	return txt
}

// trackBroadcasts keeps the progress message of every tracked broadcast up
// to date while this process is the poller, by editing it through the
// notifier (notifier.Edit of the message id the worker recorded for its job,
// chatstate.Store.SentMessageID): at most one edit per edit interval per
// broadcast, plus the final one; tracking survives a restart (it is in
// Valkey).
func (a *App) trackBroadcasts(ctx context.Context) {
	t := time.NewTicker(a.opt.editInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-a.bcWake:
		}
		if err := a.trackOnce(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("broadcast progress: update failed", slog.Any("err", err))
		}
	}
}

func (a *App) trackOnce(ctx context.Context) error {
	all, err := a.audience.Tracked(ctx)
	if err != nil {
		return err
	}
	for id, raw := range all {
		var t tracked
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			if err := a.audience.Untrack(ctx, id); err != nil {
				return err
			}
			continue
		}
		p, err := a.notifier.Progress(ctx, id)
		if errors.Is(err, notifier.ErrUnknownBroadcast) {
			if err := a.audience.Untrack(ctx, id); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		txt := progressText(p)
		done := p.Done()
		if txt != t.Last {
			if t.Message == 0 {
				// The progress message's Telegram id, recorded by the
				// worker once it sent it.
				msg, ok, err := a.notifier.Chats().SentMessageID(ctx, t.Job)
				if err != nil {
					return err
				}
				if !ok {
					continue // the progress message itself is not sent yet
				}
				t.Message = msg
			}
			if !done && time.Since(t.Edited) < a.opt.editInterval {
				continue
			}
			// The edit goes through the chat's reply lane: ordered with the
			// admin's other replies and paced by the same budgets.
			if _, err := a.notifier.Edit(ctx, t.Chat, t.Message, notifier.Message{Text: txt, Class: notifier.Reply}); err != nil {
				return err
			}
			t.Last, t.Edited = txt, time.Now()
		}
		if done && t.Last == txt {
			if err := a.audience.Untrack(ctx, id); err != nil {
				return err
			}
			a.log.Info("broadcast finished", slog.String("broadcast", id), slog.Int("sent", p.Sent), slog.Int("total", p.Total))
			continue
		}
		if err := a.audience.Track(ctx, id, t); err != nil {
			return err
		}
	}
	return nil
}
