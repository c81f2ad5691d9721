package lanes_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// No key leaks: 10,000 one-job lanes enqueued, claimed and acked leave the
// keyspace at its baseline (no key of the tag at all; with weights or lane
// limits set, only those hashes) and the ring empty.
func TestNoKeyLeak(t *testing.T) {
	t.Parallel()
	const lanesN = 10_000
	cases := []struct {
		name  string
		setup func(t *testing.T, s *lanes.Store)
		want  func(s *lanes.Store) []string
	}{
		{name: "defaults", want: func(*lanes.Store) []string { return nil }},
		{
			name: "weights",
			setup: func(t *testing.T, s *lanes.Store) {
				ctx := context.Background()
				require.NoError(t, s.Inspector().SetWeight(ctx, "q", "g17", 7))
				require.NoError(t, s.Inspector().SetWeight(ctx, "q", "g9999", 1000))
				require.NoError(t, s.Inspector().SetWeight(ctx, "q", "g1", 5))
				require.NoError(t, s.Inspector().SetWeight(ctx, "q", "g1", 1)) // back to the default: no entry
			},
			want: func(s *lanes.Store) []string { return []string{s.Keys().Queue("q", "weight")} },
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s := newStore(t)
			if tc.setup != nil {
				tc.setup(t, s)
			}
			m := lanes.NewMinter()
			items := make([]lanes.Item, lanesN)
			for i := range items {
				items[i] = lanes.Item{Group: "g" + strconv.Itoa(i), ID: m.New(), Payload: []byte("p")}
			}
			r, err := s.EnqueueBatch(ctx, "q", items)
			require.NoError(t, err)
			require.Equal(t, lanesN, r.Added)
			require.Equal(t, lanesN, rint(t, s, "LLEN", s.Keys().Queue("q", "ring")))

			// Claim and ack with several concurrent claimers (the client
			// pipelines them on one connection).
			var (
				mu   sync.Mutex
				seen = map[lanes.JobID]bool{}
				wg   sync.WaitGroup
				errs = make(chan error, 8)
			)
			for w := 0; w < 8; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Minute, Max: 4})
						if err != nil {
							errs <- err
							return
						}
						if len(c.Jobs) == 0 {
							return
						}
						for _, j := range c.Jobs {
							mu.Lock()
							dup := seen[j.ID]
							seen[j.ID] = true
							mu.Unlock()
							if dup {
								errs <- fmt.Errorf("job %s claimed twice", j.ID)
								return
							}
							if err := s.Ack(ctx, j.Lease); err != nil {
								errs <- err
								return
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				require.NoError(t, err)
			}
			require.Len(t, seen, lanesN)
			require.Empty(t, ring(t, s, "q"))
			require.Equal(t, tc.want(s), nilIfEmpty(tagKeys(t, s)))
			c := claim(t, s, 1, time.Minute, "q")
			require.Empty(t, c.Jobs)
			require.Equal(t, time.Duration(-1), c.RetryIn)
		})
	}
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

