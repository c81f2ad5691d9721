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
func TestKeyspaceReturnsToBaselineAfterDrain(t *testing.T) {
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
				require.NoError(t, s.Inspector().SetWeight(ctx, "g17", 7))
				require.NoError(t, s.Inspector().SetWeight(ctx, "g9999", 1000))
				require.NoError(t, s.Inspector().SetWeight(ctx, "g1", 5))
				require.NoError(t, s.Inspector().SetWeight(ctx, "g1", 1)) // back to the default: no entry
			},
			want: func(s *lanes.Store) []string { return []string{s.Keys().Shared("weight")} },
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
			r, err := s.Enqueue(ctx, "q", items)
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
			res, err := s.Enqueue(ctx, q, []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(g)}})
			require.NoError(t, err, g)
			require.Equal(t, 1, res.Added)
			_, err = s.Enqueue(ctx, q, []lanes.Item{{Group: g, ID: m.New(), Payload: []byte(g)}})
			require.NoError(t, err)
			require.NoError(t, s.Inspector().SetWeight(ctx, g, 1+i%3))
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
		require.NoError(t, s.Inspector().SetWeight(ctx, groups[0], 4))
		moved, err := s.Inspector().MoveLane(ctx, q, groups[0], groups[1]+"→moved")
		require.NoError(t, err)
		require.Equal(t, 2, moved)
		w, err := s.Inspector().Weight(ctx, groups[1]+"→moved")
		require.NoError(t, err)
		require.Equal(t, 4, w, "the weight moved with the lane")
		_, err = s.Enqueue(ctx, q, []lanes.Item{{Group: groups[2], ID: m.New()}})
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

// After a run with a global rate, lane pacing (default,
// rule and override), pace parks, a 429 park, a delayed retry, a dead
// letter, priority claims over two queues, a pause, wake-ups and a shared
// round-trip floor and a learned rate, every key
// of the store is under its tag and CLUSTER KEYSLOT of each equals the
// tag's slot (on a real cluster node, through a cluster client).
func TestEveryKeySharesTheTagSlot(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := clusterClient(t)
	const tag = "deliv.keys"
	s, err := lanes.New(c, lanes.WithTag(tag),
		lanes.WithGlobalRate(1000, time.Minute),
		lanes.WithLanePace(lanes.Pace{Limit: 2, Period: time.Minute}, lanes.PaceRule{Prefix: "-", Pace: lanes.Pace{Limit: 1, Period: time.Minute}}),
		lanes.WithQueue("reply", lanes.QueueConfig{Ordered: true}))
	require.NoError(t, err)
	require.NoError(t, s.Inspector().SetLanePace(ctx, "7", lanes.Pace{Limit: 3, Period: time.Minute}))
	w := startClaimLoop(t, s, lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 5}, func(j lanes.Job) error {
		switch {
		case j.Group == "-3" && j.Attempts == 0:
			_, err := s.Nack(ctx, j.Lease, time.Minute, "retry later") // delayed set
			return err
		case j.Group == "-4":
			return s.Dead(ctx, j.Lease, "blocked")
		case j.Group == "5" && j.Queue == "reply":
			if _, err := s.Inspector().Park(ctx, j.Queue, j.Group, time.Hour); err != nil { // a 429
				return err
			}
			return s.Release(ctx, j.Lease)
		}
		return s.Ack(ctx, j.Lease)
	})
	m := lanes.NewMinter()
	var items []lanes.Item
	for _, g := range []string{"-1", "-2", "-3", "-4", "5", "6", "7"} {
		for i := 0; i < 4; i++ {
			items = append(items, lanes.Item{Group: g, ID: m.New(), Payload: []byte(g)})
		}
	}
	_, err = s.Enqueue(ctx, "notify", items)
	require.NoError(t, err)
	for _, g := range []string{"5", "6", "7"} {
		_, err = s.Enqueue(ctx, "reply", []lanes.Item{{Group: g, ID: m.New(), Payload: []byte("re")}})
		require.NoError(t, err)
	}
	// Replies first (5 is 429'd: parked and released), then the broadcast:
	// "-N" lanes 1 job each (rule pace 1), "5" and "6" 1 more (default pace
	// 2, shared with their reply), "7" 2 more (override 3). Then every lane
	// with work is parked (pace or 429) or its job delayed.
	for n := 0; n < 3+4+1+1+2; n++ {
		w.Next(t, 5*time.Second)
	}
	select {
	case j := <-w.Jobs:
		t.Fatalf("unexpected job %s of lane %s", j.ID, j.Group)
	case <-time.After(100 * time.Millisecond):
	}
	require.NoError(t, s.Inspector().Pause(ctx, time.Minute))
	_, err = s.ShareFloor(ctx, "claimer-1", 40*time.Millisecond) // {T}:s:floor:<epoch>
	require.NoError(t, err)
	_, _, err = s.Inspector().LowerBudget(ctx, "notify", "429 from several chats") // {T}:s:learned
	require.NoError(t, err)

	keys, err := valkeytest.Keys(ctx, c, "*")
	require.NoError(t, err)
	ks := s.Keys()
	want := slotOf(t, c, ks.Tag())
	for _, k := range keys {
		require.True(t, strings.HasPrefix(k, ks.Tag()+":"), "key %q outside the store's tag", k)
		require.Equal(t, want, slotOf(t, c, k), "key %q", k)
	}
	for _, prefix := range []string{ks.Rate(), ks.Pause(), ks.Shared("pacecfg"), ks.Shared("floor:"), ks.Shared("learned"), ks.Pace("-1"), ks.Pace("7"),
		ks.Queue("notify", "parked"), ks.Queue("reply", "parked"), ks.Queue("notify", "delayed"), ks.Queue("notify", "dead"),
		ks.Job("notify", ""), ks.Lane("notify", ""), ks.Lane("reply", "5")} {
		found := false
		for _, k := range keys {
			found = found || strings.HasPrefix(k, prefix)
		}
		require.True(t, found, "no %s key after the run (keys: %v)", prefix, keys)
	}
	c2, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"reply", "notify"}, Lease: time.Minute, Max: 1})
	require.NoError(t, err)
	require.Empty(t, c2.Jobs)
	require.Greater(t, c2.RetryIn, 59*time.Second, "paused")
	require.NoError(t, s.Inspector().Resume(ctx))
}
