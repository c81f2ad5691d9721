package lanes_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// A job Cancel finds in flight stays with its claimer, marked: whichever
// way its lease then ends without an ack (it expires, its claimer is found
// dead, the claimer releases, retries, postpones or dead-letters it, past
// MaxAttempts too), the job is dropped in that same call: never claimed
// again, not dead-lettered, its hash gone, counted once in the Cancel's
// tally and not in the settle's own Counting (a dead-lettering's "failed");
// the rest of its lane is served as before; cancelling it again, a late
// settle with its lease and a requeue find nothing. On an ordered and an
// unordered queue; with no tally the job is dropped all the same.
func TestAJobCancelledInFlightIsNeverClaimedAgainAndCountedOnceWhenItsLeaseEndsWithoutAnAck(t *testing.T) {
	t.Parallel()
	type end func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error)
	settled := func(err error) (lanes.Outcome, error) { return "", err }
	expire := func(ctx context.Context, s *lanes.Store, j lanes.Job, _ lanes.SettleOption) (lanes.Outcome, error) {
		rescore(t, s, j.Queue, "leases", string(j.ID), 1) // its deadline passed (1 ms after the epoch)
		return "", nil
	}
	cases := []struct {
		name        string
		maxAttempts int
		noTally     bool
		end         end
	}{
		{"its lease expires", 0, false, expire},
		{"its lease expires at MaxAttempts", 1, false, expire},
		{"its claimer is found dead", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, _ lanes.SettleOption) (lanes.Outcome, error) {
			// Its last heartbeat long ago (1 ms after the epoch).
			rdo(t, s, "ZADD", s.Keys().Queue(j.Queue, "claimers"), "1", "dies")
			n, err := s.RecoverDead(ctx, time.Minute, j.Queue)
			require.NoError(t, err)
			require.Equal(t, 1, n)
			return "", nil
		}},
		{"released", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, _ lanes.SettleOption) (lanes.Outcome, error) {
			return settled(s.Release(ctx, j.Lease))
		}},
		{"released, no tally", 0, true, func(ctx context.Context, s *lanes.Store, j lanes.Job, _ lanes.SettleOption) (lanes.Outcome, error) {
			return settled(s.Release(ctx, j.Lease))
		}},
		{"retried at once", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error) {
			return s.Nack(ctx, j.Lease, 0, "5xx", failed)
		}},
		{"retried after a delay", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error) {
			return s.Nack(ctx, j.Lease, time.Hour, "429", failed)
		}},
		{"retried at MaxAttempts", 1, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error) {
			return s.Nack(ctx, j.Lease, 0, "5xx", failed)
		}},
		{"postponed", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, _ lanes.SettleOption) (lanes.Outcome, error) {
			return settled(s.Postpone(ctx, j.Lease, time.Hour))
		}},
		{"dead-lettered", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error) {
			return settled(s.Dead(ctx, j.Lease, "403", failed))
		}},
		{"dead-lettered untried", 0, false, func(ctx context.Context, s *lanes.Store, j lanes.Job, failed lanes.SettleOption) (lanes.Outcome, error) {
			return settled(s.DeadUntried(ctx, j.Lease, "rest of a 403 batch", failed))
		}},
	}
	for _, ordered := range []bool{true, false} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("ordered=%v/%s", ordered, tc.name), func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: ordered, MaxAttempts: tc.maxAttempts}))
				k := s.Keys()
				ids := enqueueN(t, s, lanes.NewMinter(), "q", "A", 2)
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Claimer: "dies"})
				require.NoError(t, err)
				require.Len(t, c.Jobs, 1)
				held := c.Jobs[0]
				require.Equal(t, ids[0], held.ID)

				tally := lanes.Tally{Key: k.Tag() + ":bc", Field: "cancelled"}
				if tc.noTally {
					tally = lanes.Tally{}
				}
				failed := lanes.Counting(lanes.SettleTally{Key: k.Tag() + ":bc", Fields: []string{"failed"}})
				res, err := s.Cancel(ctx, "q", ids[:1], tally)
				require.NoError(t, err)
				require.Equal(t, lanes.CancelResult{InFlight: 1}, res)
				require.Zero(t, rint(t, s, "HGET", k.Tag()+":bc", "cancelled"), "not counted while in flight")

				out, err := tc.end(ctx, s, held, failed)
				require.NoError(t, err)
				if out != "" {
					require.Equal(t, lanes.Cancelled, out)
				}
				// The claim that reclaims an expired lease; else nothing
				// of the job is left to claim.
				next := claimOne(t, s, time.Hour, "q")
				require.Equal(t, ids[1], next.ID, "the rest of the lane is served")
				require.NoError(t, s.Ack(ctx, next.Lease))
				for range 3 {
					c := claim(t, s, 4, time.Hour, "q")
					require.Empty(t, c.Jobs, "the cancelled job is never claimed again")
				}
				require.Zero(t, rint(t, s, "EXISTS", k.Job("q", held.ID)), "its hash is gone")
				require.Zero(t, rint(t, s, "ZCARD", k.Queue("q", "dead")), "not dead-lettered")
				require.Zero(t, rint(t, s, "ZCARD", k.Queue("q", "delayed")), "not waiting to be retried")
				want := 1
				if tc.noTally {
					want = 0
				}
				require.Equal(t, want, rint(t, s, "HGET", k.Tag()+":bc", "cancelled"), "counted once, as cancelled")
				require.Zero(t, rint(t, s, "HGET", k.Tag()+":bc", "failed"), "not as failed")
				st, err := s.Inspector().Stats(ctx, "q", 0)
				require.NoError(t, err)
				require.Zero(t, st.Pending)
				require.Zero(t, st.InFlight)

				again, err := s.Cancel(ctx, "q", ids[:1], tally)
				require.NoError(t, err)
				require.Equal(t, lanes.CancelResult{Gone: 1}, again)
				require.ErrorIs(t, s.Ack(ctx, held.Lease), lanes.ErrNoJob, "a late ack finds nothing")
				_, err = s.Nack(ctx, held.Lease, 0, "late")
				require.ErrorIs(t, err, lanes.ErrNoJob)
				n, err := s.Inspector().RequeueDead(ctx, "q", held.ID)
				require.NoError(t, err)
				require.Zero(t, n)
				require.Equal(t, want, rint(t, s, "HGET", k.Tag()+":bc", "cancelled"), "still counted once")
			})
		}
	}
}

