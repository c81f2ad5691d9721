package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/lifecycle"
	"github.com/codemojex/codemojex/internal/webhook"
	"github.com/codemojex/codemojex/tgapi"
)

// runPoller records updates: in polling mode it competes for the poller
// lease and, while it holds it, runs the getUpdates intake; in webhook mode
// it sets the webhook (every poller process, so any of them can receive)
// and the webhook handler of the HTTP server records what arrives. The
// lease holder also registers the command menu and keeps broadcast
// progress messages up to date (in both modes: one process does it). It
// returns when ctx ends (nil), intake.ErrTokenRejected, or
// webhook.ErrRefused.
func (a *App) runPoller(ctx context.Context) error {
	log := a.log.With(slog.String("component", "poller"))
	if err := a.ensureMe(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	if a.cfg.Webhook() {
		err := webhook.Set(ctx, webhook.SetConfig{API: a.api, URL: a.cfg.WebhookURL, Secret: a.cfg.WebhookSecret,
			Path: a.cfg.WebhookPath(), Redactor: a.redactor, Log: a.log})
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		a.webhookSet.Store(true)
	}
	for {
		err := a.lease.Acquire(ctx, func(waiting bool) {
			if waiting {
				a.m.standby.Set(1)
			} else {
				a.m.standby.Set(0)
			}
		})
		if err != nil {
			return nil
		}
		a.leader.Store(true)
		a.m.leader.Set(1)
		a.registerCommands(ctx)
		// One lease term: its services (leaderServices) until ctx ends
		// or one of them returns; their failures are logged here.
		err = lifecycle.Run(ctx, nil, a.leaderServices()...)
		a.leader.Store(false)
		a.m.leader.Set(0)
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		a.lease.Release(rctx)
		rcancel()
		if ctx.Err() != nil {
			log.Info("poller stopped")
			return nil
		}
		cause := err
		if le := (*lifecycle.Error)(nil); errors.As(err, &le) {
			cause = le.Err
		}
		if errors.Is(cause, intake.ErrTokenRejected) {
			return cause
		}
		log.Warn("poller stopped polling; waiting for the lease again", slog.Any("cause", cause))
		if err := consumer.Sleep(ctx, time.Second); err != nil {
			return nil
		}
	}
}

// ensureMe runs getMe once per process (the poller and the handlers of
// role all both need it): a second caller waits for the first's result, or
// for ctx to end (then ctx's error): a stop must not wait behind a getMe
// that keeps failing (Telegram unreachable at start), or the poller, stopped
// first, would wait for the handlers' getMe, which is only stopped after it.
func (a *App) ensureMe(ctx context.Context) error {
	select {
	case a.meSem <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-a.meSem }()
	if a.me.Load() != nil {
		return nil
	}
	if a.meFatal != nil {
		return a.meFatal
	}
	err := a.getMe(ctx)
	if ce := (*config.Error)(nil); errors.Is(err, intake.ErrTokenRejected) || errors.As(err, &ce) {
		a.meFatal = err
	}
	return err
}

// poller is the intake loop of this process, wired to its metrics and its
// /healthz.
func (a *App) poller() *intake.Poller {
	return &intake.Poller{
		Inbox: a.inbox, Lease: a.lease, Client: a.api, PollTimeout: a.opt.pollTimeout, Log: a.log,
		Polled:   func(t time.Time) { a.lastPoll.Store(t.UnixNano()) },
		Recorded: func(added int) { a.m.received.Add(float64(added)) },
		Conflict: a.m.conflicts.Inc,
	}
}

// getMe learns the bot's user (its username, for /cmd@botname) and retries
// until it succeeds or ctx ends; until then /healthz reports the last
// failure. A 401 (the token is wrong or revoked) is not retried: it returns
// ErrTokenRejected. Once it knows the bot, it claims the key namespace
// (claimNamespace): another bot's namespace returns its *config.Error.
func (a *App) getMe(ctx context.Context) error {
	wait := time.Duration(0)
	for {
		me, err := a.api.GetMe(ctx)
		if err == nil {
			err = claimNamespace(ctx, a.c, a.opt.tag, me.ID)
			if ce := (*config.Error)(nil); errors.As(err, &ce) {
				a.log.Error("another bot owns this key namespace; stopping", slog.String("err", err.Error()))
				return err
			}
		}
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
		if tgapi.IsCode(err, http.StatusUnauthorized) {
			a.log.Error("Telegram answered 401 Unauthorized to getMe: TELEGRAM_BOT_TOKEN is wrong or was revoked "+
				"(copy the current token from @BotFather); stopping", slog.String("err", msg), slog.String("api", a.cfg.APIURL))
			return fmt.Errorf("getMe: %w", intake.ErrTokenRejected)
		}
		wait = intake.ErrorBackoff().Next(wait)
		a.log.Warn("getMe failed; retrying", slog.Any("err", a.redactor.Error(err)), durationAttr("retry_in", wait))
		if err := consumer.Sleep(ctx, wait); err != nil {
			return err
		}
	}
}
