package lifecycle_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/codemojex/codemojex/internal/lifecycle"
)

// TestMain fails the package if any goroutine outlives its test: Run joins
// every service's goroutine, and the services here join theirs.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// journal records the services' events in order.
type journal struct {
	mu     sync.Mutex
	events []string
}

func (j *journal) add(e string) {
	j.mu.Lock()
	j.events = append(j.events, e)
	j.mu.Unlock()
}

func (j *journal) list() []string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return append([]string(nil), j.events...)
}

// svc is a service that starts after startDelay, runs a goroutine of its
// own until stopped, and then returns stopErr; with failAfter > 0 it
// returns failErr that long after it started, unstopped.
type svc struct {
	name       string
	j          *journal
	startDelay time.Duration
	failAfter  time.Duration
	failErr    error
	startErr   error
}

func (s svc) Name() string { return s.name }

func (s svc) Run(ctx context.Context, started func()) error {
	time.Sleep(s.startDelay)
	if s.startErr != nil {
		s.j.add("fail to start " + s.name)
		return s.startErr
	}
	own, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { <-own.Done() }) // a goroutine of its own, joined
	s.j.add("start " + s.name)
	started()
	var fail <-chan time.Time
	if s.failAfter > 0 {
		fail = time.After(s.failAfter)
	}
	select {
	case <-ctx.Done():
		s.j.add("stop " + s.name)
		return nil
	case <-fail:
		s.j.add("fail " + s.name)
		return s.failErr
	}
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name     string
		services func(j *journal) []lifecycle.Service
		cancel   time.Duration // ctx ends this long after Run starts (0: never)
		wantErr  string        // "" = nil
		want     []string
	}{
		{
			name: "started in order, stopped in reverse on ctx's end",
			services: func(j *journal) []lifecycle.Service {
				// b is slow to start: c must wait for it.
				return []lifecycle.Service{svc{name: "a", j: j}, svc{name: "b", j: j, startDelay: 50 * time.Millisecond}, svc{name: "c", j: j}}
			},
			cancel: 200 * time.Millisecond,
			want:   []string{"start a", "start b", "start c", "stop c", "stop b", "stop a"},
		},
		{
			name: "a failing service stops the rest, in reverse, with its error",
			services: func(j *journal) []lifecycle.Service {
				return []lifecycle.Service{svc{name: "a", j: j}, svc{name: "b", j: j, failAfter: 50 * time.Millisecond, failErr: boom}, svc{name: "c", j: j}}
			},
			wantErr: "b: boom",
			want:    []string{"start a", "start b", "start c", "fail b", "stop c", "stop a"},
		},
		{
			name: "a service failing to start: the later ones never start",
			services: func(j *journal) []lifecycle.Service {
				return []lifecycle.Service{svc{name: "a", j: j}, svc{name: "b", j: j, startErr: boom}, svc{name: "c", j: j}}
			},
			wantErr: "b: boom",
			want:    []string{"start a", "fail to start b", "stop a"},
		},
		{
			name: "a one-off service done: the others run on",
			services: func(j *journal) []lifecycle.Service {
				once := oneOff{j: j} // done before it reports started
				return []lifecycle.Service{svc{name: "a", j: j}, once, svc{name: "c", j: j}}
			},
			cancel: 200 * time.Millisecond,
			want:   []string{"start a", "once", "start c", "stop c", "stop a"},
		},
		{
			name: "a panic is the service's failure",
			services: func(j *journal) []lifecycle.Service {
				p := lifecycle.Func("p", func(context.Context) error { panic("oops") })
				return []lifecycle.Service{svc{name: "a", j: j}, p}
			},
			wantErr: "p: panic: oops",
			want:    []string{"start a", "stop a"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := &journal{}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.cancel > 0 {
				time.AfterFunc(tc.cancel, cancel)
			}
			err := lifecycle.Run(ctx, nil, tc.services(j)...)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.EqualError(t, err, tc.wantErr)
				var le *lifecycle.Error
				require.ErrorAs(t, err, &le)
			}
			require.Equal(t, tc.want, j.list())
		})
	}
}

// TestRunUnwrapsTheFailure: the run's error is the failing service's
// (errors.Is), so a caller can branch on it (a rejected token's exit code).
func TestRunUnwrapsTheFailure(t *testing.T) {
	sentinel := errors.New("token rejected")
	err := lifecycle.Run(context.Background(), nil,
		lifecycle.Func("poller", func(context.Context) error { return sentinel }))
	require.ErrorIs(t, err, sentinel)
}

// TestRunStopsAStartingServiceOnCtxEnd: a service that never reports it
// started is stopped (its context ended) when ctx ends, and joined.
func TestRunStopsAStartingServiceOnCtxEnd(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	stopped := false
	err := lifecycle.Run(ctx, nil, lifecycle.Service(never{stopped: &stopped}))
	require.NoError(t, err)
	require.True(t, stopped)
}

type never struct{ stopped *bool }

func (never) Name() string { return "never" }

func (n never) Run(ctx context.Context, _ func()) error {
	<-ctx.Done()
	*n.stopped = true
	return nil
}

type oneOff struct{ j *journal }

func (oneOff) Name() string { return "once" }

func (o oneOff) Run(context.Context, func()) error { o.j.add("once"); return nil }

// TestRunAllDone: Run returns once every service is done.
func TestRunAllDone(t *testing.T) {
	var n atomic.Int32
	f := lifecycle.Func("f", func(context.Context) error { n.Add(1); return nil })
	require.NoError(t, lifecycle.Run(context.Background(), nil, f, f))
	require.Equal(t, int32(2), n.Load())
}