// A job Cancel finds in flight that its claimer then acks was delivered:
// the ack lands as usual, alone (counted by its own Counting, "sent") or
// riding on a claim, not counted in the Cancel's tally, and nothing of it
// is left.
func TestAJobCancelledInFlightThatIsAckedCountsAsSentNotCancelled(t *testing.T) {
	t.Parallel()
	for _, riding := range []bool{false, true} {
		t.Run(fmt.Sprintf("riding on a claim=%v", riding), func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true}))
			k := s.Keys()
			ids := enqueueN(t, s, lanes.NewMinter(), "q", "A", 1)
			held := claimOne(t, s, time.Hour, "q")
			tally := lanes.Tally{Key: k.Tag() + ":bc", Field: "cancelled"}
			res, err := s.Cancel(ctx, "q", ids, tally)
			require.NoError(t, err)
			require.Equal(t, lanes.CancelResult{InFlight: 1}, res)

			sent := lanes.Counting(lanes.SettleTally{Key: k.Tag() + ":bc", Fields: []string{"sent"}})
			if riding {
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 1, Ack: []lanes.Lease{held.Lease}})
				require.NoError(t, err)
				require.Empty(t, c.Jobs)
				require.Equal(t, []error{nil}, c.Acked)
			} else {
				require.NoError(t, s.Ack(ctx, held.Lease, sent))
				require.Equal(t, 1, rint(t, s, "HGET", k.Tag()+":bc", "sent"), "counted sent")
			}
			require.Zero(t, rint(t, s, "HGET", k.Tag()+":bc", "cancelled"), "delivered, not cancelled")
			require.Zero(t, rint(t, s, "EXISTS", k.Job("q", held.ID)))
			require.Empty(t, claim(t, s, 4, time.Hour, "q").Jobs)
		})
	}
}
