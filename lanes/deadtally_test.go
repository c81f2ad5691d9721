package lanes_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// deadTallies are two callers' tallies (two broadcasts: a hash, its seen
// set, its window) under s's tag: a's sets are named after its hash (stored
// as suffixes), b's apart from it (stored in full).
func deadTallies(s *lanes.Store) (a, b lanes.DeadTally) {
	tag := s.Keys().Tag()
	k := tag + ":bc:a"
	a = lanes.DeadTally{Key: k, Prefix: "f:", Once: k + ":seen", Untrack: k + ":out", TTL: time.Hour}
	b = lanes.DeadTally{Key: tag + ":bc:b", Prefix: "f:", Once: tag + ":seen:b", Untrack: tag + ":out:b", TTL: time.Hour}
	return a, b
}

// enqueueTallied puts n jobs on lane g of q, each carrying t (CountDead),
// and tracks their ids in t.Untrack; returns the ids in mint order.
func enqueueTallied(t *testing.T, s *lanes.Store, m *lanes.Minter, q, g string, n int, tally lanes.DeadTally) []lanes.JobID {
	t.Helper()
	items := make([]lanes.Item, n)
	ids := make([]lanes.JobID, n)
	for i := range items {
		ids[i] = m.New()
		items[i] = lanes.Item{Group: g, ID: ids[i], Payload: []byte("copy")}
		rdo(t, s, "ZADD", tally.Untrack, "0", string(ids[i]))
	}
	r, err := s.Enqueue(context.Background(), q, items, lanes.CountDead(tally))
	require.NoError(t, err)
	require.Equal(t, lanes.EnqueueResult{Added: n}, r)
	return ids
}

// A DeadLane sweep counts each job it dead-letters that carries a dead
// tally in that job's own tally (two broadcasts on one lane, each its own
// hash), in the sweep's script: under CountedAs's code (else the reason),
// once per id across paths (the Once set), never in a hash that expired,
// each swept id leaving its untrack set; a job without a tally and a job in
// flight count nothing.
func TestDeadLaneCountsEachSweptJobInItsOwnTallyOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name      string
		countedAs string // "" : no CountedAs option
		seen      int    // of a's jobs, how many another path counted first
		expired   bool   // a's hash expired before the sweep
		inFlight  bool   // a's first job is claimed before the sweep
		field     string
		a, b      int // the counts in a's and b's field after the sweep
		aTracked  int // a's ids left in its untrack set
	}{
		{name: "each job in its own tally under CountedAs's code", countedAs: "forbidden", field: "f:forbidden", a: 2, b: 1},
		{name: "without CountedAs the reason is the code", field: "f:blocked", a: 2, b: 1},
		{name: "an id another path counted is not counted again", countedAs: "forbidden", seen: 1, field: "f:forbidden", a: 1, b: 1},
		{name: "an expired hash is not brought back, the ids still untracked", countedAs: "forbidden", expired: true, field: "f:forbidden", b: 1},
		{name: "a job in flight is neither swept nor counted", countedAs: "forbidden", inFlight: true, field: "f:forbidden", a: 1, b: 1, aTracked: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			a, b := deadTallies(s)
			if !tc.expired {
				rdo(t, s, "HSET", a.Key, "t", "2")
			}
			rdo(t, s, "HSET", b.Key, "t", "1")
			m := lanes.NewMinter()
			aIDs := enqueueTallied(t, s, m, "q", "g", 2, a)
			plain := enqueueN(t, s, m, "q", "g", 1)
			bIDs := enqueueTallied(t, s, m, "q", "g", 1, b)
			for _, id := range aIDs[:tc.seen] {
				rdo(t, s, "SADD", a.Once, string(id))
			}
			if tc.inFlight {
				require.Equal(t, aIDs[0], claimOne(t, s, time.Minute, "q").ID)
			}
			var opts []lanes.DeadLaneOption
			if tc.countedAs != "" {
				opts = append(opts, lanes.CountedAs(tc.countedAs))
			}
			swept, err := s.Inspector().DeadLane(ctx, "q", "g", "blocked", opts...)
			require.NoError(t, err)
			want := append(append(append([]lanes.JobID{}, aIDs...), plain...), bIDs...)
			if tc.inFlight {
				want = want[1:]
			}
			require.Equal(t, want, swept, "the sweep's ids, in lane order")

			if tc.expired {
				require.Zero(t, rint(t, s, "EXISTS", a.Key), "an expired tally hash is not brought back")
				require.Zero(t, rint(t, s, "EXISTS", a.Once), "nor its once set")
			} else {
				require.Equal(t, tc.a, rint(t, s, "HGET", a.Key, tc.field), "a's count")
				require.Positive(t, rint(t, s, "PTTL", a.Key), "a count renews the hash's TTL")
			}
			require.Equal(t, tc.b, rint(t, s, "HGET", b.Key, tc.field), "b's count, in b's own hash")
			require.Equal(t, 1, rint(t, s, "HLEN", b.Key)-1, "one field counted in b, nothing else")
			require.Equal(t, tc.aTracked, rint(t, s, "ZCARD", a.Untrack), "a's swept ids left its window")
			require.Zero(t, rint(t, s, "ZCARD", b.Untrack), "b's swept id left its window")
		})
	}
}

