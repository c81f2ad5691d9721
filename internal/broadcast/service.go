package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"unicode"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/notifier"
)

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
	// btnSendPaidCap sends paid up to what the Stars balance covers, the
	// rest free (offered when the balance does not cover it all).
	btnSendPaidCap = "sc"
)

// Toasts of the broadcast buttons (besides tapdata's ToastRetry and
// ToastInvalidButton, which every kind shares).
const (
	ToastPreviewLate  = "⌛ This preview expired (after 10 minutes): nothing was sent. Send /broadcast again."
	ToastPreviewGone  = "This preview is no longer known: nothing was sent. Send /broadcast again."
	ToastCancelled    = "❌ Cancelled: nobody received it."
	ToastWasCancelled = "This broadcast was cancelled: nothing was sent."
	// ToastReplaced answers a preview a newer one of the same admin (a
	// later /broadcast) or console session (a later composition)
	// replaced before it was decided; the Telegram preview's text
	// becomes it.
	ToastReplaced = "This preview was replaced by a newer one: nothing was sent. Confirm the newest."
)

// OnCommand handles /broadcast <text> and /broadcast stop <id> of an admin
// in the admin's private chat (the app's admin gate lets no other through).
// "stop" (in any case: a phone keyboard types "Stop") followed by
// something shaped like a broadcast id (bc_ + a ULID) is a stop: of the broadcast the notifier knows (running, stopped or
// finished within its progress TTL), or answered "No broadcast <id>" when
// it knows none (never sent, or expired), with nothing previewed; a lone
// "stop" (in any case) is answered with how to stop (usageStop), nothing
// previewed: an admin who means to stop must not be one tap from
// broadcasting the word; "stop" and a word starting "bc_" (any case) is
// a stop, its id checked (CanonicalID), and words after that word are
// refused (wordsAfterID), nothing stopped; any other text, "stop test" included,
// is a text to broadcast. A text is
// not sent at once: the admin gets a preview (preview) and only
// its Send button starts the fan-out (OnTap), so a stop command
// with a mistyped id costs a Cancel, not a broadcast.
func (s *Service) OnCommand(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	m := u.Message
	c, _ := update.ParseCommand(m, s.cfg.Username())
	if c.Args == "" {
		out.Reply(update.ReplyTo(m, "❌ Missing text. Usage: /broadcast [in <duration>] [over <duration>] <text>"))
		return out
	}
	f := strings.Fields(c.Args)
	if len(f) == 1 && strings.EqualFold(f[0], "stop") { // meant as a stop: never previewed as the text "stop"
		out.Reply(update.ReplyTo(m, usageStop))
		return out
	}
	if len(f) > 2 && strings.EqualFold(f[0], "stop") {
		if _, meant := CanonicalID(f[1]); meant { // a stop with words after its id: never previewed as a text
			out.Reply(update.ReplyTo(m, wordsAfterID(f[1], f[2:])))
			return out
		}
	}
	if len(f) == 2 && strings.EqualFold(f[0], "stop") {
		id, meant := CanonicalID(f[1])
		if meant && !notifier.ValidBroadcastID(id) {
			out.Reply(update.ReplyTo(m, notAnID(f[1])))
			return out
		}
		_, err := s.notifier.Progress(ctx, id)
		switch {
		case err == nil || errors.Is(err, notifier.ErrUnknownBroadcast) || meant:
			out.Reply(update.ReplyTo(m, s.stop(ctx, &out, adminWho(m.From.ID), id)))
			return out
		case !errors.Is(err, notifier.ErrInvalid):
			out.Fail(err)
			return out
		}
		// Not shaped like a broadcast's id: a text to broadcast.
	}
	// The text as typed after the command (its line breaks kept), not
	// c.Args' trimmed copy: the offset of a trimmed copy from the end
	// would cut into the text when it ends in white space.
	rest := ""
	if i := strings.IndexFunc(m.Text, unicode.IsSpace); i >= 0 {
		rest = m.Text[i:]
	}
	pl, text, err := parsePlan(rest, s.now())
	if err != nil {
		out.Reply(update.ReplyTo(m, "❌ "+err.Error()+". Usage: /broadcast [in <duration>] [over <duration>] <text>, e.g. /broadcast in 2h over 8h Big news"))
		return out
	}
	text, texts, err := s.texts(text)
	if err != nil {
		out.Reply(update.ReplyTo(m, "❌ "+err.Error()+". Nothing was sent. "+usageLangs))
		return out
	}
	s.preview(ctx, r, &out, text, texts, pl)
	return out
}

