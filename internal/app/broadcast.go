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

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// tracked is a broadcast whose progress message is kept up to date, as
// stored in {T}:app:bc (field: broadcast id).
type tracked struct {
	Chat    int64  `json:"chat"`         // the admin chat
	Preview string `json:"pv,omitempty"` // the preview it was sent from (its text, for ContinueFree)
	// HaltShown: the admin was told the paid part halted (cannot pay),
	// with the Continue free and Stop buttons.
	HaltShown bool        `json:"hs,omitempty"`
	Job       lanes.JobID `json:"job"`         // the progress message's job
	Message   int         `json:"msg"`         // its Telegram message id, once known
	Last      string      `json:"last"`        // the text it shows
	Edited    time.Time   `json:"at,omitzero"` // when it was last edited
}

// Broadcast buttons (tapdata.KindBroadcast): on a preview, Send, Send paid
// (with TELEGRAM_PAID_BROADCAST_RATE set) and Cancel (scope: the preview
// id); on a progress message, Stop; on the notice that a paid broadcast
// halted (the bot cannot pay), Continue free and Stop (scope: the
// broadcast id).
const (
	btnSend     = "s"
	btnSendPaid = "sp"
	btnCancel   = "c"
	btnStop     = "x"
	btnFree     = "f"
)

// Toasts of the broadcast buttons.
const (
	toastAdminOnly    = "⛔ For bot admins only, in a private chat with the bot."
	toastPreviewLate  = "⌛ This preview expired (after 10 minutes): nothing was sent. Send /broadcast again."
	toastPreviewGone  = "This preview is no longer known: nothing was sent. Send /broadcast again."
	toastCancelled    = "❌ Cancelled: nobody received it."
	toastWasCancelled = "This broadcast was cancelled: nothing was sent."
)

// onBroadcast handles /broadcast <text> and /broadcast stop <id>. Only
// "stop" followed by the id of a broadcast the notifier knows (running,
// stopped or finished within its progress TTL) stops one; any other text,
// "stop test" or a lone "stop" included, is a text to broadcast. A text is
// not sent at once: the admin gets a preview (previewBroadcast) and only
// its Send button starts the fan-out (onBroadcastTap), so a stop command
// with a mistyped id costs a Cancel, not a broadcast.
func (a *App) onBroadcast(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	m := u.Message
	c, _ := a.cmd(u)
	if c.Args == "" {
		a.reply(&out, m, "❌ Missing text. Usage: /broadcast <text>")
		return out
	}
	if f := strings.Fields(c.Args); len(f) == 2 && f[0] == "stop" {
		_, err := a.notifier.Progress(ctx, f[1])
		switch {
		case err == nil:
			a.reply(&out, m, a.stopBroadcast(ctx, &out, adminWho(m.From.ID), f[1]))
			return out
		case !errors.Is(err, notifier.ErrInvalid) && !errors.Is(err, notifier.ErrUnknownBroadcast):
			out.Fail(err)
			return out
		}
		// Not a broadcast's id: a text to broadcast.
	}
	a.previewBroadcast(ctx, r, &out, strings.TrimSpace(m.Text[len(m.Text)-len(c.Args):]))
	return out
}

