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
func (s Settler) Settle(ctx context.Context, what string, op func(ctx context.Context) error, attrs ...slog.Attr) error {
	errs := s.SettleAll(ctx, what, 1, func(ctx context.Context, _ int) error { return op(ctx) },
		func(int) []slog.Attr { return attrs })
	return errs[0]
}

// SettleAll settles n jobs (op(ctx, i) settles job i) as Settle does one,
// retrying those that failed together, all within one For; it returns
// each job's outcome (nil: settled), as Settle would. attrs (nil: none)
// identifies job i in logs.
func (s Settler) SettleAll(ctx context.Context, what string, n int, op func(ctx context.Context, i int) error,
	attrs func(i int) []slog.Attr) []error {
	errs := make([]error, n)
	left := make([]int, n)
	for i := range left {
		left[i] = i
	}
	deadline := time.Now().Add(s.For)
	for try := 0; ; try++ {
		var again []int
		for _, i := range left {
			tctx, cancel := context.WithTimeout(ctx, s.Try)
			errs[i] = op(tctx, i)
			cancel()
			if errs[i] != nil && !Final(errs[i]) && (s.Final == nil || !s.Final(errs[i])) {
				again = append(again, i)
			}
		}
		if len(again) == 0 {
			if try > 0 && s.Log != nil {
				s.Log.Info(what+" succeeded after retries", slog.String("settle", what), slog.Int("tries", try+1))
			}
			return errs
		}
		left = again
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
			if attrs != nil {
				for _, at := range attrs(left[0]) {
					a = append(a, at)
				}
			}
			s.Log.Warn(what+" failed; retrying with a fresh context", a...)
		}
		if Sleep(ctx, wait) != nil {
			return giveUp(ErrSettleStopped)
		}
	}
}
