package lanes_test

import (
	"context"
	"math"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// ackAllStore is a store with an ordered paced queue with a budget of its
// own outside the global one ("paid", a paid broadcast's) and an unordered
// queue in the global budget ("reply"), every lane paced (per minute: a
// settle keeps the send logs a minute, longer than the claim's lease).
func ackAllStore(t *testing.T) *lanes.Store {
	t.Helper()
	return newStore(t,
		lanes.WithQueue("paid", lanes.QueueConfig{Ordered: true, Rate: 1000, Window: time.Second, OutsideGlobal: true}),
		lanes.WithQueue("reply", lanes.QueueConfig{}),
		lanes.WithGlobalRate(1000, time.Second),
		lanes.WithLanePace(lanes.Pace{Limit: 100, Period: time.Minute}))
}

// logicalState is every key of s's tag with the tag left out, as what it
// holds: a sorted set's members with "inf" or "t" for a finite score (send
// logs are scored by the settle's time), a hash's fields, a set's members,
// a list's items, a string's value ("t" when it is a time: a due time),
// a budget's proof with "e" for its epoch (common.lua proof_read), and
// whether it has an expiry, within 30 s or after.
func logicalState(t *testing.T, s *lanes.Store) map[string]string {
	t.Helper()
	out := map[string]string{}
	tag := s.Keys().Pattern()
	tag = tag[:len(tag)-1] + ":"
	for _, k := range tagKeys(t, s) {
		var v []string
		switch typ, _ := rdo(t, s, "TYPE", k).ToString(); typ {
		case "zset":
			zs, err := rdo(t, s, "ZRANGE", k, "0", "-1", "WITHSCORES").AsZScores()
			require.NoError(t, err)
			for _, z := range zs {
				score := "t"
				if math.IsInf(z.Score, 1) {
					score = "inf"
				}
				v = append(v, z.Member+"="+score)
			}
		case "hash":
			kv, err := rdo(t, s, "HGETALL", k).AsStrMap()
			require.NoError(t, err)
			for f, val := range kv {
				if f == "t" || f == "e" && strings.Contains(k, ":job:") {
					val = "t" // a claim time; the pace log's expiry its claim gave it
				}
				if strings.HasSuffix(k, ":s:learned") && strings.HasSuffix(f, ":ok") {
					// A budget's proof "E M D C T X": its epoch E is the
					// time (now ÷ 10 s), which two stores filled one after
					// the other may read apart on a busy host.
					if _, rest, ok := strings.Cut(val, " "); ok {
						val = "e " + rest
					}
				}
				v = append(v, f+"="+val)
			}
		case "set":
			v = rstrs(t, s, "SMEMBERS", k)
		case "list":
			v = rstrs(t, s, "LRANGE", k, "0", "-1")
		case "string":
			val, _ := rdo(t, s, "GET", k).ToString()
			if strings.HasSuffix(k, ":due") {
				val = "t"
			}
			v = []string{val}
		default:
			v = []string{typ}
		}
		sort.Strings(v)
		ttl := "none"
		if ms := rint(t, s, "PTTL", k); ms > 30_000 {
			ttl = "expires after 30s"
		} else if ms >= 0 {
			ttl = "expires within 30s"
		}
		out[strings.TrimPrefix(k, tag)] = strings.Join(v, ",") + "|" + ttl
	}
	return out
}

// AckAll acks a batch of leases of two queues, each with its tally (a
// hash, a once set, an untrack set), a stale token, an unknown job and a
// lease acked twice among them, and two and three leases of one lane (an
// unordered lane at its lane limit, which the first of its acks brings
// back to the ring, and one claimed twice by one claim), and leaves the
// store exactly as one Ack per lease with Counting would (send logs
// settled, in-flight counts, due times, rings, jobs deleted, tallies
// counted once, expiries set), answering each ack as Ack does (the second
// ack of a lease: no job). A tally hash that does not exist is not
// brought back.
func TestAckAllLeavesTheStoreAsOneAckPerLeaseWould(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := lanes.NewMinter()
	type job struct {
		queue, group string
		id           lanes.JobID
	}
	var jobs []job
	for i, g := range []string{"100", "101", "102", "103", "-5"} {
		jobs = append(jobs, job{"paid", g, m.New()}, job{"paid", g, m.New()})
		if i < 3 {
			jobs = append(jobs, job{"reply", g, m.New()})
		}
	}
	// Reply lane 100 holds three (its lane limit 2: two claimed, one
	// left), lane 101 two (both claimed, the lane visited twice).
	jobs = append(jobs, job{"reply", "100", m.New()}, job{"reply", "100", m.New()}, job{"reply", "101", m.New()})
	run := func(batch bool) (*lanes.Store, []error) {
		s := ackAllStore(t)
		require.NoError(t, s.Inspector().SetLaneLimit(ctx, "reply", "100", 2))
		tag := strings.TrimSuffix(s.Keys().Pattern(), "*") + ":"
		for _, j := range jobs {
			_, err := s.Enqueue(ctx, j.queue, []lanes.Item{{Group: j.group, ID: j.id, Payload: []byte("x")}})
			require.NoError(t, err)
		}
		// The progress hash exists; the "gone" one does not (expired).
		require.NoError(t, rdo(t, s, "HSET", tag+"progress", "sent", "0").Error())
		require.NoError(t, rdo(t, s, "SADD", tag+"once", string(jobs[2].id)).Error()) // counted before
		for _, j := range jobs {
			require.NoError(t, rdo(t, s, "ZADD", tag+"out", "1", string(j.id)).Error())
		}
		var acks []lanes.Acking
		for _, q := range []string{"paid", "reply"} {
			c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{q}, Lease: 5 * time.Second, Max: 16, Lanes: 16})
			require.NoError(t, err)
			if q == "reply" {
				byLane := map[string]int{}
				for _, jb := range c.Jobs {
					byLane[jb.Group]++
				}
				require.Equal(t, map[string]int{"100": 2, "101": 2, "102": 1}, byLane)
			}
			for _, jb := range c.Jobs {
				tally := lanes.SettleTally{Key: tag + "progress", Fields: []string{"sent", "paid"}, Once: tag + "once",
					Untrack: tag + "out", TTL: time.Hour}
				if jb.Group == "-5" {
					tally = lanes.SettleTally{Key: tag + "gone", Fields: []string{"sent"}, TTL: time.Hour}
				}
				if jb.Group == "103" {
					tally = lanes.SettleTally{}
				}
				if jb.Group == "101" {
					tally.Fields = []string{"sent"} // the same keys, fewer fields
				}
				if jb.Group == "102" {
					tally = lanes.SettleTally{Untrack: tag + "out"} // untracked, counted nowhere
				}
				jb.Floor = 7 * time.Millisecond
				acks = append(acks, lanes.Acking{Lease: jb.Lease, Tally: tally})
			}
		}
		acks[1].Lease.Token = "999"                                                                   // stale
		acks = append(acks, lanes.Acking{Lease: lanes.Lease{Queue: "paid", ID: m.New(), Token: "1"}}) // no such job
		acks = append(acks, lanes.Acking{Lease: acks[0].Lease})                                       // acked twice
		if batch {
			errs, err := s.AckAll(ctx, acks)
			require.NoError(t, err)
			return s, errs
		}
		errs := make([]error, len(acks))
		for i, a := range acks {
			errs[i] = s.Ack(ctx, a.Lease, lanes.Counting(a.Tally))
		}
		return s, errs
	}
	one, oneErrs := run(false)
	all, allErrs := run(true)
	require.Len(t, allErrs, len(oneErrs))
	for i := range oneErrs {
		if oneErrs[i] == nil {
			require.NoError(t, allErrs[i], "ack %d", i)
			continue
		}
		require.Error(t, allErrs[i], "ack %d", i)
		require.Equal(t, errorKind(oneErrs[i]), errorKind(allErrs[i]), "ack %d", i)
	}
	require.ErrorIs(t, allErrs[1], lanes.ErrStaleLease)
	require.ErrorIs(t, allErrs[len(allErrs)-2], lanes.ErrNoJob)
	require.ErrorIs(t, allErrs[len(allErrs)-1], lanes.ErrNoJob, "a lease acked twice")
	want := logicalState(t, one)
	require.Equal(t, want, logicalState(t, all))
	require.Contains(t, want["q:reply:ring"], "100", "the lane its first ack brought under its lane limit")
	require.Contains(t, want, "progress")
	require.NotContains(t, want, "gone", "an expired tally is not brought back")
}

