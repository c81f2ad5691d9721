package broadcast

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/codemojex/codemojex/notifier"
)

// Composition is a broadcast composed in the console: its text, free or
// paid, and its plan, written as /broadcast writes it: In is when it
// starts, from now, Over how long it is spread over ("90m", "2h",
// "1d12h"; "" for at once, and as fast as the budget allows).
type Composition struct {
	Text     string
	Paid     bool
	In, Over string
	// Composer is who composes it, "console:<session>" (the console's
	// sign-in): its preview replaces the composer's earlier one still
	// unconfirmed (Supersede), as a new /broadcast replaces the admin's
	// earlier preview in Telegram; "" replaces none.
	Composer string
}

// Preview is a composed broadcast's preview (Compose), to confirm with
// StartComposed.
type Preview struct {
	// Token confirms it (StartComposed) until Expires; "" when it cannot
	// be sent as composed (a paid one the Stars balance covers no copy
	// of: Text says so).
	Token string
	// Text is the preview as the Telegram preview shows it: the text as
	// the chats will see it, how many chats, the estimated time, for a
	// paid one the Stars cost and balance, the start and pace.
	Text  string
	Chats int
	// Confirm is the confirmation's label, the Telegram preview's button
	// of the same send: "✅ Send", "💫 Send paid", or "💫 N paid, rest
	// free" (a paid one the balance covers only N copies of).
	Confirm string
	Expires time.Time
}

// RefusedError is a composition or confirmation refused before anything
// was started; Text is the answer, as /broadcast words it.
type RefusedError struct{ Text string }

func (e *RefusedError) Error() string { return e.Text }

func refused(text string) error { return &RefusedError{Text: text} }

// Compose makes the preview of composition c, as /broadcast does in
// Telegram (the same count, preview text and sends offered, previewOf),
// and stores it (its send chosen: free, paid, or, when the Stars balance
// covers only part, paid up to the balance and the rest free) for
// StartComposed to start within PreviewLifetime. Nothing is sent to the
// chats. A preview shown (with a Token or not) replaces c.Composer's
// earlier preview still unconfirmed: its confirmation then answers
// ToastReplaced and starts nothing. Errors: a *RefusedError for an empty
// text, a plan /broadcast would refuse, paid with paid broadcasts off, or
// no known chats; the store's.
func (s *Service) Compose(ctx context.Context, c Composition) (Preview, error) {
	text := strings.TrimSpace(c.Text)
	if text == "" {
		return Preview{}, refused("❌ Missing text.")
	}
	text, texts, err := s.texts(text)
	if err != nil {
		return Preview{}, refused("❌ " + err.Error() + ". Nothing was sent. " + usageLangs)
	}
	if c.Paid && s.cfg.PaidRate <= 0 {
		return Preview{}, refused("💫 Paid broadcasts are off (TELEGRAM_PAID_BROADCAST_RATE=0).")
	}
	pl, err := composedPlan(c.In, c.Over, s.now())
	if err != nil {
		return Preview{}, refused("❌ " + err.Error() + ".")
	}
	chats, err := s.count(ctx)
	if err != nil {
		return Preview{}, err
	}
	if chats == 0 {
		return Preview{}, refused("No known chats to broadcast to.")
	}
	ptext, offers, err := s.previewOf(ctx, text, texts, chats, pl, c.Paid, true)
	if err != nil {
		return Preview{}, err
	}
	p := preview{ID: newPreviewID(), Text: text, Texts: texts, Chats: chats, At: s.now(), State: previewPending, Plan: pl}
	v := Preview{Text: ptext, Chats: chats, Expires: p.At.Add(PreviewLifetime)}
	for _, o := range offers {
		if paid := o[1] != btnSend; paid == c.Paid {
			v.Confirm, p.Mode = o[0], o[1]
		}
	}
	if p.Mode != "" { // else paid, and the balance covers no copy: Text says so, no Token
		if err := s.previews.Create(ctx, p); err != nil {
			return Preview{}, err
		}
		v.Token = p.ID
	}
	if c.Composer != "" {
		if _, err := s.previews.Supersede(ctx, c.Composer, p.ID, ""); err != nil {
			return Preview{}, err
		}
	}
	return v, nil
}

// Answers of StartComposed.
const (
	composedGone    = "This preview is no longer known: nothing was sent. Compose it again."
	composedLate    = "⌛ This preview expired (after 10 minutes): nothing was sent. Compose it again."
	composedStarted = "⌛ This broadcast is being started by another confirmation: it is listed in a moment."
	// ComposedCancelled is CancelComposed's answer when it cancels: the
	// Telegram preview's text once its Cancel is tapped.
	ComposedCancelled = "❌ Broadcast cancelled: nobody received it."
	cancelLate        = "⌛ This preview had expired (after 10 minutes): nothing was sent, nothing to cancel."
)