// previewBroadcast answers /broadcast <text> with a preview: the text as
// the chats will see it, how many chats it will reach and the estimated
// time at the global rate, with Send and Cancel buttons valid for
// PreviewLifetime. Nothing is sent to the chats.
func (a *App) previewBroadcast(ctx context.Context, r *update.Request, out *update.Outcome, text string) {
	m := r.Update.Message
	chats, err := a.audience.Chats(ctx)
	if err != nil {
		out.Fail(err)
		return
	}
	if len(chats) == 0 {
		a.reply(out, m, "No known chats to broadcast to.")
		return
	}
	p := preview{ID: newPreviewID(), Text: text, Chat: m.Chat.ID, Admin: m.From.ID, Chats: len(chats), At: a.now(), State: previewPending}
	buttons := [][2]string{{"✅ Send", btnSend}, {"❌ Cancel", btnCancel}}
	ptext := previewText(text, len(chats), a.cfg.GlobalRate)
	if a.cfg.PaidBroadcastRate > 0 {
		buttons = [][2]string{{"✅ Send free", btnSend}, {"💫 Send paid", btnSendPaid}, {"❌ Cancel", btnCancel}}
		copies := len(chats) * len(notifier.Split(text, tgtext.MaxTextUnits))
		ptext = paidPreviewText(text, len(chats), copies, a.cfg.GlobalRate, a.cfg.PaidBroadcastRate)
	}
	kb, err := a.broadcastKeyboard(m.Chat.ID, p.ID, buttons)
	if err != nil {
		out.Fail(err)
		return
	}
	if err := a.previews.Create(ctx, p); err != nil {
		out.Fail(err)
		return
	}
	// Keyed by the update: handled again after a crash, the first preview
	// message is the one shown (the second preview made is never used).
	// Threaded under the command (also in the private chat): the preview
	// quotes the text, and must not read as a copy of the broadcast.
	msg := notifier.Message{Text: ptext, Class: notifier.Reply,
		ReplyTo: m.ID, Markup: kb, Key: out.Key(r, "preview")}
	out.Then(func(ctx context.Context, _ *update.Outcome) error {
		_, err := a.notifier.Notify(ctx, m.Chat.ID, msg)
		if errors.Is(err, notifier.ErrInvalid) {
			a.log.Error("broadcast preview rejected by the notifier", slog.Any("err", err))
			return nil
		}
		return err
	})
}

// broadcastKeyboard is a one-row inline keyboard of broadcast buttons
// (label, action) for scope in chat, as JSON.
func (a *App) broadcastKeyboard(chat int64, scope string, buttons [][2]string) (string, error) {
	row := make([]models.InlineKeyboardButton, 0, len(buttons))
	for _, b := range buttons {
		d, err := a.codec.Encode(tapdata.KindBroadcast, scope, b[1], chat)
		if err != nil {
			return "", err
		}
		row = append(row, models.InlineKeyboardButton{Text: b[0], CallbackData: d})
	}
	raw, err := json.Marshal(models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{row}})
	if err != nil {
		return "", fmt.Errorf("app: keyboard: %w", err)
	}
	return string(raw), nil
}

// onBroadcastTap handles a tap on a broadcast button (tapdata.KindBroadcast)
// and returns its toast. Only an admin, in the admin's private chat, may
// tap: anyone else gets a refusal and nothing happens.
func (a *App) onBroadcastTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	m := q.Message.Message
	if !a.cfg.IsAdmin(q.From.ID) || !update.IsPrivate(m) || m.Chat.ID != q.From.ID {
		return toastAdminOnly
	}
	paid := false
	switch d.Arg {
	case btnStop:
		return a.stopBroadcast(ctx, out, adminWho(q.From.ID), d.Scope)
	case btnFree:
		return a.continueFree(ctx, out, adminWho(q.From.ID), d.Scope)
	case btnSendPaid:
		if a.cfg.PaidBroadcastRate <= 0 {
			return "💫 Paid broadcasts are off (TELEGRAM_PAID_BROADCAST_RATE=0): nothing was sent."
		}
		paid = true
	case btnSend, btnCancel:
	default:
		return toastInvalidButton
	}
	if !validPreviewID(d.Scope) {
		return toastInvalidButton
	}
	what := d.Arg
	if paid {
		what = btnSend // decided as sent; the mode goes to sendPreview
	}
	dec, st, err := a.previews.Decide(ctx, d.Scope, what, a.now())
	if err != nil {
		a.log.Error("broadcast preview: decision failed", slog.String("preview", d.Scope), slog.Any("err", err))
		return toastRetry
	}
	switch {
	case dec == decisionNoSuch:
		return toastPreviewGone
	case dec == decisionLate, st == previewExpired:
		return toastPreviewLate
	case st == previewCancelled && dec == decided:
		a.log.Info("broadcast preview cancelled", slog.String("preview", d.Scope), slog.Int64("admin", q.From.ID))
		a.editPreview(out, m, d.Scope, "❌ Broadcast cancelled: nobody received it.")
		return toastCancelled
	case st == previewCancelled:
		return toastWasCancelled
	}
	// Sent: by this tap, or by an earlier one that may not have finished
	// (a crash): sendPreview completes it once and only once.
	p, ok, err := a.previews.Get(ctx, d.Scope)
	if err != nil {
		a.log.Error("broadcast preview: read failed", slog.String("preview", d.Scope), slog.Any("err", err))
		return toastRetry
	}
	if !ok {
		return toastPreviewGone
	}
	if p.Broadcast != "" {
		return "Already sent (broadcast " + p.Broadcast + ")."
	}
	return a.sendPreview(ctx, r, out, q.From.ID, m, p, paid)
}

