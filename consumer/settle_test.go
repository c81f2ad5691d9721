package consumer_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/lanes"
)

// A settle is tried until it lands, a final error ends it at once, and it
// gives up at its deadline or its context's end, saying how many tries it
// made; SettleAll retries only the jobs that failed. The tries counted are
// op's calls, the retries the Retried calls.
func TestSettleTriesUntilItLandsOrGivesUp(t *testing.T) {
	t.Parallel()
	errDown := errors.New("store down")
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name      string
		ctx       context.Context
		fails     int   // tries that fail with failWith before one lands (-1: all)
		failWith  error // errDown unless set
		For       time.Duration
		wantTries int
		wantErr   error  // nil: landed
		wantText  string // in the error
	}{
		{name: "lands at once", fails: 0, wantTries: 1},
		{name: "lands at the third try", fails: 2, wantTries: 3},
		{name: "a final error ends it", fails: -1, failWith: lanes.ErrStaleLease, wantTries: 1, wantErr: lanes.ErrStaleLease},
		{name: "gives up at its deadline", fails: -1, For: 35 * time.Millisecond, wantErr: consumer.ErrSettleDeadline, wantText: "tries): store down"},
		{name: "gives up when its context ended", ctx: ended, fails: -1, wantTries: 1, wantErr: consumer.ErrSettleStopped, wantText: "(1 tries): store down"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, fail := tc.ctx, tc.failWith
			if ctx == nil {
				ctx = context.Background()
			}
			if fail == nil {
				fail = errDown
			}
			retried := 0
			s := consumer.Settler{Try: time.Second, For: time.Minute, Backoff: consumer.Backoff{Base: 5 * time.Millisecond, Max: 5 * time.Millisecond},
				Retried: func() { retried++ }, Log: slog.New(slog.DiscardHandler)}
			if tc.For > 0 {
				s.For = tc.For
			}
			tries := 0
			err := s.Settle(ctx, "ack", func(context.Context) error {
				tries++
				if tc.fails < 0 || tries <= tc.fails {
					return fail
				}
				return nil
			}, slog.String("job", "j1"))
			if tc.wantErr == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.wantErr)
				require.ErrorContains(t, err, tc.wantText)
			}
			if tc.wantTries > 0 {
				require.Equal(t, tc.wantTries, tries, "tries")
			} else {
				require.Greater(t, tries, 2, "tries until the deadline")
			}
			require.Equal(t, tries-1, retried, "a retry per try after the first")
		})
	}
	t.Run("SettleAll retries the failed jobs only", func(t *testing.T) {
		t.Parallel()
		s := consumer.Settler{Try: time.Second, For: time.Minute, Backoff: consumer.Backoff{Base: time.Millisecond, Max: time.Millisecond}}
		calls := make([]int, 4)
		errs := s.SettleAll(context.Background(), "ack", 4, func(_ context.Context, i int) error {
			calls[i]++
			switch {
			case i == 1 && calls[i] <= 2:
				return errDown
			case i == 3:
				return lanes.ErrNoJob
			}
			return nil
		}, nil)
		require.Equal(t, []error{nil, nil, nil, lanes.ErrNoJob}, errs)
		require.Equal(t, []int{1, 3, 1, 1}, calls)
	})
}

// A settle that lands at its first try (one per message sent) allocates
// what its try's context takes and nothing more.
func TestASettleThatLandsAtOnceAllocatesOnlyItsTrysContext(t *testing.T) {
	drain, cancel := context.WithCancel(context.Background())
	defer cancel()
	op := func(ctx context.Context) error { return ctx.Err() }
	s := consumer.Settler{Try: time.Second, For: time.Minute, Backoff: consumer.Backoff{Base: time.Millisecond, Max: time.Second},
		Log: slog.New(slog.DiscardHandler), Retried: func() {}}
	try := testing.AllocsPerRun(200, func() {
		ctx, cancel := context.WithTimeout(drain, s.Try)
		_ = op(ctx)
		cancel()
	})
	settle := testing.AllocsPerRun(200, func() {
		if err := s.Settle(drain, "ack", op, slog.String("job", "j1")); err != nil {
			panic(err)
		}
	})
	require.Equal(t, try, settle, "allocations of a settle that landed at once, beside its try context's alone")
}
