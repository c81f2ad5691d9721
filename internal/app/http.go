package app

import (
	"context"
	"fmt"
	"time"

	"github.com/codemojex/codemojex/internal/health"
	"github.com/codemojex/codemojex/internal/httpserver"
	"github.com/codemojex/codemojex/internal/webhook"
	"github.com/codemojex/codemojex/worker"
)

// initHTTP wires the HTTP side: the /healthz checks (internal/health, reading
// getMe's state, the lease, the last poll and the webhook through
// health.Status), the queue, broadcast and Valkey memory gauges of
// /metrics, the webhook receiver (poller roles in webhook mode) and the
// server (internal/httpserver) on WithListener's listener or HTTP_ADDR.
// Run serves it.
func (a *App) initHTTP() error {
	st := health.Status{
		Me: func() (bool, string) {
			if a.me.Load() != nil {
				return true, ""
			}
			if msg := a.meErr.Load(); msg != nil {
				return false, *msg
			}
			return false, ""
		},
		Leader: a.leader.Load,
		LastPoll: func() time.Time {
			if n := a.lastPoll.Load(); n != 0 {
				return time.Unix(0, n)
			}
			return time.Time{}
		},
		WebhookSet: a.webhookSet.Load,
		Paused: func(ctx context.Context) (time.Duration, string, bool, error) {
			p, err := a.store.Inspector().Paused(ctx)
			return p.Left, p.Why, p.Left < 0 || p.Why == worker.WhyUnauthorized, err
		},
	}
	if a.worker != nil {
		st.Claims = func() (time.Time, string) {
			c := a.worker.Claims()
			return c.FailingSince, c.LastErr
		}
	}
	var err error
	if a.health, err = health.New(health.Config{Client: a.c, Tag: a.opt.tag, Inbox: a.inbox, Status: st,
		Polls: a.cfg.Polls(), Handles: a.cfg.Handles(), Sends: a.worker != nil, Webhook: a.cfg.Webhook(),
		PollTimeout: a.opt.pollTimeout, WaitLimit: a.opt.waitLimit, ClaimFailLimit: a.opt.claimFail, Redactor: a.redactor, Log: a.log}); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	if err := a.reg.Register(httpserver.NewQueueCollector(httpserver.Queues{Store: a.store.Inspector(), Inbox: a.inbox,
		ReplyRate: a.cfg.ReplyRate, PaidRate: a.cfg.PaidBroadcastRate})); err != nil {
		return fmt.Errorf("app: metrics: %w", err)
	}
	if err := a.reg.Register(httpserver.NewBroadcastCollector(a.bc)); err != nil {
		return fmt.Errorf("app: metrics: %w", err)
	}
	if err := a.reg.Register(httpserver.NewValkeyMemoryCollector(a.c)); err != nil {
		return fmt.Errorf("app: metrics: %w", err)
	}
	sc := httpserver.Config{Listener: a.opt.listener, Addr: a.cfg.HTTPAddr, Timeouts: a.opt.httpTimeouts,
		Health: a.health.Check, Registry: a.reg, Log: a.log}
	if a.cfg.Webhook() && a.cfg.Polls() {
		rc := webhook.NewReceiver(webhook.ReceiverConfig{Secret: a.cfg.WebhookSecret, Inbox: a.inbox, Received: a.m.received,
			Log: a.log})
		if err := a.reg.Register(rc.Collector()); err != nil {
			return fmt.Errorf("app: metrics: %w", err)
		}
		sc.Webhook, sc.WebhookPath = rc, a.cfg.WebhookPath()
	}
	if a.http, err = httpserver.New(sc); err != nil {
		return fmt.Errorf("app: %w", err)
	}
	return nil
}