// editPreview replaces the preview message m's text and removes its
// buttons (keyed: once per preview).
func (a *App) editPreview(out *update.Outcome, m *models.Message, pid, text string) {
	out.Then(func(ctx context.Context, _ *update.Outcome) error {
		_, err := a.notifier.Edit(ctx, m.Chat.ID, m.ID, notifier.Message{Text: text, Class: notifier.Reply, Key: "bcp:" + pid + ":edit"})
		if errors.Is(err, notifier.ErrInvalid) {
			a.log.Error("broadcast preview edit rejected by the notifier", slog.Any("err", err))
			return nil
		}
		return err
	})
}

// sendPreview fans preview p out to every known chat through the notifier
// (notification queue), keeps one progress message (with a Stop button) in
// the admin's chat up to date, and records the broadcast id in the preview.
// It starts one broadcast per preview however often it runs: the broadcast
// and the progress message carry idempotency keys derived from the preview
// id ("bcp:<id>"), and the update's journal keeps the broadcast id (field
// bc), so a run again after a crash, or a second tap, fans out nothing more.
//
// With paid, the copies go out as a paid broadcast (notifier.Message.Paid:
// the paid queue, allow_paid_broadcast, 0.1 Star each); a re-run keeps the
// mode of the run that started the broadcast.
func (a *App) sendPreview(ctx context.Context, r *update.Request, out *update.Outcome, admin int64, m *models.Message, p preview, paid bool) string {
	j, err := a.loadJournal(ctx, r.ID)
	if err != nil {
		out.Fail(err)
		return toastRetry
	}
	id := j.BC
	var chats int
	if id == "" {
		all, err := a.audience.Chats(ctx)
		if err != nil {
			out.Fail(err)
			return toastRetry
		}
		chats = len(all)
		if chats == 0 {
			return "No known chats to broadcast to."
		}
		if err := a.inbox.SaveJournal(ctx, r.ID, journalBCStarted, "1"); err != nil {
			out.Fail(err)
			return toastRetry
		}
		// The key (the preview id) makes a second tap, or a re-run after a
		// crash, get the first call's broadcast id back instead of fanning
		// out again.
		id, err = a.notifier.Broadcast(ctx, all, notifier.Message{Text: p.Text, Key: "bcp:" + p.ID, Paid: paid})
		if errors.Is(err, notifier.ErrInvalid) {
			a.editPreview(out, m, p.ID, "❌ This text cannot be sent: "+err.Error())
			return "❌ This text cannot be sent."
		}
		if id == "" && err != nil {
			out.Fail(err)
			return toastRetry
		}
		if err != nil {
			a.log.Error("broadcast partly queued", slog.String("broadcast", id), slog.Any("err", err))
		}
		if j.BCStarted {
			// A re-run: the first run may have been cut while fanning out
			// (a repeat with the key does not resume it).
			pr, err := a.notifier.Progress(ctx, id)
			if err != nil && !errors.Is(err, notifier.ErrUnknownBroadcast) {
				out.Fail(err)
				return toastRetry
			}
			if err != nil || pr.Queued+pr.Failed["inactive"]+pr.Cancelled < pr.Total {
				a.reply(out, m, "⚠️ A restart interrupted this broadcast while it was being queued; some chats may have it. Check /lanes before sending it again.")
				return "⚠️ Interrupted by a restart"
			}
		}
		// Recorded before the journal keeps the id: a re-run after a
		// failure here records it again rather than not at all.
		detail := fmt.Sprintf("%s to %d chats", id, chats)
		if paid {
			copies := chats * len(notifier.Split(p.Text, tgtext.MaxTextUnits))
			detail += fmt.Sprintf(", paid (about %s Stars)", notifier.FormatStars(copies*notifier.StarTenthsPerCopy))
		}
		if err := a.auditLog.Record(ctx, adminWho(admin), actionBroadcastSent, detail); err != nil {
			out.Fail(err)
			return toastRetry
		}
		if err := a.inbox.SaveJournal(ctx, r.ID, journalBC, id); err != nil {
			out.Fail(err)
			return toastRetry
		}
		a.log.Info("broadcast queued", slog.String("broadcast", id), slog.Int("chats", chats), slog.String("preview", p.ID))
	}
	if err := a.previews.SetBroadcast(ctx, p.ID, id); err != nil {
		out.Fail(err)
		return toastRetry
	}
	mode := ""
	if paid {
		mode = " (paid)"
	}
	a.editPreview(out, m, p.ID, fmt.Sprintf("✅ Sent to %d chats%s: broadcast %s.", p.Chats, mode, id))
	exists, err := a.tracking.IsTracked(ctx, id)
	if err != nil {
		out.Fail(err)
		return toastRetry
	}
	if !exists {
		pr, err := a.notifier.Progress(ctx, id)
		if err != nil {
			out.Fail(err)
			return toastRetry
		}
		txt := progressText(pr)
		kb, err := a.stopKeyboard(p.Chat, id, pr)
		if err != nil {
			out.Fail(err)
			return toastRetry
		}
		// Keyed: a re-run after a crash gets the same progress message back.
		jobs, err := a.notifier.Notify(ctx, p.Chat, notifier.Message{Text: txt, Class: notifier.Reply, Markup: kb, Key: "bcp:" + p.ID + ":progress", Editable: true})
		if err != nil {
			out.Fail(err)
			return toastRetry
		}
		if err := a.tracking.Track(ctx, id, tracked{Chat: p.Chat, Preview: p.ID, Job: jobs[0], Last: txt}); err != nil {
			out.Fail(err)
			return toastRetry
		}
	}
	select {
	case a.bcWake <- struct{}{}:
	default:
	}
	return fmt.Sprintf("📣 Sending to %d chats%s.", p.Chats, mode)
}

