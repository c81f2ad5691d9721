package lanes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A burst of 10,000 jobs in lane A cannot starve ten one-job lanes enqueued
// after it: with Max 1 and weight 1, each of B..K is claimed within the
// first 11 claims (one turn of the ring).
func TestFairnessBurstDoesNotStarve(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	m := lanes.NewMinter()
	enqueueN(t, s, m, "q", "A", 10_000)
	small := map[string]bool{}
	for c := 'B'; c <= 'K'; c++ {
		g := string(c)
		small[g] = true
		ok, err := s.Enqueue(ctx, "q", g, m.New(), []byte(g))
		require.NoError(t, err)
		require.True(t, ok)
	}
	require.Len(t, ring(t, s, "q"), 11)

	var order []string
	for i := 0; i < 11; i++ {
		j := claimOne(t, s, time.Minute, "q")
		order = append(order, j.Group)
		delete(small, j.Group)
		require.NoError(t, s.Ack(ctx, j.Lease))
	}
	require.Empty(t, small, "lanes not served in the first 11 claims; order %v", order)
	require.Equal(t, []string{"A", "B", "C", "D", "E", "F", "G", "H", "I", "J", "K"}, order)
	// Only A is left, still in the ring once.
	require.Equal(t, []string{"A"}, ring(t, s, "q"))
	st, err := s.Inspector().Stats(ctx, "q", 1)
	require.NoError(t, err)
	require.Equal(t, 9_999, st.Pending)
}

// Weight w means up to w jobs per turn: A (weight 5) and B (weight 1), 600
// jobs each, one claimer with Max large enough: of the first 120 jobs handed
// out, A got 100 and B 20 (within one job), counting jobs, not calls.
func TestWeightsShareJobs(t *testing.T) {
	t.Parallel()
	for _, max := range []int{5, 8, 1000} {
		t.Run(fmt.Sprintf("max=%d", max), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t)
			m := lanes.NewMinter()
			require.NoError(t, s.Inspector().SetWeight(ctx, "q", "A", 5))
			enqueueN(t, s, m, "q", "A", 600)
			enqueueN(t, s, m, "q", "B", 600)
			count := map[string]int{}
			total, calls := 0, 0
			for total < 120 {
				c := claim(t, s, max, time.Minute, "q")
				require.NotEmpty(t, c.Jobs)
				calls++
				for _, j := range c.Jobs {
					require.Equal(t, c.Jobs[0].Group, j.Group, "one claim serves one lane")
					if total < 120 {
						count[j.Group]++
					}
					total++
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				if c.Jobs[0].Group == "A" {
					require.Len(t, c.Jobs, 5, "A gets its weight per turn")
				} else {
					require.Len(t, c.Jobs, 1)
				}
			}
			require.InDelta(t, 100, count["A"], 1, "counts %v", count)
			require.InDelta(t, 20, count["B"], 1, "counts %v", count)
			require.Equal(t, 40, calls, "20 turns of two lanes")
		})
	}
}

