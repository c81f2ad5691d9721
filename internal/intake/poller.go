package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/tgapi"
)

// Back-offs of the intake.
const (
	// conflictBackoffMin/Max bound the wait after Telegram answered 409
	// (another getUpdates or a webhook is active): doubled on each 409 in a
	// row, never a tight loop.
	conflictBackoffMin = 5 * time.Second
	conflictBackoffMax = 2 * time.Minute
	// errorBackoffMin/Max bound the wait after any other failure. 5 s at
	// most, as aiogram's polling backoff (BackoffConfig max_delay 5.0): a
	// longer cap left the poller deaf for up to 16 s after Telegram or
	// Valkey came back (30 s before: a chaos run, seed 18, then took the
	// groups' backlog for a flood), and the handlers' claims as long.
	errorBackoffMin = 500 * time.Millisecond
	errorBackoffMax = 5 * time.Second
)

// ErrorBackoff is the wait after a failure of the intake and of the
// handlers (its Next of the last wait, 0 for the first): doubled each
// time, between errorBackoffMin and errorBackoffMax, no jitter.
func ErrorBackoff() consumer.Backoff {
	return consumer.Backoff{Base: errorBackoffMin, Max: errorBackoffMax}
}

// ErrTokenRejected is returned by Poller.Run (and the program's Run, errors.Is) when Telegram answered
// 401 Unauthorized to getMe or getUpdates: TELEGRAM_BOT_TOKEN is wrong or
// was revoked. The process stops rather than retry: no retry can succeed
// until the token is changed, and an exit with a clear message (cmd/bot
// exits with code 2, a configuration error) shows in the container's
// status and restart count where a quiet retry loop would not; under
// `restart: unless-stopped` the restarts back off by themselves.
var ErrTokenRejected = errors.New("telegram rejected the bot token (401 Unauthorized): TELEGRAM_BOT_TOKEN is wrong or was revoked; " +
	"copy the current token from @BotFather")

// Poller is the intake loop of the process holding the poller lease: it
// fetches updates and records them on the update queue before the next getUpdates
// confirms them (see the package doc).
type Poller struct {
	Inbox  *Inbox
	Lease  *Lease
	Client *tgapi.Client
	// PollTimeout is getUpdates' long-poll timeout (whole seconds).
	PollTimeout time.Duration
	Log         *slog.Logger
	// Polled, Recorded and Conflict, when set, are told of each successful
	// getUpdates (its time), of the updates a batch added to the update queue,
	// and of each 409 Conflict (for the program's metrics and /healthz).
	Polled   func(time.Time)
	Recorded func(added int)
	Conflict func()
}

// Run polls until ctx ends (nil) or the lease is lost (ErrLeaseLost), or
// Telegram rejects the token (ErrTokenRejected).
func (p *Poller) Run(ctx context.Context) error {
	s := &pollState{log: p.Log.With(slog.String("component", "intake"))}
	for ctx.Err() == nil {
		// Polling mode: a webhook left set (an earlier deployment, another
		// framework) would answer every getUpdates 409; remove it first.
		if !s.webhookChecked {
			if err := p.clearWebhook(ctx, s.log); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				s.errWait = ErrorBackoff().Next(s.errWait)
				s.log.Warn("intake: webhook check failed; retrying", slog.Any("err", err), slog.String("retry_in", s.errWait.String()))
				if consumer.Sleep(ctx, s.errWait) != nil {
					return nil
				}
				continue
			}
			s.webhookChecked, s.errWait = true, 0
		}
		err := p.poll(ctx, s)
		if err == nil {
			continue
		}
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		wait, again, err := p.failed(s, err)
		if err != nil {
			return err
		}
		if again {
			continue
		}
		if consumer.Sleep(ctx, wait) != nil {
			return nil
		}
	}
	return nil
}

// pollState is what Run carries from one getUpdates to the next.
type pollState struct {
	log *slog.Logger
	// conflictWait and errWait are the last back-offs after a 409 and after
	// any other failure (0 after a success).
	conflictWait, errWait time.Duration
	// lastBeat is when the polling heartbeat was last written.
	lastBeat time.Time
	// webhookChecked: no webhook is set (clearWebhook succeeded since
	// the start or since the last webhook 409).
	webhookChecked bool
	// prev is the last batch handed out (zero after an empty one);
	// prevRebased says it was recorded by a re-base.
	prev        batchSig
	prevRebased bool
	// polled: a getUpdates of this run succeeded (the first is a short
	// poll, see poll).
	polled bool
}