// stopKeyboard is the progress message's Stop button while broadcast id
// runs ("" once it is stopped or done: the button goes away).
func (a *App) stopKeyboard(chat int64, id string, p notifier.Progress) (string, error) {
	if p.Stopped || p.Done() {
		return "", nil
	}
	return a.broadcastKeyboard(chat, id, [][2]string{{"🛑 Stop", btnStop}})
}

// stopBroadcast stops broadcast id for who ("/broadcast stop <id>" or
// the progress message's Stop button) and returns the answer
// (stopBroadcastErr); a store error fails the update (handled again).
func (a *App) stopBroadcast(ctx context.Context, out *update.Outcome, who, id string) string {
	ans, err := a.stopBroadcastErr(ctx, who, id)
	if err != nil {
		out.Fail(err)
		return toastRetry
	}
	return ans
}

// stopBroadcastErr stops broadcast id for who and returns the answer: the
// copies still queued are removed from their lanes
// (notifier.StopBroadcast), the stop is audited, and the answer says how
// many were sent before the stop, how many were cancelled and how many were
// in flight (delivered or failed as they settle). A broadcast already
// finished or already stopped is left as it is (nothing audited); a
// malformed or unknown id is answered as such. The progress message shows
// the same counts at its next edit. Errors: the store's.
func (a *App) stopBroadcastErr(ctx context.Context, who, id string) (string, error) {
	before, err := a.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrInvalid):
		return fmt.Sprintf("❌ %q is not a broadcast id (like bc_01H…). Usage: /broadcast stop <id>", id), nil
	case errors.Is(err, notifier.ErrUnknownBroadcast):
		return fmt.Sprintf("❌ No broadcast %s (unknown, or finished more than a day ago).", id), nil
	case err != nil:
		return "", err
	case before.Stopped:
		return "Broadcast " + id + " was already stopped. " + progressText(before), nil
	case before.Done():
		return "Broadcast " + id + " had already finished. " + progressText(before), nil
	}
	p, err := a.notifier.StopBroadcast(ctx, id)
	if err != nil {
		return "", err
	}
	if err := a.auditLog.Record(ctx, who, actionBroadcastStop,
		fmt.Sprintf("%s: %d sent before the stop, %d cancelled, %d in flight%s", id, p.Sent, p.Cancelled, max(p.Remaining, 0), paidNote(p))); err != nil {
		return "", err
	}
	select {
	case a.bcWake <- struct{}{}:
	default:
	}
	return fmt.Sprintf("🛑 Broadcast %s stopped: %d sent before the stop, %d cancelled, %d in flight (counted as they settle).",
		id, p.Sent, p.Cancelled, max(p.Remaining, 0)), nil
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
	if p.Paid {
		txt += "\n" + modeText(p)
	}
	if !p.Done() {
		txt += "\nTo stop it: 🛑 Stop, or /broadcast stop " + p.ID
	}
	return txt
}

