package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/go-telegram/bot"
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

// ErrTokenRejected is returned by Run (errors.Is) when Telegram answered
// 401 Unauthorized to getMe or getUpdates: TELEGRAM_BOT_TOKEN is wrong or
// was revoked. The process stops rather than retry: no retry can succeed
// until the token is changed, and an exit with a clear message (cmd/bot
// exits with code 2, a configuration error) shows in the container's
// status and restart count where a quiet retry loop would not; under
// `restart: unless-stopped` the restarts back off by themselves.
var ErrTokenRejected = errors.New("telegram rejected the bot token (401 Unauthorized): TELEGRAM_BOT_TOKEN is wrong or was revoked; " +
	"copy the current token from @BotFather")

// runPoller competes for the poller lease and, while it holds it, runs the
// intake and the handler loop. It returns when ctx ends (nil), or
// ErrTokenRejected.
func (a *App) runPoller(ctx context.Context) error {
	log := a.log.With(slog.String("component", "poller"))
	if err := a.getMe(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	for {
		err := a.lease.acquire(ctx, func(waiting bool) { a.m.standby.Set(b2f(waiting)) })
		if err != nil {
			return nil
		}
		a.leader.Store(true)
		a.m.leader.Set(1)
		a.registerCommands(ctx)
		lctx, cancel := context.WithCancelCause(ctx)
		var wg sync.WaitGroup
		wg.Go(func() { cancel(a.lease.hold(lctx)) })
		wg.Go(func() { cancel(a.intake(lctx)) })
		if !a.opt.intakeOnly {
			wg.Go(func() { cancel(a.handleLoop(lctx)) })
			wg.Go(func() { a.trackBroadcasts(lctx) })
		}
		<-lctx.Done()
		wg.Wait()
		a.leader.Store(false)
		a.m.leader.Set(0)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		a.lease.release(rctx)
		rcancel()
		if ctx.Err() != nil {
			log.Info("poller stopped")
			return nil
		}
		if cause := context.Cause(lctx); errors.Is(cause, ErrTokenRejected) {
			return cause
		}
		log.Warn("poller stopped polling; waiting for the lease again", slog.Any("cause", context.Cause(lctx)))
		if err := sleepCtx(ctx, time.Second); err != nil {
			return nil
		}
	}
}

// intake fetches updates and records them in the inbox before the next
// getUpdates confirms them (see the package doc). It returns ErrLeaseLost
// when the lease was taken, nil when ctx ends.
func (a *App) intake(ctx context.Context) error {
	log := a.log.With(slog.String("component", "intake"))
	conflictWait, errWait := time.Duration(0), time.Duration(0)
	var lastBeat time.Time
	for ctx.Err() == nil {
		offset, err := a.inbox.Offset(ctx)
		if err == nil {
			var ups []rawUpdate
			ups, err = a.api.getUpdates(ctx, offset, a.opt.pollTimeout)
			if err == nil {
				now := time.Now()
				a.lastPoll.Store(now.UnixNano())
				// The heartbeat for standby pollers' /healthz: at most every
				// quarter of the long-poll timeout, so a busy intake does
				// not pay a Valkey call per getUpdates.
				if now.Sub(lastBeat) >= a.opt.pollTimeout/4 {
					if herr := a.lease.heartbeat(ctx, a.keys.polled(), 2*a.opt.pollTimeout); herr == nil {
						lastBeat = now
					} else if ctx.Err() == nil {
						log.Warn("intake: polling heartbeat not written", slog.Any("err", herr))
					}
				}
				conflictWait, errWait = 0, 0
				if len(ups) == 0 {
					continue
				}
				var added int
				added, _, err = a.inbox.Record(ctx, a.lease.token, ups)
				if err == nil {
					a.m.received.Add(float64(added))
					select {
					case a.wake <- struct{}{}:
					default:
					}
					continue
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
		case IsConflict(err):
			a.m.conflicts.Inc()
			conflictWait = min(max(conflictWait*2, conflictBackoffMin), conflictBackoffMax)
			wait = conflictWait
			log.Warn("Telegram answered 409 Conflict: another instance polls this bot (or a webhook is set); backing off",
				slog.String("telegram", ae409(err)), durationAttr("retry_in", wait))
		case errors.As(err, &ae) && ae.Code == http.StatusUnauthorized:
			log.Error("Telegram answered 401 Unauthorized to getUpdates: the bot token was revoked or changed; stopping",
				slog.String("telegram", ae.Description))
			return fmt.Errorf("getUpdates: %w", ErrTokenRejected)
		case errors.As(err, &ae) && ae.Code == 429:
			wait = max(time.Duration(ae.RetryAfter)*time.Second, time.Second)
			log.Warn("getUpdates: 429 Too Many Requests", durationAttr("retry_in", wait))
		default:
			errWait = min(max(errWait*2, errorBackoffMin), errorBackoffMax)
			wait = errWait
			log.Warn("intake: getUpdates or record failed; retrying", slog.Any("err", err), durationAttr("retry_in", wait))
		}
		if sleepCtx(ctx, wait) != nil {
			return nil
		}
	}
	return nil
}

func ae409(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Description
	}
	return ""
}

// handleLoop handles the inbox head by head until ctx ends. The update in
// progress when ctx ends is finished (within the drain timeout): its
// handler runs on a context that is not cancelled with ctx.
func (a *App) handleLoop(ctx context.Context) error {
	log := a.log.With(slog.String("component", "handler"))
	errWait := time.Duration(0)
	fail := func(msg string, err error) error {
		if errors.Is(err, ErrLeaseLost) {
			return err
		}
		errWait = min(max(errWait*2, errorBackoffMin), errorBackoffMax)
		log.Warn(msg, slog.Any("err", err), durationAttr("retry_in", errWait))
		return sleepCtx(ctx, errWait)
	}
	for ctx.Err() == nil {
		u, ok, err := a.inbox.Head(ctx)
		if err != nil {
			if err := fail("inbox: read failed", err); err != nil {
				return ignoreCanceled(err)
			}
			continue
		}
		if !ok {
			t := time.NewTimer(time.Second)
			select {
			case <-a.wake:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			continue
		}
		hctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.opt.drain)
		err = a.handleOne(hctx, u)
		cancel()
		if err != nil {
			if err := fail("update not handled; will retry", err); err != nil {
				return ignoreCanceled(err)
			}
			continue
		}
		errWait = 0
	}
	return nil
}

func ignoreCanceled(err error) error {
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// getMe learns the bot's user (its username, for /cmd@botname) and retries
// until it succeeds or ctx ends; until then /healthz reports the last
// failure. A 401 (the token is wrong or revoked) is not retried: it returns
// ErrTokenRejected.
func (a *App) getMe(ctx context.Context) error {
	wait := time.Duration(0)
	for {
		me, err := a.bot.GetMe(ctx)
		if err == nil {
			a.meErr.Store(nil)
			a.me.Store(me)
			a.log.Info("bot identity", slog.Int64("id", me.ID), slog.String("username", me.Username))
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		msg := a.redactor.String(err.Error())
		a.meErr.Store(&msg)
		if errors.Is(err, bot.ErrorUnauthorized) {
			a.log.Error("Telegram answered 401 Unauthorized to getMe: TELEGRAM_BOT_TOKEN is wrong or was revoked "+
				"(copy the current token from @BotFather); stopping", slog.String("err", msg), slog.String("api", a.cfg.APIURL))
			return fmt.Errorf("getMe: %w", ErrTokenRejected)
		}
		wait = min(max(wait*2, errorBackoffMin), errorBackoffMax)
		a.log.Warn("getMe failed; retrying", slog.Any("err", a.redactor.Error(err)), durationAttr("retry_in", wait))
		if err := sleepCtx(ctx, wait); err != nil {
			return err
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
