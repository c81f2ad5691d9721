// Package lifecycle runs a process's long-running parts as services: each
// is started in a stated order, and stopped in the reverse order, one at a
// time, each joined (every goroutine it started has returned) before the
// one started before it is stopped. The first service that fails stops
// all the others the same way, and its error is the run's. The contract
// follows riverqueue/river's rivershared/startstop (a service is started,
// reports that it is started, is stopped and waited for); the code is
// codemojex's own.
package lifecycle

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
)

// Service is one long-running part of a process.
type Service interface {
	// Name names the service in logs and in its error ("poller").
	Name() string
	// Run runs the service until ctx ends, then stops it (draining what
	// it must: in-flight work, a lease, a listener) and returns nil once
	// every goroutine it started has returned. It calls started once,
	// when it is started (a listener bound, its loops running): the
	// runner starts the next service only then. A non-nil error is a
	// failure, before or after started: it stops the process. A nil
	// return before ctx ends means the service is done (a one-off task):
	// the others run on.
	Run(ctx context.Context, started func()) error
}

// Func is a Service that is started as soon as it runs: run (until ctx
// ends, or done) is the whole service.
func Func(name string, run func(ctx context.Context) error) Service {
	return funcService{name: name, run: run}
}

type funcService struct {
	name string
	run  func(context.Context) error
}

func (f funcService) Name() string { return f.name }

func (f funcService) Run(ctx context.Context, started func()) error {
	started()
	return f.run(ctx)
}

// Error is a service's failure: Service names it; Err is what its Run
// returned (errors.Is and errors.As see through it).
type Error struct {
	Service string
	Err     error
}

func (e *Error) Error() string { return e.Service + ": " + e.Err.Error() }

func (e *Error) Unwrap() error { return e.Err }

// running is one started service.
type running struct {
	svc       Service
	stop      context.CancelFunc
	ready     chan struct{} // closed by started
	readyOnce sync.Once
	exited    chan struct{} // closed when Run has returned, after err is set
	err       error
	reported  bool // err is logged (and first if it was the first)
}

func (r *running) started() { r.readyOnce.Do(func() { close(r.ready) }) }

// Run starts services in order and runs them until ctx ends or one of them
// fails, then stops them in the reverse order: each service's context is
// cancelled and its Run waited for before the service started before it
// is stopped. A service's context carries ctx's values but not its end:
// the runner ends it, in turn. Run returns nil after a stop on ctx's end
// (or once every service is done), or the first failure as an *Error;
// each failure is logged to log (nil: not logged). Every service's
// goroutine has returned when Run returns.
func Run(ctx context.Context, log *slog.Logger, services ...Service) error {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	exits := make(chan *running, len(services))
	var (
		rs    []*running
		first error
	)
	failed := func(r *running) bool {
		if r.err == nil || r.reported {
			return r.err != nil
		}
		r.reported = true
		log.Error(r.svc.Name()+" stopped", slog.Any("err", r.err))
		if first == nil {
			first = &Error{Service: r.svc.Name(), Err: r.err}
		}
		return true
	}
	// next waits for r to be started (nil r: for nothing), a service to
	// return, or ctx's end; it reports whether to go on.
	left := 0 // services started whose Run has not been seen returning
	next := func(r *running) bool {
		var ready <-chan struct{}
		if r != nil {
			ready = r.ready
		}
		for left > 0 {
			select {
			case <-ready:
				return true
			case e := <-exits:
				left--
				if failed(e) {
					return false
				}
				if e == r {
					return true // done before it was started: a one-off task
				}
			case <-ctx.Done():
				return false
			}
		}
		return ctx.Err() == nil
	}
	// Start, in order: each once the one before is started.
	for _, s := range services {
		r := start(ctx, s, exits)
		rs = append(rs, r)
		left++
		if !next(r) {
			break
		}
	}
	// Run until ctx ends, a service fails, or every one is done.
	if first == nil && len(rs) == len(services) {
		next(nil)
	}
	// Stop in the reverse order, each joined before the next.
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		r.stop()
		<-r.exited
		failed(r)
	}
	return first
}

// start runs s in a goroutine of its own, which sends r to exits when Run
// has returned (a panic is its failure).
func start(ctx context.Context, s Service, exits chan<- *running) *running {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	r := &running{svc: s, stop: stop, ready: make(chan struct{}), exited: make(chan struct{})}
	go func() {
		defer func() {
			if p := recover(); p != nil {
				r.err = fmt.Errorf("panic: %v", p)
			}
			close(r.exited)
			exits <- r
		}()
		r.err = s.Run(sctx, r.started)
	}()
	return r
}