// poll reads the offset, calls getUpdates once and records what it
// handed out. It returns nil when the loop goes on at once, or the
// failure to back off from (ErrLeaseLost among them).
//
// Until one succeeds in this run (a lease term), getUpdates is a short
// poll (timeout 0): Telegram answers at once, so Polled and the standby
// pollers' heartbeat see a poller polling from its first second, not only
// after a whole long poll (PollTimeout, 25 s by default) of an idle bot;
// then it long-polls.
func (p *Poller) poll(ctx context.Context, s *pollState) error {
	offset, err := p.Inbox.Offset(ctx)
	if err != nil {
		return err
	}
	timeout := p.PollTimeout
	if !s.polled {
		timeout = 0
	}
	ups, err := p.Client.GetUpdates(ctx, offset, timeout)
	if err != nil {
		return err
	}
	s.polled = true
	now := time.Now()
	if p.Polled != nil {
		p.Polled(now)
	}
	p.heartbeat(ctx, s, now)
	s.conflictWait = 0
	if len(ups) == 0 {
		s.errWait, s.prev, s.prevRebased = 0, batchSig{}, false
		return nil
	}
	sig := sigOf(ups)
	added, asked, err := p.record(ctx, s, offset, sig, ups)
	if asked || err != nil {
		return err
	}
	if p.Recorded != nil {
		p.Recorded(added)
	}
	if added > 0 || sig != s.prev {
		s.errWait, s.prev = 0, sig
		return nil
	}
	// The same batch twice in a row and nothing of it new: the server
	// does not follow our offset. Never spin.
	return fmt.Errorf("%w: updates %d..%d (%d) again with offset %d, none new",
		errSameBatch, sig.first, sig.last, sig.n, offset)
}

// heartbeat writes the heartbeat for standby pollers' /healthz: at most
// every quarter of the long-poll timeout, so a busy intake does not pay a
// Valkey call per getUpdates.
func (p *Poller) heartbeat(ctx context.Context, s *pollState, now time.Time) {
	if now.Sub(s.lastBeat) < p.PollTimeout/4 {
		return
	}
	if herr := p.Lease.Heartbeat(ctx, 2*p.PollTimeout); herr == nil {
		s.lastBeat = now
	} else if ctx.Err() == nil {
		s.log.Warn("intake: polling heartbeat not written", slog.Any("err", herr))
	}
}

// record records batch ups (signature sig) fetched with offset: on the
// update queue, or by a re-base when the server's update_id sequence was
// reset. It returns how many updates were new, and asked when it recorded
// nothing to ask once more first (a batch far below the offset, seen once).
func (p *Poller) record(ctx context.Context, s *pollState, offset int64, sig batchSig, ups []Update) (int, bool, error) {
	// A server ignores an offset only when it is more than offsetAhead
	// beyond its next update_id (> the batch's last): a batch further
	// below our offset than that means its update_id sequence was reset.
	reset := offset > 0 && sig.last+1+offsetAhead < offset
	switch {
	case reset && sig.first != s.prev.first:
		// Ask once more before concluding: a reset server hands the same
		// head out again.
		s.log.Info("getUpdates handed out updates far below the offset; asking again to tell a reset from a stray answer",
			slog.Int64("offset", offset), slog.Int64("first_update_id", sig.first), slog.Int64("last_update_id", sig.last))
		s.prev, s.prevRebased = sig, false
		return 0, true, nil
	case reset && !s.prevRebased:
		// Handed out again: the server's id space was reset (a week
		// without updates, or another Bot API server).
		next, epoch, err := p.Inbox.Rebase(ctx, p.Lease.token, ups)
		if err != nil {
			return 0, false, err
		}
		s.prevRebased = true
		s.log.Warn("the server's update_id sequence was reset: it ignores our offset and hands out lower ids again; "+
			"following it (re-based)", slog.Int64("stored_offset", offset), slog.Int64("new_offset", next),
			slog.Int64("first_update_id", sig.first), slog.Int64("rebase", epoch))
		return len(ups), false, nil
	default:
		added, _, err := p.Inbox.Record(ctx, p.Lease.token, ups)
		if err == nil && sig != s.prev {
			s.prevRebased = false
		}
		return added, false, err
	}
}