// Group ids with ':', '{', '}', spaces and non-ASCII work end to end, and
// every key they create stays in the slot of "{tag}": the run goes through a
// cluster client on a real single-node cluster, then CLUSTER KEYSLOT of
// every key created must equal CLUSTER KEYSLOT "{tag}".
func TestOddGroupsStayInTagSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := clusterClient(t)
	s, err := lanes.New(c, lanes.WithTag("odd.tag-1"),
		lanes.WithQueue("ord", lanes.QueueConfig{Ordered: true}),
		lanes.WithLanePace(lanes.Pace{Limit: 100, Period: time.Minute}),
		lanes.WithGlobalRate(10_000, time.Minute))
	require.NoError(t, err)
	groups := []string{
		"a:b", "{x}", "}{", "{", "}", "{odd.tag-1}", "{other}:q:x:lane:y", "with space", " lead",
		"日本語", "émoji 🎉", "-1001234567890", "tab\tnl\n", strings.Repeat("{é}", 256/4),
	}
	m := lanes.NewMinter()
	for _, q := range []string{"q", "ord"} {
		for i, g := range groups {
			require.LessOrEqual(t, len(g), lanes.MaxGroupBytes)
			ok, err := s.Enqueue(ctx, q, g, m.New(), []byte(g))
			require.NoError(t, err, g)
			require.True(t, ok)
			_, err = s.Enqueue(ctx, q, g, m.New(), []byte(g))
			require.NoError(t, err)
			require.NoError(t, s.Inspector().SetWeight(ctx, q, g, 1+i%3))
			require.NoError(t, s.Inspector().SetLaneLimit(ctx, q, g, 5))
			require.NoError(t, s.Inspector().SetLanePace(ctx, g, lanes.Pace{Limit: 50, Period: time.Minute}))
		}
		_, err = s.Inspector().Park(ctx, q, groups[0], time.Hour)
		require.NoError(t, err)
		// Claim everything claimable and settle it in assorted ways.
		got := map[string]int{}
		for n := 0; ; n++ {
			cl, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{q}, Lease: time.Minute, Max: 3})
			require.NoError(t, err)
			if len(cl.Jobs) == 0 {
				break
			}
			for _, j := range cl.Jobs {
				require.Equal(t, j.Group, string(j.Payload), "payload and group round-trip")
				got[j.Group]++
				switch n % 3 {
				case 0:
					require.NoError(t, s.Ack(ctx, j.Lease))
				case 1:
					_, err := s.Extend(ctx, j.Lease, time.Minute)
					require.NoError(t, err)
					require.NoError(t, s.Ack(ctx, j.Lease))
				default:
					require.NoError(t, s.Dead(ctx, j.Lease, "reason with {braces}: é"))
				}
			}
		}
		require.Len(t, got, len(groups)-1, "every lane but the parked one was served")
		require.NoError(t, s.Inspector().ResumeLane(ctx, q, groups[0]))
		require.NoError(t, s.Inspector().SetWeight(ctx, q, groups[0], 4))
		moved, err := s.Inspector().MoveLane(ctx, q, groups[0], groups[1]+"→moved")
		require.NoError(t, err)
		require.Equal(t, 2, moved)
		w, err := s.Inspector().Weight(ctx, q, groups[1]+"→moved")
		require.NoError(t, err)
		require.Equal(t, 4, w, "the weight moved with the lane")
		_, err = s.Enqueue(ctx, q, groups[2], m.New(), nil)
		require.NoError(t, err)
		dead, err := s.Inspector().DeadLane(ctx, q, groups[2], "blocked")
		require.NoError(t, err)
		require.Len(t, dead, 1)
		st, err := s.Inspector().Stats(ctx, q, 100)
		require.NoError(t, err)
		require.Equal(t, 2, st.Pending)
		require.Equal(t, groups[1]+"→moved", st.Top[0].Group)
		dl, err := s.Inspector().DeadLetters(ctx, q, lanes.DeadQuery{Newest: 100})
		require.NoError(t, err)
		require.NotEmpty(t, dl)
		_, err = s.Inspector().RequeueDead(ctx, q, dl[0].ID)
		require.NoError(t, err)
	}
	require.NoError(t, s.Inspector().Pause(ctx, time.Minute))
	require.NoError(t, s.Inspector().Resume(ctx))

	want := slotOf(t, c, "{odd.tag-1}")
	keys, err := valkeytest.Keys(ctx, c, "*")
	require.NoError(t, err)
	require.Greater(t, len(keys), 10)
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, "{odd.tag-1}:"), "key %q outside the store's prefix", k)
		require.Equal(t, want, slotOf(t, c, k), "key %q", k)
	}
	// Also the keys built for the odd groups by name.
	for _, g := range groups {
		require.Equal(t, want, slotOf(t, c, s.Keys().Lane("q", g)))
	}
}
