package lanes_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// SCRIPT FLUSH in the middle of a run changes nothing for callers: the
// scripts run by EVALSHA and fall back to EVAL on NOSCRIPT, also for the
// pipelined EVALSHA calls of a large Enqueue. (SCRIPT FLUSH hits the
// whole shared server; every other test recovers the same way.)
func TestScriptFlushIsInvisible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()

	stop := make(chan struct{})
	flushed := make(chan int)
	go func() {
		n := 0
		defer func() { flushed <- n }()
		for {
			select {
			case <-stop:
				return
			case <-time.After(3 * time.Millisecond):
			}
			if err := rdo(t, s, "SCRIPT", "FLUSH").Error(); err != nil {
				t.Errorf("script flush: %v", err)
				return
			}
			n++
		}
	}()
	const rounds = 400
	var wg sync.WaitGroup
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			g := []string{"a", "b"}[w]
			for i := 0; i < rounds; i++ {
				res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: g, ID: m.New(), Payload: []byte("x")}})
				if err != nil || res.Added != 1 {
					t.Errorf("enqueue: %+v %v", res, err)
					return
				}
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 4})
				if err != nil {
					t.Errorf("claim: %v", err)
					return
				}
				for _, j := range c.Jobs {
					if err := s.Ack(ctx, j.Lease); err != nil {
						t.Errorf("ack: %v", err)
						return
					}
				}
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	require.GreaterOrEqual(t, <-flushed, 3, "the run saw several flushes")
	// Whatever the interleaving, every job was either acked or is pending.
	st, err := s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Zero(t, st.InFlight)
	for {
		c := claim(t, s, 10, time.Minute, "q")
		if len(c.Jobs) == 0 {
			break
		}
		for _, j := range c.Jobs {
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	require.Empty(t, tagKeys(t, s))

	// A batch of 1,250 (three pipelined EVALSHA chunks) right after a flush.
	require.NoError(t, rdo(t, s, "SCRIPT", "FLUSH").Error())
	items := make([]lanes.Item, 1250)
	for i := range items {
		items[i] = lanes.Item{Group: []string{"a", "b", "c"}[i%3], ID: m.New()}
	}
	items[1000].ID = items[10].ID // a duplicate in another chunk
	r, err := s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: 1249, Duplicates: 1}, r)
	require.NoError(t, rdo(t, s, "SCRIPT", "FLUSH").Error())
	r, err = s.Enqueue(ctx, "q", items)
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Duplicates: 1250}, r, "a replayed batch adds nothing")
	st, err = s.Inspector().Stats(ctx, "q", 0)
	require.NoError(t, err)
	require.Equal(t, 1249, st.Pending)
	require.NoError(t, rdo(t, s, "SCRIPT", "FLUSH").Error())
	c := claim(t, s, 1, time.Minute, "q")
	require.Len(t, c.Jobs, 1)
}