// modeText is a paid broadcast's mode and cost so far, e.g. "💫 Paid: 30
// copies, 3.0 Stars so far", "💫 Paid, halted (the bot cannot pay): …",
// "💫 Paid, then free: 30 copies paid (3.0 Stars), 50 moved to free".
func modeText(p notifier.Progress) string {
	stars := notifier.FormatStars(p.StarTenths())
	switch {
	case p.Free:
		return fmt.Sprintf("💫 Paid, then free: %d copies paid (%s Stars), %d moved to free", p.PaidSent, stars, p.Moved)
	case p.Halted && !p.Stopped:
		return fmt.Sprintf("💫 Paid, halted (the bot cannot pay): %d copies paid, %s Stars so far", p.PaidSent, stars)
	default:
		return fmt.Sprintf("💫 Paid: %d copies, %s Stars so far", p.PaidSent, stars)
	}
}

// paidNote is ", paid: N copies, X Stars" for a paid broadcast (audit
// details), "" for a free one.
func paidNote(p notifier.Progress) string {
	if !p.Paid {
		return ""
	}
	return fmt.Sprintf(", paid: %d copies, %s Stars", p.PaidSent, notifier.FormatStars(p.StarTenths()))
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
	all, err := a.tracking.Tracked(ctx)
	if err != nil {
		return err
	}
	for id, raw := range all {
		var t tracked
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			if err := a.tracking.Untrack(ctx, id); err != nil {
				return err
			}
			continue
		}
		p, err := a.notifier.Progress(ctx, id)
		if errors.Is(err, notifier.ErrUnknownBroadcast) {
			if err := a.tracking.Untrack(ctx, id); err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return err
		}
		if p.Halted && !p.Stopped && !p.Free && !t.HaltShown {
			// The notice's counts are final only once the paid copies in
			// flight at the halt have settled: until then, wait.
			fl, err := a.notifier.PaidInFlight(ctx)
			if err != nil {
				return err
			}
			if fl == 0 {
				if p, err = a.notifier.Progress(ctx, id); err != nil {
					return err
				}
				if err := a.noticeHalt(ctx, id, t.Chat, p); err != nil {
					return err
				}
				t.HaltShown = true
			}
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
			kb, err := a.stopKeyboard(t.Chat, id, p)
			if err != nil {
				return err
			}
			if _, err := a.notifier.Edit(ctx, t.Chat, t.Message, notifier.Message{Text: txt, Class: notifier.Reply, Markup: kb}); err != nil {
				return err
			}
			t.Last, t.Edited = txt, time.Now()
		}
		if done && t.Last == txt {
			if err := a.tracking.Untrack(ctx, id); err != nil {
				return err
			}
			a.log.Info("broadcast finished", slog.String("broadcast", id), slog.Int("sent", p.Sent), slog.Int("total", p.Total))
			continue
		}
		if err := a.tracking.Track(ctx, id, t); err != nil {
			return err
		}
	}
	return nil
}

