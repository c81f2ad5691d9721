package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Counting keeps the caller's tally in the settling call itself, exactly
// when the call settles the job: an Ack that lands counts and untracks, a
// stale or retried one counts nothing more; a Nack counts only when it
// dead-letters; Once counts an id once across paths; an expired hash is
// not brought back; a release never counts.
func TestCountingKeepsTheTallyExactlyWhenTheCallSettlesTheJob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	type step func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally)
	ack := func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
		require.NoError(t, s.Ack(ctx, j.Lease, lanes.Counting(tally)))
	}
	cases := []struct {
		name    string
		maxAtt  int
		once    bool
		expired bool
		settle  []step
		count   int  // the tally's field after the steps
		tracked bool // the job id still in the untrack set
		ttl     bool // the hash has a TTL renewed by the tally
	}{
		{name: "an ack counts once and untracks", settle: []step{ack}, count: 1, ttl: true},
		{name: "a retried ack whose first try landed counts nothing more", settle: []step{ack,
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				require.ErrorIs(t, s.Ack(ctx, j.Lease, lanes.Counting(tally)), lanes.ErrNoJob)
			}}, count: 1, ttl: true},
		{name: "a stale ack counts nothing", settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				stale := j.Lease
				stale.Token = "99"
				require.ErrorIs(t, s.Ack(ctx, stale, lanes.Counting(tally)), lanes.ErrStaleLease)
			}}, tracked: true},
		{name: "dead counts", settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				require.NoError(t, s.Dead(ctx, j.Lease, "blocked", lanes.Counting(tally)))
			}}, count: 1, ttl: true},
		{name: "dead-untried counts", settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				require.NoError(t, s.DeadUntried(ctx, j.Lease, "rest of batch", lanes.Counting(tally)))
			}}, count: 1, ttl: true},
		{name: "a nack that retries counts nothing", maxAtt: 3, settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				out, err := s.Nack(ctx, j.Lease, 0, "transient", lanes.Counting(tally))
				require.NoError(t, err)
				require.Equal(t, lanes.Queued, out)
			}}, tracked: true},
		{name: "a nack past max attempts counts", maxAtt: 1, settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				out, err := s.Nack(ctx, j.Lease, 0, "transient", lanes.Counting(tally))
				require.NoError(t, err)
				require.Equal(t, lanes.DeadLettered, out)
			}}, count: 1, ttl: true},
		{name: "a release counts nothing", settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				require.NoError(t, s.Release(ctx, j.Lease))
			}}, tracked: true},
		{name: "once: an id another path counted is not counted again", once: true, settle: []step{
			func(t *testing.T, s *lanes.Store, j lanes.Job, tally lanes.SettleTally) {
				rdo(t, s, "SADD", tally.Once, string(j.ID))
				require.NoError(t, s.Dead(ctx, j.Lease, "blocked", lanes.Counting(tally)))
			}}},
		{name: "an expired hash is not brought back, the id still untracked", expired: true, settle: []step{ack}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true, MaxAttempts: tc.maxAtt}))
			tag := s.Keys().Tag()
			tally := lanes.SettleTally{Key: tag + ":bc:1", Fields: []string{"s", "ps"}, Untrack: tag + ":bc:1:out", TTL: time.Hour}
			if tc.once {
				tally.Once = tag + ":bc:1:seen"
			}
			if !tc.expired {
				rdo(t, s, "HSET", tally.Key, "total", "1")
			}
			ids := enqueueN(t, s, lanes.NewMinter(), "q", "g", 1)
			rdo(t, s, "ZADD", tally.Untrack, "0", string(ids[0]))
			j := claimOne(t, s, time.Minute, "q")
			for _, st := range tc.settle {
				st(t, s, j, tally)
			}
			if tc.expired {
				require.Zero(t, rint(t, s, "EXISTS", tally.Key), "an expired tally hash is not brought back")
			} else {
				require.Equal(t, tc.count, rint(t, s, "HGET", tally.Key, "s"))
				require.Equal(t, tc.count, rint(t, s, "HGET", tally.Key, "ps"), "every field counts")
				require.Equal(t, tc.ttl, rint(t, s, "PTTL", tally.Key) > 0, "the TTL is renewed only by a count")
			}
			tracked := rint(t, s, "ZCARD", tally.Untrack) == 1
			require.Equal(t, tc.tracked, tracked, "the id leaves the untrack set exactly when the job is settled")
		})
	}
}

// A tally whose keys are outside the store's hash tag ("{tag}:" and a
// name: a longer or shorter tag, no ':' or no name are outside), a key without
// fields, fields or a once set without a key, or a negative TTL is refused
// before anything changes: the job stays leased.
func TestCountingRefusesATallyItCannotKeep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	tag := s.Keys().Tag()
	enqueueN(t, s, lanes.NewMinter(), "q", "g", 1)
	j := claimOne(t, s, time.Minute, "q")
	for _, bad := range []lanes.SettleTally{
		{Key: "other:bc", Fields: []string{"s"}},
		{Key: tag + ":bc"},
		{Key: tag + ":bc", Fields: []string{""}},
		{Fields: []string{"s"}},
		{Once: tag + ":seen"},
		{Key: tag + ":bc", Fields: []string{"s"}, Once: "seen"},
		{Key: tag + ":bc", Fields: []string{"s"}, Untrack: "{other}:out"},
		{Key: tag + ":bc", Fields: []string{"s"}, TTL: -time.Second},
		{Key: tag + ":", Fields: []string{"s"}},                                   // the tag and no name
		{Key: tag + "bc", Fields: []string{"s"}},                                  // no ':' after the tag
		{Key: tag[:len(tag)-1] + "x}:bc", Fields: []string{"s"}},                  // a longer tag that begins as the store's
		{Key: tag[1:] + ":bc", Fields: []string{"s"}},                             // no '{'
		{Key: "x" + tag[1:] + ":bc", Fields: []string{"s"}},                       // another byte for the '{'
		{Key: tag[:len(tag)-1] + "x:bc", Fields: []string{"s"}},                   // another byte for the '}'
		{Key: tag[:len(tag)-2] + "x}:bc", Fields: []string{"s"}},                  // the tag's length, another name
		{Key: tag + ":bc", Fields: []string{"s"}, Once: tag[:len(tag)-2] + "}:s"}, // a shorter tag
	} {
		require.ErrorIs(t, s.Ack(ctx, j.Lease, lanes.Counting(bad)), lanes.ErrInvalid, "%+v", bad)
		require.ErrorIs(t, s.Dead(ctx, j.Lease, "x", lanes.Counting(bad)), lanes.ErrInvalid, "%+v", bad)
	}
	require.Equal(t, 1, inflight(t, s, "q", "g"), "nothing changed")
	require.NoError(t, s.Ack(ctx, j.Lease))
}