// errorKind names err's lanes sentinel.
func errorKind(err error) string {
	switch {
	case err == nil:
		return "nil"
	case strings.Contains(err.Error(), lanes.ErrStaleLease.Error()):
		return "stale"
	case strings.Contains(err.Error(), lanes.ErrNoJob.Error()):
		return "no job"
	}
	return err.Error()
}

// A settle keeps its send logs for the longest window they serve (the
// store's log TTL: here the lane pace's minute) from the settle: it
// extends a log's expiry set by the claim (its lease plus the window),
// never shortens a longer one, and gives none to a log without one. Ack
// and AckAll alike.
func TestASettleExtendsASendLogsExpiryNeverShortensItNorGivesOne(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, batch := range []bool{false, true} {
		for _, tc := range []struct {
			name   string
			before func(s *lanes.Store, key string)
			want   func(t *testing.T, ttl int)
		}{
			{"extended", func(*lanes.Store, string) {}, func(t *testing.T, ttl int) {
				require.Greater(t, ttl, 50_000, "the pace's minute from the settle")
			}},
			{"never shortened", func(s *lanes.Store, key string) {
				require.NoError(t, rdo(t, s, "PEXPIRE", key, "3600000").Error())
			}, func(t *testing.T, ttl int) { require.Greater(t, ttl, 3_500_000) }},
			{"none given", func(s *lanes.Store, key string) {
				require.NoError(t, rdo(t, s, "PERSIST", key).Error())
			}, func(t *testing.T, ttl int) { require.Equal(t, -1, ttl) }},
		} {
			t.Run(tc.name+map[bool]string{false: " by Ack", true: " by AckAll"}[batch], func(t *testing.T) {
				s := newStore(t, lanes.WithGlobalRate(1000, time.Second), lanes.WithLanePace(lanes.Pace{Limit: 100, Period: time.Minute}))
				enqueueN(t, s, lanes.NewMinter(), "q", "7", 1)
				c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: 2 * time.Second, Max: 1})
				require.NoError(t, err)
				require.Len(t, c.Jobs, 1)
				key := strings.TrimSuffix(s.Keys().Pattern(), "*") + ":s:rate"
				require.Less(t, rint(t, s, "PTTL", key), 5_000, "the claim's: its lease plus the window")
				tc.before(s, key)
				if batch {
					errs, err := s.AckAll(ctx, []lanes.Acking{{Lease: c.Jobs[0].Lease}})
					require.NoError(t, err)
					require.NoError(t, errs[0])
				} else {
					require.NoError(t, s.Ack(ctx, c.Jobs[0].Lease))
				}
				tc.want(t, rint(t, s, "PTTL", key))
			})
		}
	}
}