// StartComposed starts the broadcast of composed preview token (Compose)
// for who (the console's name), as the Telegram preview's Send does
// (launch: the same broadcast, keyed by the preview, and the same audit
// entry), and returns its id and the answer: "📣 Sending to 3 chats:
// broadcast bc_….", "📣 Started to 3 chats, spread over 2 h: broadcast
// bc_….", or "🕘 Scheduled for … to 3 chats: broadcast bc_…." (settle). It starts one broadcast per preview however often it is
// confirmed: the first confirmation decides the preview (decide.lua) and
// claims its start (claim.lua); a later one answers "Already sent
// (broadcast bc_…)." with that id, or, while another is starting it, that
// it is being started ("" id); one after a failed start completes it (the
// same broadcast), as does one more than 30 s after a confirmation that
// never finished (a crash). A preview cancelled, or replaced by a newer
// one of its composer (ToastReplaced), starts nothing. Its progress is tracked without a progress
// message (no chat): /broadcasts and the console list it. Errors: a
// *RefusedError for an unknown or expired preview (nothing sent), a text
// the notifier refuses, or a Stars balance that could not be read (capped
// send); the store's (confirm again to complete it).
func (s *Service) StartComposed(ctx context.Context, who, token string) (id, answer string, err error) {
	if !validPreviewID(token) {
		return "", "", refused(composedGone)
	}
	p, ok, err := s.previews.Get(ctx, token)
	if err != nil {
		return "", "", err
	}
	if !ok || p.Mode == "" { // a Telegram preview is its buttons'
		return "", "", refused(composedGone)
	}
	dec, st, err := s.previews.Decide(ctx, token, previewSent, s.now())
	switch {
	case err != nil:
		return "", "", err
	case dec == decisionNoSuch:
		return "", "", refused(composedGone)
	case dec == decisionLate, st == previewExpired:
		return "", "", refused(composedLate)
	case st == previewCancelled:
		return "", "", refused(ToastWasCancelled)
	case st == previewReplaced:
		return "", "", refused(ToastReplaced)
	}
	claim, sent, err := s.previews.Claim(ctx, token, s.now())
	switch {
	case err != nil:
		return "", "", err
	case claim == claimedSent:
		// Started already, maybe by a confirmation whose process died
		// after the preview recorded the id and before the broadcast was
		// tracked: complete that (each step idempotent), as a Send tap
		// handled again does.
		if _, err := s.settle(ctx, p, sent, modeOf(p.Mode), true); err != nil {
			return "", "", err
		}
		return sent, "Already sent (broadcast " + sent + ").", nil
	case claim == claimedBusy:
		return "", composedStarted, nil
	}
	mode := modeOf(p.Mode)
	if id, err = s.launch(ctx, who, p, mode); err == nil {
		answer, err = s.settle(ctx, p, id, mode, false)
	}
	if err != nil {
		// The next confirmation starts (or completes) it at once.
		if rerr := s.previews.Release(context.WithoutCancel(ctx), token); rerr != nil {
			err = errors.Join(err, rerr)
		}
		switch {
		case errors.Is(err, errBalanceUnread):
			return "", "", refused("The bot's Stars balance could not be read: nothing was sent; confirm again.")
		case errors.Is(err, notifier.ErrInvalid):
			return "", "", refused("❌ This text cannot be sent: " + err.Error())
		}
		return "", "", err
	}
	return id, answer, nil
}

// CancelComposed cancels composed preview token (Compose) for who (the
// console's name), as the Telegram preview's Cancel does: it decides the
// preview cancelled (decide.lua), so that no later confirmation starts it
// (StartComposed answers ToastWasCancelled and starts nothing). It returns
// ComposedCancelled, ToastWasCancelled when it was cancelled before, or
// ToastReplaced when a newer preview replaced it (nothing to cancel). It
// is logged with who, not audited (nothing was started: the Telegram
// Cancel is not audited either). Errors: a *RefusedError for an unknown or
// expired preview, or one confirmed already (its broadcast is stopped, not
// cancelled); the store's.
func (s *Service) CancelComposed(ctx context.Context, who, token string) (string, error) {
	if !validPreviewID(token) {
		return "", refused(composedGone)
	}
	p, ok, err := s.previews.Get(ctx, token)
	if err != nil {
		return "", err
	}
	if !ok || p.Mode == "" { // a Telegram preview is its buttons'
		return "", refused(composedGone)
	}
	dec, st, err := s.previews.Decide(ctx, token, previewCancelled, s.now())
	switch {
	case err != nil:
		return "", err
	case dec == decisionNoSuch:
		return "", refused(composedGone)
	case dec == decisionLate, st == previewExpired:
		return "", refused(cancelLate)
	case st == previewCancelled && dec == decided:
		s.log.Info("broadcast preview cancelled", slog.String("preview", token), slog.String("who", who))
		return ComposedCancelled, nil
	case st == previewCancelled:
		return ToastWasCancelled, nil
	case st == previewReplaced:
		return ToastReplaced, nil
	}
	if p.Broadcast == "" { // read before the decision, or still starting
		if p, _, err = s.previews.Get(ctx, token); err != nil {
			return "", err
		}
	}
	if p.Broadcast == "" {
		return "", refused("This preview was confirmed already: its broadcast is being started, so it cannot be cancelled; stop the broadcast once it is listed.")
	}
	return "", refused("This preview was confirmed already (broadcast " + p.Broadcast + "): it cannot be cancelled; stop the broadcast instead.")
}