// CanonicalID reads a broadcast id as an admin may type it (the word
// after "/broadcast stop", the console's /broadcast?id=): a word that
// starts with the broadcast id prefix in any case ("bc_", "BC_") is meant
// as an id, returned as notifier writes it ("bc_" and its ULID part
// upper-cased: Crockford base32 reads either case), well-formed or not
// (notifier.ValidBroadcastID tells); any other word is returned as it is,
// meant false. A malformed id meant as one is answered as such by the
// stop, never previewed as the text "stop bc_…" to every chat.
func CanonicalID(word string) (id string, meant bool) {
	p := len(notifier.BroadcastIDPrefix)
	if len(word) < p || !strings.EqualFold(word[:p], notifier.BroadcastIDPrefix) {
		return word, false
	}
	return notifier.BroadcastIDPrefix + strings.ToUpper(word[p:]), true
}

// usageStop answers /broadcast stop without an id: nothing was stopped
// (it said "Nothing was sent", which reads oddly for a stop).
const usageStop = "❌ Which broadcast? Usage: /broadcast stop <id>; /broadcasts lists the running and scheduled ones with their ids. Nothing was stopped."

// wordsAfterID answers "/broadcast stop <id> <words…>": a stop takes its id
// alone, and the words after it are quoted (clipped to 40 characters);
// nothing is stopped or previewed. It was previewed as the text "stop
// bc_… please" to every chat, one tap from being sent, by an admin in a
// hurry to stop a broadcast (a new user's trial).
func wordsAfterID(id string, words []string) string {
	after := strings.Join(words, " ")
	if r := []rune(after); len(r) > 40 {
		after = string(r[:40]) + "…"
	}
	return fmt.Sprintf("❌ /broadcast stop takes the broadcast's id alone: %q came after %s. Nothing was stopped or previewed. Usage: /broadcast stop <id>", after, id)
}

// notAnID answers a stop of word, what the admin typed after "stop",
// when it is not a broadcast id; it is quoted as typed, not as
// CanonicalID reads it (a malformed "bc_nonsense" was echoed
// "bc_NONSENSE").
func notAnID(word string) string {
	return fmt.Sprintf("❌ %q is not a broadcast id (like bc_01H…). Usage: /broadcast stop <id>", word)
}

// usageLangs tells the admin how to give a text per language.
const usageLangs = "A text per language: the default text first, then a line [ru] (or [es], [pt-BR], [fa], ...) and that language's text."

// texts reads text's sections per language (parseTexts). Errors:
// parseTexts'; sections without Config.Languages.
func (s *Service) texts(text string) (string, map[string]string, error) {
	def, texts, err := parseTexts(text)
	if err == nil && len(texts) > 0 && s.cfg.Languages == nil {
		err = errors.New("texts per language are off here (no languages configured)")
	}
	return def, texts, err
}

// preview answers /broadcast <text> with a preview: the text as
// the chats will see it, how many chats it will reach and the estimated
// time at the global rate (or the lower one learned: rates), with Send and Cancel buttons valid for
// PreviewLifetime, replacing the admin's earlier preview still undecided
// (previews.Supersede). Nothing is sent to the chats.
func (s *Service) preview(ctx context.Context, r *update.Request, out *update.Outcome, text string, texts map[string]string, pl plan) {
	m := r.Update.Message
	chats, err := s.count(ctx)
	if err != nil {
		out.Fail(err)
		return
	}
	if chats == 0 {
		out.Reply(update.ReplyTo(m, "No known chats to broadcast to."))
		return
	}
	p := preview{ID: newPreviewID(), Text: text, Texts: texts, Chat: m.Chat.ID, Admin: m.From.ID, Chats: chats, At: s.now(), State: previewPending, Plan: pl}
	ptext, buttons, err := s.previewOf(ctx, text, texts, chats, pl, s.cfg.PaidRate > 0, false)
	if err != nil {
		out.Fail(err)
		return
	}
	buttons = append(buttons, [2]string{"❌ Cancel", btnCancel})
	kb, err := s.keyboard(m.Chat.ID, p.ID, buttons)
	if err != nil {
		out.Fail(err)
		return
	}
	if err := s.previews.Create(ctx, p); err != nil {
		out.Fail(err)
		return
	}
	// The admin's earlier preview still undecided is replaced: one
	// preview to Send, the newest (an older message's buttons answer
	// ToastReplaced). The same command handled again replaces nothing.
	if _, err := s.previews.Supersede(ctx, "tg:"+adminWho(m.From.ID), p.ID, r.Key("preview")); err != nil {
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
		_, err := s.notifier.Notify(ctx, m.Chat.ID, msg)
		if errors.Is(err, notifier.ErrInvalid) {
			s.log.Error("broadcast preview rejected by the notifier", slog.Any("err", err))
			return nil
		}
		return err
	})
}

