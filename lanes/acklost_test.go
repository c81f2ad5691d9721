package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// lostEnv is one job whose claimer A delivered it under a lease it then
// lost, and the tally its delivery is counted in ("sent"), its failures
// ("failed") and a Cancel's ("cancelled").
type lostEnv struct {
	t     *testing.T
	ctx   context.Context
	s     *lanes.Store
	id    lanes.JobID
	a     lanes.Job // A's claim, its lease lost
	bc    string    // the tally hash
	sent  lanes.SettleOption
	fail  lanes.SettleOption
	tally lanes.Tally // a Cancel's
}

// reclaimOnly reclaims the queue's expired leases without handing any job
// out: a claim of the queue while it is paused runs its maintenance only.
func (e *lostEnv) reclaimOnly() {
	e.t.Helper()
	_, err := e.s.Inspector().PauseQueue(e.ctx, "q", "test")
	require.NoError(e.t, err)
	require.Empty(e.t, claim(e.t, e.s, 1, time.Hour, "q").Jobs)
	_, err = e.s.Inspector().ResumeQueue(e.ctx, "q")
	require.NoError(e.t, err)
}

// takenByB expires A's lease and has claimer B claim the job again (the
// claim reclaims it first): B holds it under a lease of an hour.
func (e *lostEnv) takenByB() lanes.Job {
	e.t.Helper()
	expireNow(e.t, e.s, "q", e.id)
	b := claimOne(e.t, e.s, time.Hour, "q")
	require.Equal(e.t, e.id, b.ID)
	require.NotEqual(e.t, e.a.Token, b.Token)
	return b
}

func (e *lostEnv) count(field string) int {
	e.t.Helper()
	return rint(e.t, e.s, "HGET", e.bc, field)
}

