package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// ErrSettleDeadline is wrapped (with the last try's error) by Settle when
// it gave up because its deadline (Settler.For) passed.
var ErrSettleDeadline = errors.New("consumer: settle not done by its deadline")

// ErrSettleStopped is wrapped (with the last try's error) by Settle when it
// gave up because its context ended (a drain deadline).
var ErrSettleStopped = errors.New("consumer: settle given up at the drain deadline")

// Settler retries settlements: one call that settles a claimed job (ack,
// nack, release, dead-letter, or a record that goes with them) is retried
// until it lands, since the job's fate is known and must not be dropped
// after one failed try. Each try gets a fresh context of its own (Try),
// never the one of the work that decided the job's fate. The zero value is
// not usable: set Try, For and Backoff.
type Settler struct {
	// Try bounds one try (a context.WithTimeout of Settle's ctx).
	Try time.Duration
	// For bounds the retries: no try starts after For has passed since the
	// first (the last wait is shortened to end at it), and a failure then
	// gives up (ErrSettleDeadline). Set it to the lease's length when
	// nothing keeps the lease alive meanwhile.
	For time.Duration
	// Backoff is the wait between tries (Delay of the failures so far).
	Backoff Backoff
	// Final reports errors that no retry can fix besides the built-in ones
	// (nil: none): the settle returns them at once.
	Final func(error) bool
	// Log receives a warning per failed try that is retried [no logs].
	Log *slog.Logger
	// Retried is called once per retry (a metric) [none].
	Retried func()
}

// Final reports whether a settle's error ends its retries at once: the
// lease is provably lost (lanes.ErrStaleLease: its fencing token no longer
// holds the job, another claimer has it; lanes.ErrNoJob: it was settled)
// or the input is bad (lanes.ErrInvalid).
func Final(err error) bool {
	return errors.Is(err, lanes.ErrStaleLease) || errors.Is(err, lanes.ErrNoJob) || errors.Is(err, lanes.ErrInvalid)
}

// Settle runs op until it returns nil (Settle returns nil), a final error
// (returned as is: see Final and Settler.Final), For passes (an error
// wrapping ErrSettleDeadline and op's last error) or ctx ends (an error
// wrapping ErrSettleStopped and op's last error; ctx ending also cuts a try
// in progress: pass context.WithoutCancel of a stop signal to settle
// regardless, a drain context to bound a shutdown). what names the
// settlement in logs ("ack", "release"...), attrs identify the job.
//
// A settle that lands at its first try (nearly all: one per message sent)
// allocates nothing but its try's context; what a retry needs is made
// after a failure.
func (s Settler) Settle(ctx context.Context, what string, op func(ctx context.Context) error, attrs ...slog.Attr) error {
	deadline := time.Now().Add(s.For)
	tctx, cancel := context.WithTimeout(ctx, s.Try)
	err := op(tctx)
	cancel()
	if !s.retryable(err) {
		return err
	}
	return s.retry(ctx, what, &settleOps{one: op, attrs: attrs}, []error{err}, []int{0}, deadline)[0]
}

// SettleAll settles n jobs (op(ctx, i) settles job i) as Settle does one,
// retrying those that failed together, all within one For; it returns
// each job's outcome (nil: settled), as Settle would. attrs (nil: none)
// identifies job i in logs.
func (s Settler) SettleAll(ctx context.Context, what string, n int, op func(ctx context.Context, i int) error,
	attrs func(i int) []slog.Attr) []error {
	deadline := time.Now().Add(s.For)
	errs := make([]error, n)
	var left []int
	for i := range n {
		tctx, cancel := context.WithTimeout(ctx, s.Try)
		errs[i] = op(tctx, i)
		cancel()
		if s.retryable(errs[i]) {
			left = append(left, i)
		}
	}
	if len(left) == 0 {
		return errs
	}
	return s.retry(ctx, what, &settleOps{all: op, attrsOf: attrs}, errs, left, deadline)
}

// retryable reports whether err is a failure a retry may fix (not nil, not
// final).
func (s Settler) retryable(err error) bool {
	return err != nil && !Final(err) && (s.Final == nil || !s.Final(err))
}

// settleOps is what retry runs: Settle's one op or SettleAll's, and the
// attributes that identify a job in logs.
type settleOps struct {
	one     func(ctx context.Context) error
	all     func(ctx context.Context, i int) error
	attrs   []slog.Attr             // Settle's
	attrsOf func(i int) []slog.Attr // SettleAll's (nil: none)
}

func (o *settleOps) do(ctx context.Context, i int) error {
	if o.one != nil {
		return o.one(ctx)
	}
	return o.all(ctx, i)
}

func (o *settleOps) attrsFor(i int) []slog.Attr {
	if o.attrsOf != nil {
		return o.attrsOf(i)
	}
	return o.attrs
}

// retry goes on with the jobs left (their first tries failed, errs holding
// every job's outcome) until they land or give up, as Settle says, no try
// starting after deadline; it returns errs.
func (s Settler) retry(ctx context.Context, what string, ops *settleOps, errs []error, left []int,
	deadline time.Time) []error {
	for try := 0; ; try++ { // try: the last try's number, from 0, that left failed
		giveUp := func(why error) []error {
			for _, i := range left {
				errs[i] = fmt.Errorf("%w (%d tries): %w", why, try+1, errs[i])
			}
			return errs
		}
		switch {
		case ctx.Err() != nil:
			return giveUp(ErrSettleStopped)
		case !time.Now().Before(deadline):
			return giveUp(ErrSettleDeadline)
		}
		last := errs[left[0]]
		wait := min(s.Backoff.Delay(try), time.Until(deadline))
		if s.Retried != nil {
			s.Retried()
		}
		if s.Log != nil {
			a := []any{slog.String("settle", what), slog.Int("jobs", len(left)), slog.Int("try", try+1), slog.Any("err", last),
				slog.String("retry_in", wait.String())}
			for _, at := range ops.attrsFor(left[0]) {
				a = append(a, at)
			}
			s.Log.Warn(what+" failed; retrying with a fresh context", a...)
		}
		if Sleep(ctx, wait) != nil {
			return giveUp(ErrSettleStopped)
		}
		var again []int
		for _, i := range left {
			tctx, cancel := context.WithTimeout(ctx, s.Try)
			errs[i] = ops.do(tctx, i)
			cancel()
			if s.retryable(errs[i]) {
				again = append(again, i)
			}
		}
		if len(again) == 0 {
			if s.Log != nil {
				s.Log.Info(what+" succeeded after retries", slog.String("settle", what), slog.Int("tries", try+2))
			}
			return errs
		}
		left = again
	}
}
