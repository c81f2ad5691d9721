package broadcast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgtext"
)

// sendPreview starts preview p's broadcast to every known chat (a lazy
// broadcast: notifier.Filler), keeps one progress message (with a Stop button) in
// the admin's chat up to date, and records the broadcast id in the preview.
// It starts one broadcast per preview however often it runs: the broadcast
// and the progress message carry idempotency keys derived from the preview
// id ("bcp:<id>"), and the update's journal keeps the broadcast id (field
// bc), so a run again after a crash, or a second tap, starts nothing more.
// A run again of the update that started it (its journal holds the id)
// completes the start whatever the preview says (settle: the crash may
// have come after the preview recorded the broadcast and before its
// progress message was tracked); another tap on a preview that records a
// broadcast is answered "Already sent".
//
// With paid, the copies go out as a paid broadcast (notifier.Message.Paid:
// the paid queue, allow_paid_broadcast, 0.1 Star each); a re-run keeps the
// mode of the run that started the broadcast.
func (s *Service) sendPreview(ctx context.Context, r *update.Request, out *update.Outcome, admin int64, m *models.Message, p preview, mode sendMode) string {
	j, err := s.loadJournal(ctx, r.ID)
	if err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	id := j.ID
	again := id != "" // this update started it, and may have enqueued its progress message
	if id == "" {
		if p.Broadcast != "" { // started by another tap
			return "Already sent (broadcast " + p.Broadcast + ")."
		}
		var toast string
		id, toast, err = s.start(ctx, r, out, admin, m, p, mode)
		if err != nil {
			out.Fail(err)
			return tapdata.ToastRetry
		}
		if toast != "" {
			return toast
		}
	}
	edit, err := s.settle(ctx, p, id, mode, again)
	if err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	s.editPreview(out, m, p.ID, edit)
	if s.scheduled(p) {
		return fmt.Sprintf("🕘 Scheduled for %s.", startText(p.Plan))
	}
	return fmt.Sprintf("📣 Sending to %d chats%s.", p.Chats, mode.text())
}

// sendMode is how a preview's Send tap sends it: free, paid, or paid as
// far as the Stars balance covers and the rest free (capped).
type sendMode struct{ paid, capped bool }

// modeOf is the send of a button action (btnSend, btnSendPaid,
// btnSendPaidCap).
func modeOf(action string) sendMode {
	return sendMode{paid: action == btnSendPaid || action == btnSendPaidCap, capped: action == btnSendPaidCap}
}

// text is the mode as the answers name it: "", " (paid)", " (paid up to
// the balance, then free)".
func (m sendMode) text() string {
	switch {
	case m.capped:
		return " (paid up to the balance, then free)"
	case m.paid:
		return " (paid)"
	}
	return ""
}

// start starts preview p's lazy broadcast for update r (its journal had no
// broadcast id: launch), and journals the broadcast id, which it returns.
// A toast instead ("" id) ends the tap there: a text the notifier refuses
// (the preview is edited to say why), or a Stars balance that could not
// be read for a capped send. Errors: the store's (the update is handled
// again; the key gets the same broadcast back, which goes on from its
// cursor: nothing lost, nothing repeated).
func (s *Service) start(ctx context.Context, r *update.Request, out *update.Outcome, admin int64, m *models.Message, p preview, mode sendMode) (id, toast string, err error) {
	id, err = s.launch(ctx, adminWho(admin), p, mode)
	switch {
	case errors.Is(err, errBalanceUnread):
		return "", "The bot's Stars balance could not be read: try again.", nil
	case errors.Is(err, notifier.ErrInvalid):
		s.editPreview(out, m, p.ID, "❌ This text cannot be sent: "+err.Error())
		return "", "❌ This text cannot be sent.", nil
	case err != nil:
		return "", "", err
	}
	// The audit entry is recorded before the journal keeps the id: a
	// re-run after a failure here records it again rather than not at all.
	if err := s.journal.SaveJournal(ctx, r.ID, journalID, id); err != nil {
		return "", "", err
	}
	return id, "", nil
}

// errBalanceUnread: a capped send (paid up to the balance) could not read
// the Stars balance; nothing was started.
var errBalanceUnread = errors.New("broadcast: the Stars balance could not be read")

// launch starts preview p's lazy broadcast in mode (notifier.Filler.Start
// makes its first copies, the fillers the rest) and audits it for who (an
// admin's user id in decimal, or the console's name): ActionSent, its
// detail "<id> to <n> chats[, paid (about X Stars)][, from <start>][, over
// <spread>]". The Telegram tap and the console's confirmation both start
// broadcasts here. It returns the broadcast id. The key (the preview id)
// makes a second call, or a re-run after a crash, get the first call's
// broadcast back instead of starting another (it goes on from its
// cursor); each call audits it. Errors: errBalanceUnread (capped, nothing
// started); one wrapping notifier.ErrInvalid for a text the notifier
// refuses (nothing started); the store's.
func (s *Service) launch(ctx context.Context, who string, p preview, mode sendMode) (string, error) {
	paidMax := 0
	if mode.capped {
		// Paid as far as the balance covers now; at least one copy (the
		// send was offered for a balance that covered some).
		tenths, err := s.starBalance(ctx)
		if err != nil {
			s.log.Warn("broadcast: the Stars balance could not be read", slog.Any("err", err))
			return "", errBalanceUnread
		}
		paidMax = max(int(tenths/notifier.StarTenthsPerCopy), 1)
	}
	id, err := s.filler.Start(ctx, notifier.Message{Text: p.Text, Key: "bcp:" + p.ID, Paid: mode.paid}, p.Plan.notifierPlan(paidMax, p.Texts))
	if err != nil {
		return "", err
	}
	if err := s.audit.Record(ctx, who, ActionSent, sentDetail(id, p, mode, paidMax)); err != nil {
		return "", err
	}
	s.log.Info("broadcast queued", slog.String("broadcast", id), slog.Int("chats", p.Chats), slog.String("preview", p.ID), slog.String("by", who))
	return id, nil
}

