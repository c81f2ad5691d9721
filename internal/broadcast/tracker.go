package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// tracked is a broadcast whose progress message is kept up to date, as
// stored in {T}:app:bc (field: broadcast id).
type tracked struct {
	Chat    int64  `json:"chat"`         // the admin chat (0: composed in the console, no progress message)
	Preview string `json:"pv,omitempty"` // the preview it was sent from (its text, for ContinueFree)
	// HaltShown: the admin was told the paid part halted (cannot pay),
	// with the Continue free and Stop buttons.
	HaltShown bool        `json:"hs,omitempty"`
	Job       lanes.JobID `json:"job"`         // the progress message's job
	Message   int         `json:"msg"`         // its Telegram message id, once known
	Last      string      `json:"last"`        // the text it shows ("": not known, edited at the next round)
	Edited    time.Time   `json:"at,omitzero"` // when it was last edited
}

// Tracker keeps the progress message of every tracked broadcast up to
// date, by editing it through the notifier (notifier.Edit of the message
// id the worker recorded for its job, chatstate.Store.SentMessageID): at
// most one edit per edit interval per broadcast, plus the final one; it
// tells the admin when a paid broadcast halts (the bot cannot pay).
// Tracking survives a restart (it is in Valkey). One process runs it: the
// one holding the poller lease (internal/app). It is a service
// (lifecycle's contract: Name, Run).
type Tracker struct{ s *Service }

// Tracker returns the service's progress tracker.
func (s *Service) Tracker() Tracker { return Tracker{s: s} }

// Name names the tracker in logs.
func (Tracker) Name() string { return "broadcast tracker" }

// Run looks at the tracked broadcasts every edit interval, and at once
// when a broadcast started, stopped or moved to free in this process,
// until ctx ends; it calls started once its loop runs. A failed round is
// logged and tried again at the next; Run returns nil when ctx ends, and
// starts no goroutine.
func (k Tracker) Run(ctx context.Context, started func()) error {
	s := k.s
	t := time.NewTicker(s.cfg.EditInterval)
	defer t.Stop()
	started()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		case <-s.wakeC:
		}
		if err := s.trackOnce(ctx); err != nil && ctx.Err() == nil {
			s.log.Warn("broadcast progress: update failed", slog.Any("err", err))
		}
	}
}

// trackOnce brings every tracked broadcast's progress message up to date
// (trackOne). Errors: the first store error (the rest wait for the next
// round).
func (s *Service) trackOnce(ctx context.Context) error {
	all, err := s.tracking.Tracked(ctx)
	if err != nil {
		return err
	}
	for id, raw := range all {
		if err := s.trackOne(ctx, id, raw); err != nil {
			return err
		}
	}
	return nil
}

// stopGrace is how long after a stop cut short (notifier.Progress.
// StopFinished unset) the tracker finishes it: first the stop's own update
// is handled again (Service.Stop finishes and audits it), after its
// handler's deadline or lease, well within this.
const stopGrace = time.Minute

// trackOne brings broadcast id's progress message (raw: its tracked JSON)
// up to date, after finishing a stop of it cut short
// (notifier.Progress.StopFinished): untracked when unreadable, unknown to the notifier, or done
// and showing its final counts (a composed one, without a message: once
// done); else edited when its text changed (at most
// once per edit interval, the final edit at once) and its state saved.
// Errors: the store's.
func (s *Service) trackOne(ctx context.Context, id, raw string) error {
	var t tracked
	if err := json.Unmarshal([]byte(raw), &t); err != nil {
		return s.tracking.Untrack(ctx, id)
	}
	p, err := s.notifier.Progress(ctx, id)
	if errors.Is(err, notifier.ErrUnknownBroadcast) {
		return s.tracking.Untrack(ctx, id)
	}
	if err != nil {
		return err
	}
	if p.Stopped && !p.StopFinished && time.Since(p.StoppedAt) >= stopGrace {
		// A stop cut short whose update nobody handled again within
		// stopGrace would leave copies on their lanes (a halted paid
		// queue's for good) and counts that never add up: it is finished
		// here (not audited: who stopped it is the update's to say; its
		// late retry, or the next Stop, audits it: Service.Stop).
		s.log.Warn("broadcast stop: finishing a stop cut short", slog.String("broadcast", id),
			slog.Time("stopped_at", p.StoppedAt))
		p, err = s.notifier.StopBroadcast(ctx, id)
		if errors.Is(err, notifier.ErrUnknownBroadcast) {
			return s.tracking.Untrack(ctx, id)
		}
		if err != nil {
			return err
		}
	}
	if t.Chat == 0 { // composed in the console: no progress message, tracked until done
		if !final(p) {
			return nil
		}
		s.log.Info("broadcast finished", slog.String("broadcast", id), slog.Int("sent", p.Sent), slog.Int("total", p.Total))
		return s.tracking.Untrack(ctx, id)
	}
	if p, err = s.haltOnce(ctx, id, &t, p); err != nil {
		return err
	}
	txt := progressText(p)
	done := final(p)
	if txt != t.Last {
		edited, err := s.editProgress(ctx, id, &t, p, txt)
		if err != nil || !edited {
			return err // not edited: looked at again next round, t as it was stored
		}
	}
	if done && t.Last == txt {
		if err := s.tracking.Untrack(ctx, id); err != nil {
			return err
		}
		s.log.Info("broadcast finished", slog.String("broadcast", id), slog.Int("sent", p.Sent), slog.Int("total", p.Total))
		return nil
	}
	return s.tracking.Track(ctx, id, t)
}