// noticeHalt tells the admin in chat that paid broadcast id halted because
// the bot cannot pay, with Continue free and Stop buttons (keyed: once per
// broadcast).
func (a *App) noticeHalt(ctx context.Context, id string, chat int64, p notifier.Progress) error {
	kb, err := a.broadcastKeyboard(chat, id, [][2]string{{"▶️ Continue free", btnFree}, {"🛑 Stop", btnStop}})
	if err != nil {
		return err
	}
	rest := max(p.Remaining, 0)
	txt := fmt.Sprintf("⚠️ Paid broadcast %s halted: Telegram answered that the bot cannot pay for more copies (its Stars balance is too low). "+
		"%d copies were sent paid (%s Stars); %d are not sent and kept.\n"+
		"▶️ Continue free sends them at the free rate of %d messages/s (about %s), 🛑 Stop cancels them. "+
		"To go on paid instead, top up the bot's Stars balance and send a new broadcast to the chats that did not get it.",
		id, p.PaidSent, notifier.FormatStars(p.StarTenths()), rest, a.cfg.GlobalRate, humanDuration(estimate(rest, a.cfg.GlobalRate)))
	if _, err := a.notifier.Notify(ctx, chat, notifier.Message{Text: txt, Class: notifier.Reply, Markup: kb, Key: "bch:" + id}); err != nil {
		return err
	}
	a.log.Warn("paid broadcast halted: the bot cannot pay", slog.String("broadcast", id), slog.Int("paid", p.PaidSent), slog.Int("kept", rest))
	return nil
}

// continueFree moves the copies a halted paid broadcast id did not send to
// the free queue (notifier.ContinueFree) for who and returns the answer;
// the move is audited. A store error fails the update (handled again).
func (a *App) continueFree(ctx context.Context, out *update.Outcome, who, id string) string {
	ans, err := a.continueFreeErr(ctx, who, id)
	if err != nil {
		out.Fail(err)
		return toastRetry
	}
	return ans
}

func (a *App) continueFreeErr(ctx context.Context, who, id string) (string, error) {
	p, err := a.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrInvalid), errors.Is(err, notifier.ErrUnknownBroadcast):
		return fmt.Sprintf("❌ No broadcast %s (unknown, or finished more than a day ago).", id), nil
	case err != nil:
		return "", err
	case p.Stopped:
		return "Broadcast " + id + " was stopped: nothing to continue.", nil
	case p.Free:
		return "Broadcast " + id + " already continues free.", nil
	case !p.Halted:
		return "Broadcast " + id + " is not halted: nothing to continue.", nil
	}
	all, err := a.tracking.Tracked(ctx)
	if err != nil {
		return "", err
	}
	var t tracked
	if raw, ok := all[id]; !ok || json.Unmarshal([]byte(raw), &t) != nil || t.Preview == "" {
		return "❌ Broadcast " + id + "'s text is no longer known: stop it and send it again.", nil
	}
	pv, ok, err := a.previews.Get(ctx, t.Preview)
	if err != nil {
		return "", err
	}
	if !ok {
		return "❌ Broadcast " + id + "'s text is no longer known: stop it and send it again.", nil
	}
	moved, err := a.notifier.ContinueFree(ctx, id, notifier.Message{Text: pv.Text})
	if errors.Is(err, notifier.ErrPaidInFlight) {
		return "⌛ Some paid copies are still being sent: tap again in a few seconds.", nil
	}
	if err != nil {
		return "", err
	}
	after, err := a.notifier.Progress(ctx, id)
	if err != nil {
		return "", err
	}
	if err := a.auditLog.Record(ctx, who, actionBroadcastFree,
		fmt.Sprintf("%s: %d copies moved to free%s", id, moved, paidNote(after))); err != nil {
		return "", err
	}
	select {
	case a.bcWake <- struct{}{}:
	default:
	}
	return fmt.Sprintf("▶️ Broadcast %s continues free: %d copies at %d messages/s.", id, moved, a.cfg.GlobalRate), nil
}