// sentDetail is ActionSent's detail of broadcast id started from preview
// p in mode (paid up to paidMax copies when capped).
func sentDetail(id string, p preview, mode sendMode, paidMax int) string {
	detail := fmt.Sprintf("%s to %d chats", id, p.Chats)
	if mode.paid {
		copies := p.Chats * len(notifier.Split(p.Text, tgtext.MaxTextUnits))
		if paidMax > 0 {
			copies = min(copies, paidMax)
			detail += fmt.Sprintf(", paid up to %d copies then free (about %s Stars)", paidMax, notifier.FormatStars(copies*notifier.StarTenthsPerCopy))
		} else {
			detail += fmt.Sprintf(", paid (about %s Stars)", notifier.FormatStars(copies*notifier.StarTenthsPerCopy))
		}
	}
	if len(p.Texts) > 0 {
		langs := make([]string, 0, len(p.Texts))
		for l := range p.Texts {
			langs = append(langs, l)
		}
		slices.Sort(langs)
		detail += ", texts in " + strings.Join(langs, ", ") + " and the default"
	}
	if !p.Plan.Start.IsZero() {
		detail += ", from " + startText(p.Plan)
	}
	if p.Plan.Spread > 0 {
		detail += ", over " + humanDuration(p.Plan.Spread)
	}
	return detail
}

// startText is plan p's start as the answers write it (StartTime):
// "2026-12-05 20:00:37 UTC".
func startText(p plan) string { return StartTime(p.Start) }

// scheduled reports whether preview p's broadcast starts later than now.
func (s *Service) scheduled(p preview) bool {
	return !p.Plan.Start.IsZero() && p.Plan.Start.After(s.now())
}

// settle completes the start of broadcast id from preview p (mode): the
// preview records the broadcast id, its progress is tracked (trackProgress;
// again: this is a run again of a start that may have enqueued the
// progress message) and the Tracker woken. It returns what the preview
// says then: "📣 Sending to 3 chats: broadcast bc_….", spread (started, not
// sent yet) "📣 Started to 3 chats, spread over 2 h: broadcast bc_….", or
// "🕘 Scheduled for 2026-12-05 20:00 UTC to 3 chats: broadcast bc_….".
// Errors: the store's
// (a run again does it again: each step is idempotent).
func (s *Service) settle(ctx context.Context, p preview, id string, mode sendMode, again bool) (string, error) {
	if err := s.previews.SetBroadcast(ctx, p.ID, id); err != nil {
		return "", err
	}
	if err := s.trackProgress(ctx, p, id, again); err != nil {
		return "", err
	}
	s.wake()
	if s.scheduled(p) {
		return fmt.Sprintf("🕘 Scheduled for %s to %d chats%s: broadcast %s.", startText(p.Plan), p.Chats, mode.text(), id), nil
	}
	if p.Plan.Spread > 0 { // nothing is sent yet: the copies go out over the spread
		return fmt.Sprintf("📣 Started to %d chats%s, spread over %s: broadcast %s.", p.Chats, mode.text(), humanDuration(p.Plan.Spread), id), nil
	}
	return fmt.Sprintf("📣 Sending to %d chats%s: broadcast %s.", p.Chats, mode.text(), id), nil
}

// trackProgress tracks broadcast id's progress, unless it is tracked
// already: with a progress message (and a Stop button) sent to the
// admin's chat of preview p; without one for a composed preview (no
// chat: the console shows its progress), tracked so that /broadcasts and
// /metrics list it while it runs. With again (a run again after a crash
// that may have come between the progress message's enqueue and its
// tracking), the message enqueued is the first run's (its key), whose
// text is not known here: it is tracked as showing none, so the Tracker
// edits it at its first round, done or not. Errors: the store's.
func (s *Service) trackProgress(ctx context.Context, p preview, id string, again bool) error {
	exists, err := s.tracking.IsTracked(ctx, id)
	if err != nil || exists {
		return err
	}
	if p.Chat == 0 {
		return s.tracking.Track(ctx, id, tracked{Preview: p.ID})
	}
	pr, err := s.notifier.Progress(ctx, id)
	if err != nil {
		return err
	}
	txt := progressText(pr)
	kb, err := s.stopKeyboard(p.Chat, id, pr)
	if err != nil {
		return err
	}
	// Keyed: a re-run after a crash gets the same progress message back.
	jobs, err := s.notifier.Notify(ctx, p.Chat, notifier.Message{Text: txt, Class: notifier.Reply, Markup: kb, Key: "bcp:" + p.ID + ":progress", Editable: true})
	if err != nil {
		return err
	}
	if again {
		txt = ""
	}
	return s.tracking.Track(ctx, id, tracked{Chat: p.Chat, Preview: p.ID, Job: jobs[0], Last: txt})
}
