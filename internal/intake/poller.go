package intake

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/codemojex/codemojex/consumer"
)

// Back-offs of the intake.
const (
	// conflictBackoffMin/Max bound the wait after Telegram answered 409
	// (another getUpdates or a webhook is active): doubled on each 409 in a
	// row, never a tight loop.
	conflictBackoffMin = 5 * time.Second
	conflictBackoffMax = 2 * time.Minute
	// errorBackoffMin/Max bound the wait after any other failure.
	errorBackoffMin = 500 * time.Millisecond
	errorBackoffMax = 30 * time.Second
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
	Client *Client
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
	log := p.Log.With(slog.String("component", "intake"))
	conflictWait, errWait := time.Duration(0), time.Duration(0)
	var lastBeat time.Time
	// Polling mode: a webhook left set (an earlier deployment, another
	// framework) would answer every getUpdates 409; remove it first.
	webhookChecked := false
	var prev batchSig // the last batch handed out (zero after an empty one)
	prevRebased := false
	for ctx.Err() == nil {
		if !webhookChecked {
			if err := p.clearWebhook(ctx, log); err != nil {
				if ctx.Err() != nil {
					return nil
				}
				errWait = ErrorBackoff().Next(errWait)
				log.Warn("intake: webhook check failed; retrying", slog.Any("err", err), slog.String("retry_in", errWait.String()))
				if consumer.Sleep(ctx, errWait) != nil {
					return nil
				}
				continue
			}
			webhookChecked, errWait = true, 0
		}
		offset, err := p.Inbox.Offset(ctx)
		if err == nil {
			var ups []Update
			ups, err = p.Client.GetUpdates(ctx, offset, p.PollTimeout)
			if err == nil {
				now := time.Now()
				if p.Polled != nil {
					p.Polled(now)
				}
				// The heartbeat for standby pollers' /healthz: at most every
				// quarter of the long-poll timeout, so a busy intake does
				// not pay a Valkey call per getUpdates.
				if now.Sub(lastBeat) >= p.PollTimeout/4 {
					if herr := p.Lease.Heartbeat(ctx, 2*p.PollTimeout); herr == nil {
						lastBeat = now
					} else if ctx.Err() == nil {
						log.Warn("intake: polling heartbeat not written", slog.Any("err", herr))
					}
				}
				conflictWait = 0
				if len(ups) == 0 {
					errWait, prev, prevRebased = 0, batchSig{}, false
					continue
				}
				sig := sigOf(ups)
				// A server ignores an offset only when it is more than
				// offsetAhead beyond its next update_id (> the batch's
				// last): a batch further below our offset than that means
				// its update_id sequence was reset.
				reset := offset > 0 && sig.last+1+offsetAhead < offset
				var added int
				switch {
				case reset && sig.first != prev.first:
					// Ask once more before concluding: a reset server hands
					// the same head out again.
					log.Info("getUpdates handed out updates far below the offset; asking again to tell a reset from a stray answer",
						slog.Int64("offset", offset), slog.Int64("first_update_id", sig.first), slog.Int64("last_update_id", sig.last))
					prev, prevRebased = sig, false
					continue
				case reset && !prevRebased:
					// Handed out again: the server's id space was reset (a
					// week without updates, or another Bot API server).
					var next, epoch int64
					next, epoch, err = p.Inbox.Rebase(ctx, p.Lease.token, ups)
					if err == nil {
						added = len(ups)
						prevRebased = true
						log.Warn("the server's update_id sequence was reset: it ignores our offset and hands out lower ids again; "+
							"following it (re-based)", slog.Int64("stored_offset", offset), slog.Int64("new_offset", next),
							slog.Int64("first_update_id", sig.first), slog.Int64("rebase", epoch))
					}
				default:
					added, _, err = p.Inbox.Record(ctx, p.Lease.token, ups)
					if err == nil && sig != prev {
						prevRebased = false
					}
				}
				if err == nil {
					if p.Recorded != nil {
						p.Recorded(added)
					}
					if added > 0 || sig != prev {
						errWait, prev = 0, sig
						continue
					}
					// The same batch twice in a row and nothing of it new:
					// the server does not follow our offset. Never spin.
					err = fmt.Errorf("%w: updates %d..%d (%d) again with offset %d, none new",
						errSameBatch, sig.first, sig.last, sig.n, offset)
				}
				if errors.Is(err, ErrLeaseLost) {
					return err
				}
			}
		}
		if ctx.Err() != nil {
			return nil
		}
		var wait time.Duration
		var ae *APIError
		switch {
		case isWebhookConflict(err) && webhookChecked && conflictWait == 0:
			// Set again since the start (by another deployment): remove
			// it again, once, before backing off like any other 409.
			if p.Conflict != nil {
				p.Conflict()
			}
			webhookChecked = false
			log.Warn("Telegram answered 409 Conflict: a webhook is set; removing it", slog.String("telegram", conflictDescription(err)))
			continue
		case IsConflict(err):
			if p.Conflict != nil {
				p.Conflict()
			}
			if isWebhookConflict(err) {
				webhookChecked = false // set again at once: remove it after the back-off
			}
			conflictWait = min(max(conflictWait*2, conflictBackoffMin), conflictBackoffMax)
			wait = conflictWait
			log.Warn("Telegram answered 409 Conflict: another instance polls this bot (or a webhook is set); backing off",
				slog.String("telegram", conflictDescription(err)), slog.String("retry_in", wait.String()))
		case errors.As(err, &ae) && ae.Code == http.StatusUnauthorized:
			log.Error("Telegram answered 401 Unauthorized to getUpdates: the bot token was revoked or changed; stopping",
				slog.String("telegram", ae.Description))
			return fmt.Errorf("getUpdates: %w", ErrTokenRejected)
		case errors.As(err, &ae) && ae.Code == 429:
			wait = max(time.Duration(ae.RetryAfter)*time.Second, time.Second)
			log.Warn("getUpdates: 429 Too Many Requests", slog.String("retry_in", wait.String()))
		default:
			errWait = ErrorBackoff().Next(errWait)
			wait = errWait
			log.Warn("intake: getUpdates or record failed; retrying", slog.Any("err", err), slog.String("retry_in", wait.String()))
		}
		if consumer.Sleep(ctx, wait) != nil {
			return nil
		}
	}
	return nil
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
	url, err := p.Client.WebhookURL(ctx)
	if err != nil {
		return fmt.Errorf("getWebhookInfo: %w", err)
	}
	if url == "" {
		return nil
	}
	if err := p.Client.DeleteWebhook(ctx); err != nil {
		return fmt.Errorf("deleteWebhook: %w", err)
	}
	log.Warn("a webhook was set for this bot; deleted it to poll with getUpdates (pending updates kept)",
		slog.String("webhook_url", p.Client.redactor.String(url)))
	return nil
}

// conflictDescription is Telegram's text of a 409 answer ("" for another
// error).
func conflictDescription(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Description
	}
	return ""
}