// keyboard is a one-row inline keyboard of broadcast buttons
// (label, action) for scope in chat, as JSON.
func (s *Service) keyboard(chat int64, scope string, buttons [][2]string) (string, error) {
	row := make([]models.InlineKeyboardButton, 0, len(buttons))
	for _, b := range buttons {
		d, err := s.cfg.Codec.Encode(tapdata.KindBroadcast, scope, b[1], chat)
		if err != nil {
			return "", err
		}
		row = append(row, models.InlineKeyboardButton{Text: b[0], CallbackData: d})
	}
	raw, err := json.Marshal(models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{row}})
	if err != nil {
		return "", fmt.Errorf("broadcast: keyboard: %w", err)
	}
	return string(raw), nil
}

// OnTap handles a verified tap on a broadcast button (kind
// tapdata.KindBroadcast) and returns its toast; it may queue edits to out,
// or fail it (the tap is handled again). Only an admin, in the admin's
// private chat, may tap: the app's gate refuses anyone else before this.
func (s *Service) OnTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	m := q.Message.Message
	paid := false
	switch d.Arg {
	case btnStop:
		return s.stop(ctx, out, adminWho(q.From.ID), d.Scope)
	case btnFree:
		return s.continueFree(ctx, out, adminWho(q.From.ID), d.Scope)
	case btnSendPaid, btnSendPaidCap:
		if s.cfg.PaidRate <= 0 {
			return "💫 Paid broadcasts are off (TELEGRAM_PAID_BROADCAST_RATE=0): nothing was sent."
		}
		paid = true
	case btnSend, btnCancel:
	default:
		return tapdata.ToastInvalidButton
	}
	if !validPreviewID(d.Scope) {
		return tapdata.ToastInvalidButton
	}
	what := d.Arg
	if paid {
		what = btnSend // decided as sent; the mode goes to sendPreview
	}
	dec, st, err := s.previews.Decide(ctx, d.Scope, what, s.now())
	if err != nil {
		s.log.Error("broadcast preview: decision failed", slog.String("preview", d.Scope), slog.Any("err", err))
		return tapdata.ToastRetry
	}
	switch {
	case dec == decisionNoSuch:
		return ToastPreviewGone
	case dec == decisionLate, st == previewExpired:
		return ToastPreviewLate
	case st == previewCancelled && dec == decided:
		s.log.Info("broadcast preview cancelled", slog.String("preview", d.Scope), slog.Int64("admin", q.From.ID))
		s.editPreview(out, m, d.Scope, ComposedCancelled)
		return ToastCancelled
	case st == previewCancelled:
		return ToastWasCancelled
	case st == previewReplaced:
		s.editPreview(out, m, d.Scope, ToastReplaced)
		return ToastReplaced
	}
	// Sent: by this tap, or by an earlier one that may not have finished
	// (a crash): sendPreview completes it once and only once.
	p, ok, err := s.previews.Get(ctx, d.Scope)
	if err != nil {
		s.log.Error("broadcast preview: read failed", slog.String("preview", d.Scope), slog.Any("err", err))
		return tapdata.ToastRetry
	}
	if !ok {
		return ToastPreviewGone
	}
	return s.sendPreview(ctx, r, out, q.From.ID, m, p, sendMode{paid: paid, capped: d.Arg == btnSendPaidCap})
}