// Jobs of one lane come out in id (mint) order, also when an expired lease
// returns a job: it goes back to its place, ahead of later jobs. The leases
// expire on the server clock (150 ms) and the next Claim reclaims them.
func TestOrderWithinLaneAfterExpiry(t *testing.T) {
	t.Parallel()
	for _, ordered := range []bool{false, true} {
		t.Run(fmt.Sprintf("ordered=%v", ordered), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: ordered}))
			m := lanes.NewMinter()
			// Short enough to wait for, long enough that the steps before
			// the wait finish first even under -race.
			const lease = 150 * time.Millisecond
			require.NoError(t, s.Inspector().SetWeight(ctx, "q", "A", 3))
			ids := enqueueN(t, s, m, "q", "A", 10)
			// Interleave another lane so the ring has to rotate.
			other := enqueueN(t, s, m, "q", "B", 3)

			first := claim(t, s, 3, lease, "q")
			require.Equal(t, ids[:3], jobIDs(first.Jobs))
			var got []lanes.JobID // order of A's jobs as finally delivered (acked)
			if ordered {
				// The lane is held until its batch settles: only B flows.
				for range other {
					j := claimOne(t, s, time.Minute, "q")
					require.Equal(t, "B", j.Group)
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				c := claim(t, s, 3, time.Minute, "q")
				require.Empty(t, c.Jobs)
				require.Greater(t, c.RetryIn, time.Duration(0), "retry when the lease ends")
				require.LessOrEqual(t, c.RetryIn, lease)
			} else {
				// Ack the middle job; 0 and 2 will expire.
				require.NoError(t, s.Ack(ctx, first.Jobs[1].Lease))
				got = append(got, first.Jobs[1].ID)
				b := claim(t, s, 3, time.Minute, "q")
				require.Equal(t, "B", b.Jobs[0].Group)
				for _, j := range b.Jobs {
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
				c := claim(t, s, 3, time.Minute, "q")
				require.Equal(t, ids[3:6], jobIDs(c.Jobs))
				for _, j := range c.Jobs {
					require.NoError(t, s.Ack(ctx, j.Lease))
					got = append(got, j.ID)
				}
			}
			waitServerPast(t, s, first.Jobs[0].Deadline)
			for {
				c := claim(t, s, 3, time.Minute, "q")
				if len(c.Jobs) == 0 {
					break
				}
				for _, j := range c.Jobs {
					if j.Group != "A" {
						require.NoError(t, s.Ack(ctx, j.Lease))
						continue
					}
					got = append(got, j.ID)
					want := 0
					for _, f := range first.Jobs {
						if f.ID == j.ID {
							want = 1
						}
					}
					require.Equal(t, want, j.Attempts, "an expired lease counts an attempt")
					require.NoError(t, s.Ack(ctx, j.Lease))
				}
			}
			if ordered {
				// The whole batch came back and was delivered again in order.
				require.Equal(t, ids, got)
			} else {
				// 1 acked first, then 3..5; the expired 0 and 2 went back
				// ahead of 6..9 and came out first, in id order.
				want := []lanes.JobID{ids[1], ids[3], ids[4], ids[5], ids[0], ids[2], ids[6], ids[7], ids[8], ids[9]}
				require.Equal(t, want, got)
			}
			require.Equal(t, []string{s.Keys().Queue("q", "weight")}, tagKeys(t, s))
		})
	}
}

// While a global rate binds, the budget refills one job at a time, so most
// claims could take only one job: a lane's turn cut short is finished
// before the ring moves on, and a lane of weight 5 still gets 5 times the
// share of a lane of weight 1 (the seed's promise). Ordered queue, as the
// bot uses.
func TestWeightHoldsWhileGlobalRateBinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t,
		lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}),
		lanes.WithGlobalRate(20, 100*time.Millisecond))
	m := lanes.NewMinter()
	groups := []string{"heavy", "b", "c", "d", "e", "f"}
	var items []lanes.Item
	for i := 0; i < 400; i++ {
		for _, g := range groups {
			items = append(items, lanes.Item{Group: g, ID: m.New(), Payload: []byte("x")})
		}
	}
	_, err := s.EnqueueBatch(ctx, "q", items)
	require.NoError(t, err)
	require.NoError(t, s.Inspector().SetWeight(ctx, "q", "heavy", 5))

	counts := map[string]int{}
	total := 0
	for total < 600 {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 8})
		require.NoError(t, err)
		if len(c.Jobs) == 0 {
			require.GreaterOrEqual(t, c.RetryIn, time.Duration(0))
			time.Sleep(c.RetryIn)
			continue
		}
		for _, j := range c.Jobs {
			counts[j.Group]++
			total++
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	light := 0
	for _, g := range groups[1:] {
		light += counts[g]
	}
	ratio := float64(counts["heavy"]) / (float64(light) / 5)
	t.Logf("of %d jobs: heavy %d, the five others %v (ratio %.2f)", total, counts["heavy"], counts, ratio)
	require.InDelta(t, 5.0, ratio, 0.5, "weight 5 against weight 1 while the global rate binds")
}