// failed decides what follows the failure err of a poll: the wait before
// the next one, again to go on at once (a webhook set again: removed
// first), or the error that stops Run (ErrTokenRejected).
func (p *Poller) failed(s *pollState, err error) (wait time.Duration, again bool, stop error) {
	switch {
	case tgapi.IsKind(err, tgapi.KindWebhookActive) && s.webhookChecked && s.conflictWait == 0:
		// Set again since the start (by another deployment): remove it
		// again, once, before backing off like any other 409.
		if p.Conflict != nil {
			p.Conflict()
		}
		s.webhookChecked = false
		s.log.Warn("Telegram answered 409 Conflict: a webhook is set; removing it", slog.String("telegram", description(err)))
		return 0, true, nil
	case tgapi.IsConflict(err):
		if p.Conflict != nil {
			p.Conflict()
		}
		if tgapi.IsKind(err, tgapi.KindWebhookActive) {
			s.webhookChecked = false // set again at once: remove it after the back-off
		}
		s.conflictWait = min(max(s.conflictWait*2, conflictBackoffMin), conflictBackoffMax)
		s.log.Warn("Telegram answered 409 Conflict: another instance polls this bot (or a webhook is set); backing off",
			slog.String("telegram", description(err)), slog.String("retry_in", s.conflictWait.String()))
		return s.conflictWait, false, nil
	case tgapi.IsCode(err, http.StatusUnauthorized):
		s.log.Error("Telegram answered 401 Unauthorized to getUpdates: the bot token was revoked or changed; stopping",
			slog.String("telegram", description(err)))
		return 0, false, fmt.Errorf("getUpdates: %w", ErrTokenRejected)
	}
	if d, ok := tgapi.IsRetryAfter(err); ok {
		wait := max(d, time.Second)
		s.log.Warn("getUpdates: 429 Too Many Requests", slog.String("retry_in", wait.String()))
		return wait, false, nil
	}
	s.errWait = ErrorBackoff().Next(s.errWait)
	s.log.Warn("intake: getUpdates or record failed; retrying", slog.Any("err", err), slog.String("retry_in", s.errWait.String()))
	return s.errWait, false, nil
}

// errSameBatch is the intake's back-off cause when getUpdates hands out
// the same batch twice in a row and none of it is new.
var errSameBatch = errors.New("getUpdates handed out the same batch twice in a row; backing off so the poll loop does not spin")

// offsetAhead is how far beyond its next update_id a getUpdates offset may
// be before the Bot API server ignores it and answers from the head of its
// queue (10, as Telegram's server does; see tgemu).
const offsetAhead = 10

// batchSig identifies a getUpdates batch: its first and last update_id and
// length.
type batchSig struct {
	first, last int64
	n           int
}

func sigOf(ups []Update) batchSig {
	return batchSig{first: ups[0].ID, last: ups[len(ups)-1].ID, n: len(ups)}
}

// clearWebhook makes getUpdates usable: it reads the webhook set for the bot
// (getWebhookInfo) and, when one is set, removes it with deleteWebhook
// (never drop_pending_updates: updates queued for the webhook are then
// fetched by getUpdates), logging the URL that was set (token redacted).
// Errors: the API's.
func (p *Poller) clearWebhook(ctx context.Context, log *slog.Logger) error {
	info, err := p.Client.GetWebhookInfo(ctx)
	if err != nil {
		return fmt.Errorf("getWebhookInfo: %w", err)
	}
	if info.URL == "" {
		return nil
	}
	if err := p.Client.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil {
		return fmt.Errorf("deleteWebhook: %w", err)
	}
	log.Warn("a webhook was set for this bot; deleted it to poll with getUpdates (pending updates kept)",
		slog.String("webhook_url", p.Client.Redactor().String(info.URL)))
	return nil
}

// description is Telegram's text of an ok=false answer ("" for another
// error).
func description(err error) string {
	if e := tgapi.AsError(err); e != nil {
		return e.Description
	}
	return ""
}