// editPreview replaces the preview message m's text and removes its
// buttons (keyed: once per preview).
func (s *Service) editPreview(out *update.Outcome, m *models.Message, pid, text string) {
	out.Then(func(ctx context.Context, _ *update.Outcome) error {
		_, err := s.notifier.Edit(ctx, m.Chat.ID, m.ID, notifier.Message{Text: text, Class: notifier.Reply, Key: "bcp:" + pid + ":edit"})
		if errors.Is(err, notifier.ErrInvalid) {
			s.log.Error("broadcast preview edit rejected by the notifier", slog.Any("err", err))
			return nil
		}
		return err
	})
}

// stopKeyboard is the progress message's Stop button while broadcast id
// runs ("" once it is stopped or done: the button goes away).
func (s *Service) stopKeyboard(chat int64, id string, p notifier.Progress) (string, error) {
	if p.Stopped || p.Done() {
		return "", nil
	}
	return s.keyboard(chat, id, [][2]string{{"🛑 Stop", btnStop}})
}

// stop stops broadcast id for who ("/broadcast stop <id>" or
// the progress message's Stop button) and returns the answer
// (Stop); a store error fails the update (handled again).
func (s *Service) stop(ctx context.Context, out *update.Outcome, who, id string) string {
	ans, err := s.Stop(ctx, who, id)
	if err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	return ans
}

// Stop stops broadcast id for who (an admin's user id in decimal, or the
// console's name) and returns the answer: the
// copies still queued are removed from their lanes
// (notifier.StopBroadcast), the stop is audited, and the answer says how
// many were sent before the stop, how many were cancelled and how many were
// in flight at it (delivered or cancelled as they settle; the
// clause left out when none was): stoppedText. A broadcast already
// finished is left as it is (nothing audited). One already stopped is
// left as it is too, but its stop is audited if it was not (once per
// broadcast: Auditor.RecordOnce, key "stop:<id>"): a stop whose audit
// failed (its update handled again finds it stopped) is audited by the
// retry, with the counts then, and answered as the stop; a stop audited
// already is answered "was already stopped". A stop cut short
// (notifier.Progress.StopFinished unset: the store failed or the process
// died during StopBroadcast) is finished and answered as the stop; a
// malformed or unknown id is answered as such. The progress message shows
// the same counts at its next edit. Errors: the store's.
func (s *Service) Stop(ctx context.Context, who, id string) (string, error) {
	before, err := s.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrInvalid):
		return notAnID(id), nil
	case errors.Is(err, notifier.ErrUnknownBroadcast):
		return fmt.Sprintf("❌ No broadcast %s (unknown, or finished more than a day ago).", id), nil
	case err != nil:
		return "", err
	case before.Stopped && before.StopFinished:
		// Stopped by an earlier try of this stop whose audit failed (it
		// is audited now), or by an earlier stop (audited then: nothing
		// now).
		wrote, err := s.auditStop(ctx, who, id, before)
		switch {
		case err != nil:
			return "", err
		case wrote:
			return stoppedText(id, before.InChats()), nil
		}
		return "Broadcast " + id + " was already stopped. " + progressText(before), nil
	case !before.Stopped && before.Done():
		return "Broadcast " + id + " had already finished. " + progressText(before), nil
	}
	// Not stopped, or a stop cut short (its update handled again after a
	// deadline, say): StopBroadcast finishes it, and it is audited now,
	// its first try having audited nothing.
	p, err := s.notifier.StopBroadcast(ctx, id)
	if err != nil {
		return "", err
	}
	if _, err := s.auditStop(ctx, who, id, p); err != nil {
		return "", err
	}
	s.wake()
	return stoppedText(id, p.InChats()), nil
}

// auditStop records broadcast id's stop by who, with its counts in p (its
// progress once stopped), unless it was recorded (key "stop:<id>"), and
// reports whether it wrote. Errors: the store's.
func (s *Service) auditStop(ctx context.Context, who, id string, p notifier.Progress) (bool, error) {
	paid := paidNote(p) // in messages: each paid message is 0.1 Star
	p = p.InChats()
	sent, inFlight := atStop(p)
	return s.audit.RecordOnce(ctx, "stop:"+id, auditKeep, who, ActionStopped,
		fmt.Sprintf("%s: %d sent before the stop, %d cancelled, %d in flight at the stop%s", id, sent, p.Cancelled, inFlight, paid))
}