// final reports whether broadcast p's counts are final: it is done
// (notifier.Progress.Done) and, stopped, its stop finished
// (StopFinished). A stop cancels the copies waiting on their lanes before
// it records the copies sent and in flight at it (lua/stopdone.lua), so
// in between the broadcast reads done while its stop's counts are not yet
// there: a final edit then said "30 sent" for good, not "30 sent before
// the stop" (a busy CI run of TestBroadcastStopButton). A stop cut short
// is finished by the tracker after stopGrace (trackOne), so a stopped
// broadcast is final within it.
func final(p notifier.Progress) bool { return p.Done() && (!p.Stopped || p.StopFinished) }

// haltOnce tells the admin, once (t.HaltShown), that paid broadcast id
// halted because the bot cannot pay (noticeHalt), and returns the progress
// the notice counted. The notice's counts are final only once the paid
// copies in flight at the halt have settled: until then it waits (p is
// returned as it is). Errors: the store's.
func (s *Service) haltOnce(ctx context.Context, id string, t *tracked, p notifier.Progress) (notifier.Progress, error) {
	if !p.Halted || p.Stopped || p.Free || t.HaltShown {
		return p, nil
	}
	fl, err := s.notifier.PaidInFlight(ctx)
	if err != nil || fl != 0 {
		return p, err
	}
	if p, err = s.notifier.Progress(ctx, id); err != nil {
		return p, err
	}
	if err := s.noticeHalt(ctx, id, t.Chat, p); err != nil {
		return p, err
	}
	t.HaltShown = true
	return p, nil
}

// editProgress edits broadcast id's progress message t to txt (progress
// p) and reports whether it did: not before the worker sent it (its
// Telegram message id is recorded then) nor within the edit interval of
// the last edit, unless p is done. The edit is a notification (the bulk
// budget), not a reply: nobody asked for it just now, and where replies
// have a budget of their own (TELEGRAM_REPLY_RATE) Telegram may count a
// message to a chat a minute after its user's last update as bulk (it
// publishes no rule; the emulator's RepliesApart reading does so after
// tgemu.ReplyWindow), so an edit on the reply budget could put one message
// more into a bulk window the copies already fill (a CI run: 11 × 429 in
// a 50,000-chat broadcast that ran past that minute). The chat's pace
// still holds it, and an edit still queued takes the newer text in its
// place (notifier.EditLatest of the progress message's job): however
// slowly the notify lane turns, at most one edit waits. Errors: the
// store's.
func (s *Service) editProgress(ctx context.Context, id string, t *tracked, p notifier.Progress, txt string) (bool, error) {
	if t.Message == 0 {
		msg, ok, err := s.notifier.Chats().SentMessageID(ctx, t.Job)
		if err != nil || !ok {
			return false, err // !ok: the progress message itself is not sent yet
		}
		t.Message = msg
	}
	if !p.Done() && time.Since(t.Edited) < s.cfg.EditInterval {
		return false, nil
	}
	kb, err := s.stopKeyboard(t.Chat, id, p)
	if err != nil {
		return false, err
	}
	if _, _, err := s.notifier.EditLatest(ctx, t.Chat, t.Job, notifier.Message{Text: txt, Class: notifier.Notification, Markup: kb}); err != nil {
		return false, err
	}
	t.Last, t.Edited = txt, time.Now()
	return true, nil
}

// noticeHalt tells the admin in chat that paid broadcast id halted because
// the bot cannot pay, with Continue free and Stop buttons (keyed: once per
// broadcast). A notification, like the progress edits (editProgress).
func (s *Service) noticeHalt(ctx context.Context, id string, chat int64, p notifier.Progress) error {
	kb, err := s.keyboard(chat, id, [][2]string{{"▶️ Continue free", btnFree}, {"🛑 Stop", btnStop}})
	if err != nil {
		return err
	}
	rest := max(p.Remaining, 0)
	txt := fmt.Sprintf("⚠️ Paid broadcast %s halted: Telegram answered that the bot cannot pay for more copies (its Stars balance is too low). "+
		"%d copies were sent paid (%s Stars); %d are not sent and kept.\n"+
		"▶️ Continue free sends them at the free rate of %d messages/s (about %s), 🛑 Stop cancels them. "+
		"To go on paid instead, top up the bot's Stars balance and send a new broadcast to the chats that did not get it.",
		id, p.PaidSent, notifier.FormatStars(p.StarTenths()), rest, s.cfg.GlobalRate, humanDuration(estimate(rest, s.cfg.GlobalRate)))
	if _, err := s.notifier.Notify(ctx, chat, notifier.Message{Text: txt, Class: notifier.Notification, Markup: kb, Key: "bch:" + id}); err != nil {
		return err
	}
	s.log.Warn("paid broadcast halted: the bot cannot pay", slog.String("broadcast", id), slog.Int("paid", p.PaidSent), slog.Int("kept", rest))
	return nil
}