// A job delivered under a lease since lost is settled by what is known
// (Store.AckLost), counted sent exactly once overall and never cancelled
// nor failed, whatever became of it: waiting again on its lane or in the
// delayed set (the chaos seed-29 repro: a 50 ms lease expired, claimer B
// reclaimed then released it, A's Ack answered ErrStaleLease; a Cancel of
// its broadcast then counted it cancelled, 0 sent) it is acked now and a
// Cancel finds nothing; held by claimer B it is marked, and whichever way
// B's lease ends (an ack, a release, a retry, a dead-lettering, an expiry,
// also past MaxAttempts, a Cancel before or after the mark) it is counted
// once, as sent, and never claimed again; settled elsewhere (B acked it) it
// is not counted again; a dead letter and a payload replaced since A's
// claim are left as they are; a second AckLost counts nothing more.
func TestAJobDeliveredUnderALostLeaseIsCountedSentOnceWhateverBecameOfIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  lanes.QueueConfig
		// coalesce enqueues the job under a coalesce key (its payload
		// replaceable while it waits); replacedFirst replaces its payload
		// before A's claim.
		coalesce, replacedFirst bool
		// lose loses A's lease and leaves the job as the case says;
		// it returns B's claim when B holds it.
		lose func(e *lostEnv) *lanes.Job
		// cancelFirst cancels the job (its broadcast stopped) before
		// A's AckLost.
		cancelFirst bool
		ackErr      error // A's Ack
		want        lanes.LostAck
		wantErr     error
		// end ends B's lease after A's AckLost (nil: B holds none, or
		// it is left as it is).
		end func(e *lostEnv, b lanes.Job)
		// twice calls AckLost again after the first.
		twice               bool
		sent, failed, cncld int
		dead, left          int // dead letters, jobs left waiting
	}{
		{name: "waiting again: its 50 ms lease expired, claimer B reclaimed and released it", ackErr: lanes.ErrStaleLease,
			lose: func(e *lostEnv) *lanes.Job {
				waitServerPast(e.t, e.s, e.a.Deadline)
				b := claimOne(e.t, e.s, time.Hour, "q")
				require.Equal(e.t, e.id, b.ID)
				require.NoError(e.t, e.s.Release(e.ctx, b.Lease))
				return nil
			}, want: lanes.LostWaiting, sent: 1},
		{name: "waiting again: reclaimed, nobody claimed it", ackErr: lanes.ErrStaleLease,
			lose: func(e *lostEnv) *lanes.Job {
				expireNow(e.t, e.s, "q", e.id)
				e.reclaimOnly()
				return nil
			}, want: lanes.LostWaiting, sent: 1},
		{name: "waiting again: in an unordered queue's delayed set after B's retry", ackErr: lanes.ErrStaleLease,
			lose: func(e *lostEnv) *lanes.Job {
				b := e.takenByB()
				out, err := e.s.Nack(e.ctx, b.Lease, time.Hour, "5xx")
				require.NoError(e.t, err)
				require.Equal(e.t, lanes.Delayed, out)
				return nil
			}, want: lanes.LostWaiting, sent: 1},
		{name: "waiting again, retried: the second call finds no job", ackErr: lanes.ErrStaleLease, twice: true,
			lose: func(e *lostEnv) *lanes.Job {
				expireNow(e.t, e.s, "q", e.id)
				e.reclaimOnly()
				return nil
			}, want: lanes.LostWaiting, sent: 1},
		{name: "held by B, who acks it", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Ack(e.ctx, b.Lease, e.sent)) }},
		{name: "held by B, who releases it", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Release(e.ctx, b.Lease)) }},
		{name: "held by B, who retries it", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end: func(e *lostEnv, b lanes.Job) {
				out, err := e.s.Nack(e.ctx, b.Lease, 0, "5xx", e.fail)
				require.NoError(e.t, err)
				require.Equal(e.t, lanes.Delivered, out)
			}},
		{name: "held by B, who postpones it", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Postpone(e.ctx, b.Lease, time.Hour)) }},
		{name: "held by B, who dead-letters it", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Dead(e.ctx, b.Lease, "403", e.fail)) }},
		{name: "held by B, whose lease expires", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end: func(e *lostEnv, b lanes.Job) {
				expireNow(e.t, e.s, "q", b.ID)
				require.Empty(e.t, claim(e.t, e.s, 4, time.Hour, "q").Jobs)
			}},
		{name: "held by B, whose lease expires at MaxAttempts", cfg: lanes.QueueConfig{MaxAttempts: 2},
			ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end: func(e *lostEnv, b lanes.Job) {
				expireNow(e.t, e.s, "q", b.ID)
				require.Empty(e.t, claim(e.t, e.s, 4, time.Hour, "q").Jobs)
			}},
		{name: "held by B, marked twice: the second call counts nothing", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked,
			twice: true, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Release(e.ctx, b.Lease)) }},
		{name: "held by B, cancelled in flight before the mark, then released", ackErr: lanes.ErrStaleLease,
			want: lanes.LostMarked, cancelFirst: true, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end:  func(e *lostEnv, b lanes.Job) { require.NoError(e.t, e.s.Release(e.ctx, b.Lease)) }},
		{name: "settled elsewhere: B acked it", ackErr: lanes.ErrNoJob, wantErr: lanes.ErrNoJob, sent: 1,
			lose: func(e *lostEnv) *lanes.Job {
				b := e.takenByB()
				require.NoError(e.t, e.s.Ack(e.ctx, b.Lease, e.sent))
				return nil
			}},
		{name: "a dead letter: its lease expired at MaxAttempts", cfg: lanes.QueueConfig{MaxAttempts: 1},
			ackErr: lanes.ErrStaleLease, want: lanes.LostDead, dead: 1,
			lose: func(e *lostEnv) *lanes.Job {
				expireNow(e.t, e.s, "q", e.id)
				e.reclaimOnly()
				return nil
			}},
		{name: "its payload replaced since A's claim: the new one still goes out", coalesce: true,
			ackErr: lanes.ErrStaleLease, want: lanes.LostReplaced, left: 1,
			lose: func(e *lostEnv) *lanes.Job {
				expireNow(e.t, e.s, "q", e.id)
				e.reclaimOnly()
				r, err := e.s.Enqueue(e.ctx, "q", []lanes.Item{{Group: "A", ID: lanes.NewMinter().New(), Payload: []byte("newer")}},
					lanes.Coalesce("co", time.Hour))
				require.NoError(e.t, err)
				require.Equal(e.t, 1, r.Coalesced)
				return nil
			}},
		{name: "its payload replaced before A's claim: what A delivered is what waits", coalesce: true, replacedFirst: true,
			ackErr: lanes.ErrStaleLease, want: lanes.LostWaiting, sent: 1,
			lose: func(e *lostEnv) *lanes.Job {
				expireNow(e.t, e.s, "q", e.id)
				e.reclaimOnly()
				return nil
			}},
		{name: "held by B, whose claimer is found dead", ackErr: lanes.ErrStaleLease, want: lanes.LostMarked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { b := e.takenByB(); return &b },
			end: func(e *lostEnv, b lanes.Job) {
				// B's job records no claimer; name one, silent since 1 ms
				// after the epoch.
				rdo(e.t, e.s, "HSET", e.s.Keys().Job("q", b.ID), "o", "b")
				rdo(e.t, e.s, "ZADD", e.s.Keys().Queue("q", "claimers"), "1", "b")
				n, err := e.s.RecoverDead(e.ctx, time.Minute, "q")
				require.NoError(e.t, err)
				require.Equal(e.t, 1, n)
				require.Empty(e.t, claim(e.t, e.s, 4, time.Hour, "q").Jobs)
			}},
		{name: "its lease live after all: an ordinary ack", want: lanes.LostAcked, sent: 1,
			lose: func(e *lostEnv) *lanes.Job { return nil }},
	}
	for _, ordered := range []bool{true, false} {
		for _, tc := range cases {
			if ordered && tc.name == "waiting again: in an unordered queue's delayed set after B's retry" {
				continue
			}
			t.Run(map[bool]string{true: "ordered", false: "unordered"}[ordered]+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				ctx := t.Context()
				cfg := tc.cfg
				cfg.Ordered = ordered
				s := newStore(t, lanes.WithQueue("q", cfg))
				bc := s.Keys().Tag() + ":bc"
				e := &lostEnv{t: t, ctx: ctx, s: s, bc: bc,
					sent:  lanes.Counting(lanes.SettleTally{Key: bc, Fields: []string{"sent"}}),
					fail:  lanes.Counting(lanes.SettleTally{Key: bc, Fields: []string{"failed"}}),
					tally: lanes.Tally{Key: bc, Field: "cancelled"}}
				require.NoError(t, rdo(t, s, "HSET", bc, "total", "1").Error())
				var opts []lanes.EnqueueOption
				if tc.coalesce {
					opts = append(opts, lanes.Coalesce("co", time.Hour))
				}
				e.id = lanes.NewMinter().New()
				_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: e.id, Payload: []byte("copy")}}, opts...)
				require.NoError(t, err)
				if tc.replacedFirst {
					r, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "A", ID: lanes.NewMinter().New(), Payload: []byte("newer")}}, opts...)
					require.NoError(t, err)
					require.Equal(t, 1, r.Coalesced)
				}
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: 50 * time.Millisecond, Max: 1})
				require.NoError(t, err)
				require.Len(t, c.Jobs, 1)
				e.a = c.Jobs[0]

				b := tc.lose(e)
				if tc.cancelFirst {
					res, err := s.Cancel(ctx, "q", []lanes.JobID{e.id}, e.tally)
					require.NoError(t, err)
					require.Equal(t, lanes.CancelResult{InFlight: 1}, res)
				}
				if tc.ackErr != nil {
					require.ErrorIs(t, s.Ack(ctx, e.a.Lease, e.sent), tc.ackErr, "A's ack")
				}
				got, err := s.AckLost(ctx, e.a.Lease, e.sent)
				if tc.wantErr != nil {
					require.ErrorIs(t, err, tc.wantErr)
				} else {
					require.NoError(t, err)
					require.Equal(t, tc.want, got)
				}
				if tc.twice {
					again, err := s.AckLost(ctx, e.a.Lease, e.sent)
					if err == nil {
						require.Equal(t, lanes.LostKnown, again)
					} else {
						require.ErrorIs(t, err, lanes.ErrNoJob)
					}
				}
				if b != nil && tc.want == lanes.LostMarked {
					// Marked, not yet counted: B holds it.
					require.Zero(t, e.count("sent"), "not counted while B holds it")
					if !tc.cancelFirst {
						res, err := s.Cancel(ctx, "q", []lanes.JobID{e.id}, e.tally)
						require.NoError(t, err)
						require.Equal(t, lanes.CancelResult{Gone: 1}, res, "a Cancel leaves a job known delivered alone")
					}
				}
				if tc.end != nil {
					tc.end(e, *b)
				}
				if tc.left == 0 {
					for range 2 {
						require.Empty(t, claim(t, s, 4, time.Hour, "q").Jobs, "never claimed again")
					}
				}
				// The broadcast is stopped: its Cancel finds the job only
				// when it is still to be sent.
				res, err := s.Cancel(ctx, "q", []lanes.JobID{e.id}, e.tally)
				require.NoError(t, err)
				require.Equal(t, tc.left, res.Cancelled)
				require.Equal(t, tc.sent, e.count("sent"), "sent")
				require.Equal(t, tc.failed, e.count("failed"), "failed")
				require.Equal(t, tc.left, e.count("cancelled"), "cancelled")
				st, err := s.Inspector().Stats(ctx, "q", 0)
				require.NoError(t, err)
				require.Zero(t, st.Pending, "pending")
				require.Zero(t, st.InFlight, "in flight")
				require.Zero(t, st.Delayed, "delayed")
				require.Equal(t, tc.dead, st.Dead, "dead letters")
				if tc.dead == 0 {
					require.Zero(t, rint(t, s, "EXISTS", s.Keys().Job("q", e.id)), "nothing of the job is left")
				}
			})
		}
	}
}
