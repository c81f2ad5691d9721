package app

import (
	"context"
	"errors"

	"github.com/codemojex/codemojex/internal/lifecycle"
)

// Services returns the process's long-running parts for its role, in their
// start order (lifecycle.Run stops them in the reverse one):
//
//  0. heartbeat (procs.Beater): this process in the deployment's list of
//     live processes (the console's Processes), removed when all else stopped;
//  1. flood notices (floodnotice.Notices): waits, at the stop, for the toasts of
//     dropped taps being answered;
//  2. http: /healthz, /metrics and, in webhook mode, the webhook
//     (httpserver.Server: started once HTTP_ADDR is bound; shut down last
//     but for the notices);
//  3. migrations: moves the old whole-bot keys into the buckets, once;
//  4. worker (roles all, worker): sends the queued messages; at the stop
//     its in-flight jobs finish or are released (ShutdownGrace); beside it
//     the broadcast filler (broadcast.Service.Filler: the lazy broadcasts'
//     copies, a window ahead of the budget);
//  5. handlers (roles all, handler; handling.Handler, after getMe): at the
//     stop the updates in progress finish within the drain timeout;
//  6. poller (roles all, poller): getUpdates or setWebhook, and while this
//     process holds the poller lease its leader's services (leaderServices);
//     at the stop it stops fetching and releases the lease.
//
// So a stop runs as before: the poller stops fetching, the updates in
// progress finish, the workers finish or release their jobs, and the HTTP
// server shuts down last.
func (a *App) Services() []lifecycle.Service {
	s := []lifecycle.Service{
		service("heartbeat", a.heartbeat().Run),
		a.floods,
		a.http,
		lifecycle.Func("migrations", func(ctx context.Context) error { a.migrateToBuckets(ctx); return nil }),
	}
	if a.worker != nil {
		s = append(s, service("worker", a.worker.Run), a.bc.Filler())
	}
	if a.cfg.Handles() && !a.opt.intakeOnly {
		s = append(s, a.handler)
	}
	if a.cfg.Polls() {
		s = append(s, service("poller", a.runPoller))
	}
	return s
}

// service is lifecycle.Func for a run that may return ctx's error when it
// is stopped: that is a stop, not a failure.
func service(name string, run func(context.Context) error) lifecycle.Service {
	return lifecycle.Func(name, func(ctx context.Context) error {
		if err := run(ctx); err != nil && (ctx.Err() == nil || !errors.Is(err, context.Canceled)) {
			return err
		}
		return nil
	})
}

// errPollingStopped ends a lease term whose getUpdates loop returned
// without an error of its own while the term went on.
var errPollingStopped = errors.New("getUpdates stopped")

// leaderServices are the services of one lease term of the poller, in
// start order: the lease's renewal, getUpdates (polling mode) and the
// broadcast progress tracker (not in intake-only processes). A term ends
// when the poller stops or any of them returns (the lease lost, getUpdates
// stopped).
func (a *App) leaderServices() []lifecycle.Service {
	s := []lifecycle.Service{service("lease", a.lease.Hold)}
	if !a.cfg.Webhook() {
		s = append(s, service("getUpdates", func(ctx context.Context) error {
			if err := a.poller().Run(ctx); err != nil || ctx.Err() != nil {
				return err
			}
			return errPollingStopped
		}))
	}
	if !a.opt.intakeOnly {
		s = append(s, a.bc.Tracker())
	}
	return s
}