// stoppedText answers the stop of broadcast id, p its progress (in
// chats): the copies sent before the stop and those in flight at it, as
// the stop recorded them (atStop), e.g. "🛑 Broadcast bc_… stopped: 60
// sent before the stop, 1937 cancelled, 3 in flight at the stop (each
// counted sent or cancelled as it settles)." The copies in flight may or
// may not be delivered, which nothing knows yet (one whose send ends other
// than delivered is cancelled: notifier.StopBroadcast); with none, that
// clause is left out.
func stoppedText(id string, p notifier.Progress) string {
	sent, inFlight := atStop(p)
	txt := fmt.Sprintf("🛑 Broadcast %s stopped: %d sent before the stop, %d cancelled", id, sent, p.Cancelled)
	if inFlight > 0 {
		txt += fmt.Sprintf(", %d in flight at the stop (each counted sent or cancelled as it settles)", inFlight)
	}
	return txt + "."
}

// continueFree moves the copies a halted paid broadcast id did not send to
// the free queue (notifier.ContinueFree) for who and returns the answer;
// the move is audited once (continueFreeErr). A store error fails the
// update (handled again).
func (s *Service) continueFree(ctx context.Context, out *update.Outcome, who, id string) string {
	ans, err := s.continueFreeErr(ctx, who, id)
	if err != nil {
		out.Fail(err)
		return tapdata.ToastRetry
	}
	return ans
}

// continueFreeErr is continueFree's answer, or the store's error. The
// move is audited once per broadcast (Auditor.RecordOnce, key
// "free:<id>"), with the copies moved (notifier.Progress.Moved): by the
// call that moved them, or, when its audit failed, by the next call (its
// update handled again finds the broadcast continued free, or continued
// free and stopped since), which answers as the move.
func (s *Service) continueFreeErr(ctx context.Context, who, id string) (string, error) {
	p, err := s.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrInvalid), errors.Is(err, notifier.ErrUnknownBroadcast):
		return fmt.Sprintf("❌ No broadcast %s (unknown, or finished more than a day ago).", id), nil
	case err != nil:
		return "", err
	case p.Free:
		// Continued free by an earlier call whose audit failed (audited
		// now), or by an earlier call (audited then: nothing now).
		wrote, err := s.auditFree(ctx, who, id, p)
		switch {
		case err != nil:
			return "", err
		case p.Stopped:
			return "Broadcast " + id + " was stopped: nothing to continue.", nil
		case wrote:
			return s.freeText(id, p.Moved), nil
		}
		return "Broadcast " + id + " already continues free.", nil
	case p.Stopped:
		return "Broadcast " + id + " was stopped: nothing to continue.", nil
	case !p.Halted:
		return "Broadcast " + id + " is not halted: nothing to continue.", nil
	}
	all, err := s.tracking.Tracked(ctx)
	if err != nil {
		return "", err
	}
	var t tracked
	if raw, ok := all[id]; !ok || json.Unmarshal([]byte(raw), &t) != nil || t.Preview == "" {
		return "❌ Broadcast " + id + "'s text is no longer known: stop it and send it again.", nil
	}
	pv, ok, err := s.previews.Get(ctx, t.Preview)
	if err != nil {
		return "", err
	}
	if !ok {
		return "❌ Broadcast " + id + "'s text is no longer known: stop it and send it again.", nil
	}
	_, err = s.notifier.ContinueFree(ctx, id, notifier.Message{Text: pv.Text})
	if errors.Is(err, notifier.ErrPaidInFlight) {
		return "⌛ Some paid copies are still being sent: tap again in a few seconds.", nil
	}
	if err != nil {
		return "", err
	}
	after, err := s.notifier.Progress(ctx, id)
	if err != nil {
		return "", err
	}
	if _, err := s.auditFree(ctx, who, id, after); err != nil {
		return "", err
	}
	s.wake()
	return s.freeText(id, after.Moved), nil
}

