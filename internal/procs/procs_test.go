package procs_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/testkit"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

func TestMain(m *testing.M) { valkeytest.Main(m) }

// Every process that beat is listed, sorted by id, as it said (roles,
// version, start, figures, server time of the beat); a process that
// Forgets itself is gone at once, and the other processes stay.
func TestListShowsEveryBeatingProcessAsItSaid(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := procs.New(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t))
	started := time.UnixMilli(time.Now().UnixMilli())
	b := procs.Process{ID: "host-b:2:0002", Roles: []string{"worker"}, Version: "v1.2.3", Started: started,
		Figures: map[string]float64{"messages sent": 7, "429s": 0}}
	a := procs.Process{ID: "host-a:1:0001", Roles: []string{"poller", "handler", "worker"}, Version: "v1.2.3 (abc)", Started: started,
		Figures: map[string]float64{"updates received": 3}}
	for i, p := range []procs.Process{b, a} {
		n, err := r.Beat(ctx, p, time.Minute)
		require.NoError(t, err)
		require.Equal(t, i+1, n, "live processes after this beat")
	}
	got, err := r.List(ctx)
	require.NoError(t, err)
	require.Len(t, got, 2)
	for i, want := range []procs.Process{a, b} {
		require.False(t, got[i].Seen.IsZero(), "the beat's server time")
		got[i].Seen = time.Time{}
		require.Equal(t, want, got[i])
	}
	require.NoError(t, r.Forget(ctx, a.ID))
	got, err = r.List(ctx)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, b.ID, got[0].ID)
}

// A process that stops beating is left out once its heartbeat's TTL has
// passed, without anyone forgetting it.
func TestAProcessUnheardForItsTTLIsNotListed(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := procs.New(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t))
	_, err := r.Beat(ctx, procs.Process{ID: "gone"}, 50*time.Millisecond)
	require.NoError(t, err)
	_, err = r.Beat(ctx, procs.Process{ID: "alive"}, time.Minute)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, err := r.List(ctx)
		require.NoError(t, err)
		return len(got) == 1 && got[0].ID == "alive"
	}, 10*time.Second, 10*time.Millisecond)
}

// The live set never holds more than MaxProcs processes: the list stays
// bounded however many beat, and the ones that beat last are kept.
func TestTheLiveSetIsBoundedByMaxProcs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := procs.New(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t))
	total := procs.MaxProcs + 10
	for i := range total {
		// Longer TTLs later, so the later beats expire last.
		n, err := r.Beat(ctx, procs.Process{ID: fmt.Sprintf("p%04d", i)}, time.Minute+time.Duration(i)*time.Millisecond)
		require.NoError(t, err)
		require.LessOrEqual(t, n, procs.MaxProcs)
	}
	got, err := r.List(ctx)
	require.NoError(t, err)
	require.Len(t, got, procs.MaxProcs)
	require.Equal(t, fmt.Sprintf("p%04d", total-1), got[len(got)-1].ID, "the last to beat is kept")
	require.Equal(t, fmt.Sprintf("p%04d", total-procs.MaxProcs), got[0].ID, "the first ones dropped")
}

// Beater beats at once when it starts, and removes the process when its
// context ends.
func TestBeaterListsItsProcessWhileRunningAndRemovesItOnStop(t *testing.T) {
	t.Parallel()
	r := procs.New(valkeytest.Shared(t).Client(t), valkeytest.Namespace(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logs testkit.LogBuffer
	b := &procs.Beater{Registry: r, Self: func() procs.Process { return procs.Process{ID: "me", Roles: []string{"worker"}} },
		Period: time.Hour, Log: logs.Logger()}
	go func() { done <- b.Run(ctx) }()
	require.Eventually(t, func() bool {
		got, err := r.List(context.Background())
		require.NoError(t, err)
		return len(got) == 1 && got[0].ID == "me"
	}, 10*time.Second, 10*time.Millisecond, "listed from its first beat, not after a period")
	cancel()
	require.NoError(t, <-done)
	got, err := r.List(context.Background())
	require.NoError(t, err)
	require.Empty(t, got)
	require.NotContains(t, logs.String(), "procs:", "no beat nor removal failed")
}
