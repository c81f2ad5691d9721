package broadcast

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

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
	if id == "" {
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
	if err := s.previews.SetBroadcast(ctx, p.ID, id); err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	how := mode.text()
	if !p.Plan.Start.IsZero() && p.Plan.Start.After(s.now()) {
		when := p.Plan.Start.UTC().Format("2006-01-02 15:04 UTC")
		s.editPreview(out, m, p.ID, fmt.Sprintf("🕘 Scheduled for %s to %d chats%s: broadcast %s.", when, p.Chats, how, id))
		if err := s.trackProgress(ctx, p, id); err != nil {
			out.Fail(err)
			return tapdata.ToastRetry
		}
		s.wake()
		return fmt.Sprintf("🕘 Scheduled for %s.", when)
	}
	s.editPreview(out, m, p.ID, fmt.Sprintf("✅ Sent to %d chats%s: broadcast %s.", p.Chats, how, id))
	if err := s.trackProgress(ctx, p, id); err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	s.wake()
	return fmt.Sprintf("📣 Sending to %d chats%s.", p.Chats, how)
}

// sendMode is how a preview's Send tap sends it: free, paid, or paid as
// far as the Stars balance covers and the rest free (capped).
type sendMode struct{ paid, capped bool }

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
// broadcast id: notifier.Filler.Start makes its first copies, the fillers
// the rest), audits it and journals the broadcast id, which it returns. A
// toast instead ("" id) ends the tap there: a text the notifier refuses
// (the preview says why). Errors: the store's (the update is handled
// again; the key gets the same broadcast back, which goes on from its
// cursor: nothing lost, nothing repeated).
func (s *Service) start(ctx context.Context, r *update.Request, out *update.Outcome, admin int64, m *models.Message, p preview, mode sendMode) (id, toast string, err error) {
	paidMax := 0
	if mode.capped {
		// Paid as far as the balance covers now; at least one copy (the
		// button was offered for a balance that covered some).
		tenths, err := s.starBalance(ctx)
		if err != nil {
			s.log.Warn("broadcast: the Stars balance could not be read", slog.Any("err", err))
			return "", "The bot's Stars balance could not be read: try again.", nil
		}
		paidMax = max(int(tenths/notifier.StarTenthsPerCopy), 1)
	}
	// The key (the preview id) makes a second tap, or a re-run after a
	// crash, get the first call's broadcast id back instead of starting
	// another; the broadcast goes on from its cursor (notifier.Filler).
	paid := mode.paid
	id, err = s.filler.Start(ctx, notifier.Message{Text: p.Text, Key: "bcp:" + p.ID, Paid: paid}, p.Plan.notifierPlan(paidMax))
	if errors.Is(err, notifier.ErrInvalid) {
		s.editPreview(out, m, p.ID, "❌ This text cannot be sent: "+err.Error())
		return "", "❌ This text cannot be sent.", nil
	}
	if err != nil {
		return "", "", err
	}
	chats := p.Chats
	// Recorded before the journal keeps the id: a re-run after a
	// failure here records it again rather than not at all.
	detail := fmt.Sprintf("%s to %d chats", id, chats)
	if paid {
		copies := chats * len(notifier.Split(p.Text, tgtext.MaxTextUnits))
		if paidMax > 0 {
			copies = min(copies, paidMax)
			detail += fmt.Sprintf(", paid up to %d copies then free (about %s Stars)", paidMax, notifier.FormatStars(copies*notifier.StarTenthsPerCopy))
		} else {
			detail += fmt.Sprintf(", paid (about %s Stars)", notifier.FormatStars(copies*notifier.StarTenthsPerCopy))
		}
	}
	if !p.Plan.Start.IsZero() {
		detail += ", from " + p.Plan.Start.UTC().Format("2006-01-02 15:04 UTC")
	}
	if p.Plan.Spread > 0 {
		detail += ", over " + humanDuration(p.Plan.Spread)
	}
	if err := s.audit.Record(ctx, adminWho(admin), ActionSent, detail); err != nil {
		return "", "", err
	}
	if err := s.journal.SaveJournal(ctx, r.ID, journalID, id); err != nil {
		return "", "", err
	}
	s.log.Info("broadcast queued", slog.String("broadcast", id), slog.Int("chats", chats), slog.String("preview", p.ID))
	return id, "", nil
}

// trackProgress sends broadcast id's progress message to the admin's chat
// of preview p (with a Stop button) and tracks it, unless it is tracked
// already. Errors: the store's.
func (s *Service) trackProgress(ctx context.Context, p preview, id string) error {
	exists, err := s.tracking.IsTracked(ctx, id)
	if err != nil || exists {
		return err
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
	return s.tracking.Track(ctx, id, tracked{Chat: p.Chat, Preview: p.ID, Job: jobs[0], Last: txt})
}