// A job whose lease expires for the MaxAttempts-th time is dead-lettered
// inside a Claim and counted there, in the dead tally it carries, under
// ReasonLeaseExpired: once per id across paths (a later stale Dead of its
// old claimer counts nothing more), never in a hash that expired, and the
// id leaves its untrack set; an expiry below MaxAttempts counts nothing
// (the job is back on its lane).
func TestALeaseExpiredPastMaxAttemptsCountsItsJobInItsTally(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	field := "f:" + lanes.ReasonLeaseExpired
	cases := []struct {
		name      string
		maxAtt    int
		expiries  int
		seen      bool // another path counted the id first
		expired   bool // the tally's hash expired first
		staleDead bool // the old claimer's Dead (with its own tally, the same Once) after the reap
		count     int
		dead      bool // the job is a dead letter at the end
		tracked   bool // the id still in the untrack set
	}{
		{name: "the last expiry counts the job", maxAtt: 2, expiries: 2, count: 1, dead: true},
		{name: "an expiry below max attempts counts nothing", maxAtt: 3, expiries: 2, tracked: true},
		{name: "an id another path counted is not counted again", maxAtt: 1, expiries: 1, seen: true, dead: true},
		{name: "an expired hash is not brought back, the id still untracked", maxAtt: 1, expiries: 1, expired: true, dead: true},
		{name: "the old claimer's stale dead-lettering counts nothing more", maxAtt: 1, expiries: 1, staleDead: true, count: 1, dead: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t, lanes.WithQueue("q", lanes.QueueConfig{Ordered: true, MaxAttempts: tc.maxAtt}))
			a, _ := deadTallies(s)
			if !tc.expired {
				rdo(t, s, "HSET", a.Key, "t", "1")
			}
			ids := enqueueTallied(t, s, lanes.NewMinter(), "q", "g", 1, a)
			if tc.seen {
				rdo(t, s, "SADD", a.Once, string(ids[0]))
			}
			var last lanes.Job
			for range tc.expiries {
				last = claimOne(t, s, time.Minute, "q")
				expireNow(t, s, "q", last.ID)
			}
			c := claim(t, s, 1, time.Minute, "q") // reclaims the last expiry
			require.Equal(t, tc.dead, len(c.Jobs) == 0, "served again only below max attempts")
			if tc.staleDead {
				own := lanes.SettleTally{Key: a.Key, Fields: []string{"f:max attempts"}, Once: a.Once, Untrack: a.Untrack, TTL: time.Hour}
				require.ErrorIs(t, s.Dead(ctx, last.Lease, "late", lanes.Counting(own)), lanes.ErrStaleLease)
				require.Zero(t, rint(t, s, "HGET", a.Key, "f:max attempts"), "the stale call counts nothing")
			}
			dl, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{IDs: ids})
			require.NoError(t, err)
			require.Equal(t, tc.dead, len(dl) == 1, "dead-lettered")
			if tc.dead {
				require.Equal(t, lanes.ReasonLeaseExpired, dl[0].Reason)
			}
			if tc.expired {
				require.Zero(t, rint(t, s, "EXISTS", a.Key), "an expired tally hash is not brought back")
			} else {
				require.Equal(t, tc.count, rint(t, s, "HGET", a.Key, field))
				require.Equal(t, tc.count == 1, rint(t, s, "PTTL", a.Key) > 0, "the TTL is renewed only by a count")
			}
			require.Equal(t, tc.tracked, rint(t, s, "ZCARD", a.Untrack) == 1, "the id leaves the untrack set exactly when it is dead-lettered")
		})
	}
}