// auditFree records broadcast id's move to free by who, p its progress
// once moved, unless it was recorded (key "free:<id>"), and reports
// whether it wrote. The copies moved are p.Moved: every call's, a move cut
// short and finished by a retry included. Errors: the store's.
func (s *Service) auditFree(ctx context.Context, who, id string, p notifier.Progress) (bool, error) {
	return s.audit.RecordOnce(ctx, "free:"+id, auditKeep, who, ActionContinuedFree,
		fmt.Sprintf("%s: %d copies moved to free%s", id, p.Moved, paidNote(p)))
}

// freeText answers the move to free of broadcast id's moved copies.
func (s *Service) freeText(id string, moved int) string {
	return fmt.Sprintf("▶️ Broadcast %s continues free: %d copies at %d messages/s.", id, moved, s.cfg.GlobalRate)
}

// View is a broadcast as the admin API lists it.
type View struct {
	notifier.Progress
	Text  string // its progress text, as the progress message shows it
	Known bool   // false when its progress expired (more than a day ago): only Progress.ID is set
}

// View returns broadcast id's progress. An unknown or malformed id is a
// View with Known false, not an error. Errors: the store's.
func (s *Service) View(ctx context.Context, id string) (View, error) {
	p, err := s.notifier.Progress(ctx, id)
	switch {
	case errors.Is(err, notifier.ErrUnknownBroadcast), errors.Is(err, notifier.ErrInvalid):
		return View{Progress: notifier.Progress{ID: id}}, nil
	case err != nil:
		return View{}, err
	}
	return View{Progress: p, Text: progressText(p), Known: true}, nil
}

// SentID returns the broadcast id an audit entry of action with detail
// records as sent (ActionSent: the detail starts with the id), or false
// for any other entry.
func SentID(action, detail string) (string, bool) {
	if action != ActionSent {
		return "", false
	}
	id, _, _ := strings.Cut(detail, " ")
	return id, true
}

// OnList handles /broadcasts of an admin: the broadcasts whose progress
// message is kept up to date (running, scheduled, or stopped with copies
// still in flight), one line each with its counts and, scheduled, its
// start, spread, its pace; and, when one of them is running or scheduled,
// how to stop it; "No broadcast is running or scheduled." when there is
// none. A stopped one (or one done, until its progress message is final)
// is listed as its progress message shows it, "🛑 Broadcast stopped: …",
// without a start, a pace or the stop hint, which are no longer its (it
// was listed with "To stop one", its start and its pace). Anything after
// the command is refused (with what it got, clipped), not ignored.
func (s *Service) OnList(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	if c, _ := update.ParseCommand(m, s.cfg.Username()); strings.TrimSpace(c.Args) != "" {
		out.Reply(update.ReplyTo(m, fmt.Sprintf("❌ /broadcasts takes no argument (got %q): send /broadcasts alone to list the running and scheduled broadcasts.", clipRunes(strings.TrimSpace(c.Args), 40))))
		return out
	}
	all, err := s.tracking.Tracked(ctx)
	if err != nil {
		out.Fail(err)
		return out
	}
	ids := make([]string, 0, len(all))
	for id := range all {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var b strings.Builder
	stoppable := false // one listed is running or scheduled
	for _, id := range ids {
		p, err := s.notifier.Progress(ctx, id)
		if errors.Is(err, notifier.ErrUnknownBroadcast) || errors.Is(err, notifier.ErrInvalid) {
			continue
		}
		if err != nil {
			out.Fail(err)
			return out
		}
		if b.Len() > 3500 { // one message: the oldest ids first, the rest named by count
			fmt.Fprintf(&b, "… and more (%d in all).\n", len(ids))
			break
		}
		first, _, _ := strings.Cut(progressText(p), "\n")
		b.WriteString("• " + id + ": " + first)
		if !p.Stopped && !p.Done() {
			stoppable = true
			if p.Scheduled(s.now()) {
				b.WriteString(", starts at " + StartTime(p.At))
			}
			if p.Rate > 0 {
				b.WriteString(", " + SpreadPhrase(p))
			}
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		out.Reply(update.ReplyTo(m, "No broadcast is running or scheduled."))
		return out
	}
	hint := ""
	if stoppable {
		hint = "To stop a running or scheduled one: /broadcast stop <id>"
	}
	out.Reply(update.ReplyTo(m, strings.TrimSuffix("📣 Broadcasts:\n"+b.String()+hint, "\n")))
	return out
}

// clipRunes is s cut to at most n runes, with "…" when cut.
func clipRunes(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