// CountDead writes the tally into every new job the call adds (chunks,
// dedupe, cursor and a repeated id alike) and none into a job that existed
// already, or into a job enqueued without it.
func TestCountDeadStoresTheTallyInEveryNewJobOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cases := []struct {
		name  string
		n     int  // items
		dup   bool // the last item repeats the first's id
		opts  func(s *lanes.Store) []lanes.EnqueueOption
		added int
	}{
		{name: "plain, over one chunk", n: 501, added: 501},
		{name: "a repeated id is a duplicate", n: 3, dup: true, added: 2},
		{name: "with dedupe", n: 2, added: 2, opts: func(s *lanes.Store) []lanes.EnqueueOption {
			return []lanes.EnqueueOption{lanes.Dedupe(s.Keys().Tag()+":once:1", time.Hour)}
		}},
		{name: "at a cursor", n: 2, added: 2, opts: func(s *lanes.Store) []lanes.EnqueueOption {
			return []lanes.EnqueueOption{lanes.AtCursor(lanes.Cursor{Key: s.Keys().Tag() + ":bc:a", Field: "cur", To: "1", Count: "q"})}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			a, _ := deadTallies(s)
			m := lanes.NewMinter()
			before := enqueueN(t, s, m, "q", "g", 1) // exists already, carries nothing
			items := make([]lanes.Item, tc.n)
			for i := range items {
				items[i] = lanes.Item{Group: "g", ID: m.New(), Payload: []byte("x")}
			}
			if tc.dup {
				items[tc.n-1].ID = items[0].ID
			}
			items = append(items, lanes.Item{Group: "g", ID: before[0], Payload: []byte("x")})
			var opts []lanes.EnqueueOption
			if tc.opts != nil {
				opts = tc.opts(s)
			}
			r, err := s.Enqueue(ctx, "q", items, append(opts, lanes.CountDead(a))...)
			require.NoError(t, err)
			require.Equal(t, tc.added, r.Added)
			for _, it := range items[:tc.n] {
				v, err := rdo(t, s, "HGET", s.Keys().Job("q", it.ID), "y").ToString()
				require.NoError(t, err, "job %s carries the tally", it.ID)
				require.Equal(t, "3600000\nf:\n"+a.Key+"\n+:seen\n+:out", v, "sets named after the hash stored as suffixes")
			}
			require.Zero(t, rint(t, s, "HEXISTS", s.Keys().Job("q", before[0]), "y"), "a job that existed is left as it was")
		})
	}
}

// A dead tally outside the store's hash tag, with a newline, with a
// negative TTL or with Coalesce is refused before anything is written, and
// so is DeadLane CountedAs an empty code.
func TestCountDeadRefusesATallyItCannotKeep(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t)
	tag := s.Keys().Tag()
	it := []lanes.Item{{Group: "g", ID: lanes.NewMinter().New(), Payload: []byte("x")}}
	for _, bad := range []struct {
		name string
		opts []lanes.EnqueueOption
	}{
		{"no key", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Prefix: "f:"})}},
		{"a key outside the tag", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Key: "other:bc"})}},
		{"a once set outside the tag", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Key: tag + ":bc", Once: "seen"})}},
		{"an untrack set outside the tag", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Key: tag + ":bc", Untrack: "{x}:out"})}},
		{"a newline", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Key: tag + ":bc", Prefix: "f\n"})}},
		{"a negative ttl", []lanes.EnqueueOption{lanes.CountDead(lanes.DeadTally{Key: tag + ":bc", TTL: -time.Second})}},
		{"with coalesce", []lanes.EnqueueOption{lanes.Coalesce("n", time.Minute), lanes.CountDead(lanes.DeadTally{Key: tag + ":bc"})}},
	} {
		_, err := s.Enqueue(ctx, "q", it, bad.opts...)
		require.ErrorIs(t, err, lanes.ErrInvalid, bad.name)
	}
	require.Empty(t, tagKeys(t, s), "nothing written")
	_, err := s.Inspector().DeadLane(ctx, "q", "g", "blocked", lanes.CountedAs(""))
	require.ErrorIs(t, err, lanes.ErrInvalid)
}
