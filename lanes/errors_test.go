package lanes_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/codemojex/codemojex/lanes"
)

// Every public function rejects bad input with ErrInvalid and writes
// nothing: the store's keyspace (every key's DUMP) is the same before and
// after, with live state present (pending jobs, a lease, a weight, a dead
// letter) so that a partial write would show.
func TestBadInputReturnsErrInvalidAndWritesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newStore(t, lanes.WithMaxPayload(10))
	m := lanes.NewMinter()
	good := m.New()
	enqueueN(t, s, m, "q", "g", 3)
	require.NoError(t, s.Inspector().SetWeight(ctx, "g", 2))
	dead := claimOne(t, s, time.Minute, "q")
	require.NoError(t, s.Dead(ctx, dead.Lease, "x"))
	held := claimOne(t, s, time.Minute, "q").Lease

	long := strings.Repeat("g", lanes.MaxGroupBytes+1)
	longUTF8 := strings.Repeat("é", lanes.MaxGroupBytes/2) + "x" // 257 bytes, 129 runes
	malformed := []string{"", "job_", "job_01ARZ3NDEKTSV4RRFFQ69G5FA", "JOB_01ARZ3NDEKTSV4RRFFQ69G5FAV",
		"job_01ARZ3NDEKTSV4RRFFQ69G5FAVX", "job_81ARZ3NDEKTSV4RRFFQ69G5FAV" /* overflows 48-bit time */, "job_01ARZ3NDEKTSV4RRFFQ69G5FAU" /* U is not Crockford */, "xyz",
		"job_01arz3ndektsv4rrffq69g5fav" /* lower case: would sort out of mint order and duplicate job_01ARZ... */}
	with := func(f func(l *lanes.Lease)) lanes.Lease { l := held; f(&l); return l }

	type call func() error
	cases := map[string]call{}
	add := func(name string, f call) {
		_, dup := cases[name]
		require.False(t, dup, name)
		cases[name] = f
	}
	enq := func(q, g string, id lanes.JobID, p []byte) call {
		return func() error { _, err := s.Enqueue(ctx, q, []lanes.Item{{Group: g, ID: id, Payload: p}}); return err }
	}
	add("enqueue empty queue", enq("", "g", m.New(), nil))
	add("enqueue bad queue", enq("a b", "g", m.New(), nil))
	add("enqueue queue over 64", enq(strings.Repeat("q", 65), "g", m.New(), nil))
	add("enqueue empty group", enq("q", "", m.New(), nil))
	add("enqueue group over 256", enq("q", long, m.New(), nil))
	add("enqueue group over 256 bytes utf8", enq("q", longUTF8, m.New(), nil))
	add("enqueue payload over custom limit", enq("q", "g", m.New(), []byte("01234567890")))
	for i, bad := range malformed {
		add("enqueue malformed id "+string(rune('a'+i)), enq("q", "g", lanes.JobID(bad), nil))
		add("parse malformed id "+string(rune('a'+i)), func() error { _, err := lanes.ParseJobID(bad); return err })
		add("ack malformed id "+string(rune('a'+i)), func() error { return s.Ack(ctx, with(func(l *lanes.Lease) { l.ID = lanes.JobID(bad) })) })
		add("requeue malformed id "+string(rune('a'+i)), func() error { _, err := s.Inspector().RequeueDead(ctx, "q", dead.ID, lanes.JobID(bad)); return err })
	}
	add("batch one bad item", func() error {
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New()}, {Group: "h", ID: m.New()}, {Group: "", ID: m.New()}})
		return err
	})
	add("batch one big payload", func() error {
		_, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: "g", ID: m.New()}, {Group: "h", ID: m.New(), Payload: make([]byte, 11)}})
		return err
	})
	add("batch bad queue", func() error { _, err := s.Enqueue(ctx, "", []lanes.Item{{Group: "g", ID: m.New()}}); return err })

	cl := func(r lanes.ClaimRequest) call { return func() error { _, err := s.Claim(ctx, r); return err } }
	add("claim no queues", cl(lanes.ClaimRequest{Lease: time.Second, Max: 1}))
	add("claim 9 queues", cl(lanes.ClaimRequest{Queues: strings.Split("a b c d e f g h i", " "), Lease: time.Second, Max: 1}))
	add("claim bad queue", cl(lanes.ClaimRequest{Queues: []string{"q", "x:y"}, Lease: time.Second, Max: 1}))
	add("claim empty queue", cl(lanes.ClaimRequest{Queues: []string{""}, Lease: time.Second, Max: 1}))
	add("claim lease 0", cl(lanes.ClaimRequest{Queues: []string{"q"}, Max: 1}))
	add("claim lease < 1ms", cl(lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Microsecond, Max: 1}))
	add("claim lease negative", cl(lanes.ClaimRequest{Queues: []string{"q"}, Lease: -time.Second, Max: 1}))
	add("claim max 0", cl(lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second}))
	add("claim max 1001", cl(lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: 1001}))
	add("claim max negative", cl(lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Second, Max: -1}))

	leaseOps := map[string]func(lanes.Lease) error{
		"ack":     func(l lanes.Lease) error { return s.Ack(ctx, l) },
		"extend":  func(l lanes.Lease) error { _, err := s.Extend(ctx, l, time.Minute); return err },
		"release": func(l lanes.Lease) error { return s.Release(ctx, l) },
		"nack":    func(l lanes.Lease) error { _, err := s.Nack(ctx, l, 0, "r"); return err },
		"dead":    func(l lanes.Lease) error { return s.Dead(ctx, l, "r") },
	}
	for op, f := range leaseOps {
		add(op+" empty queue", func() error { return f(with(func(l *lanes.Lease) { l.Queue = "" })) })
		add(op+" bad queue", func() error { return f(with(func(l *lanes.Lease) { l.Queue = "q{x}" })) })
		add(op+" malformed id", func() error { return f(with(func(l *lanes.Lease) { l.ID = "job_1" })) })
		add(op+" empty token", func() error { return f(with(func(l *lanes.Lease) { l.Token = "" })) })
	}
	add("extend 0", func() error { _, err := s.Extend(ctx, held, 0); return err })
	add("extend negative", func() error { _, err := s.Extend(ctx, held, -time.Second); return err })
	add("nack negative delay", func() error { _, err := s.Nack(ctx, held, -time.Millisecond, "r"); return err })

	for _, w := range []int{0, -1, 1001} {
		add("weight "+strconv.Itoa(w), func() error { return s.Inspector().SetWeight(ctx, "g", w) })
	}
	add("weight empty group", func() error { return s.Inspector().SetWeight(ctx, "", 2) })
	add("weight long group", func() error { return s.Inspector().SetWeight(ctx, long, 2) })
	add("get weight bad group", func() error { _, err := s.Inspector().Weight(ctx, long); return err })
	add("lane limit negative", func() error { return s.Inspector().SetLaneLimit(ctx, "q", "g", -1) })
	add("lane limit empty group", func() error { return s.Inspector().SetLaneLimit(ctx, "q", "", 1) })
	add("lane limit bad queue", func() error { return s.Inspector().SetLaneLimit(ctx, "", "g", 1) })
	add("pace negative", func() error { return s.Inspector().SetLanePace(ctx, "g", lanes.Pace{Limit: -1, Period: time.Second}) })
	add("pace period 0", func() error { return s.Inspector().SetLanePace(ctx, "g", lanes.Pace{Limit: 1}) })
	add("pace empty group", func() error { return s.Inspector().SetLanePace(ctx, "", lanes.Pace{Limit: 1, Period: time.Second}) })
	add("pace long group", func() error { return s.Inspector().SetLanePace(ctx, long, lanes.Pace{}) })
	add("park empty group", func() error { _, err := s.Inspector().Park(ctx, "q", "", time.Second); return err })
	add("park bad queue", func() error { _, err := s.Inspector().Park(ctx, "", "g", time.Second); return err })
	add("resume long group", func() error { return s.Inspector().ResumeLane(ctx, "q", long) })
	add("resume bad queue", func() error { return s.Inspector().ResumeLane(ctx, "q q", "g") })
	add("pause under 1ms", func() error { return s.Inspector().Pause(ctx, time.Microsecond) })
	add("dead lane empty group", func() error { _, err := s.Inspector().DeadLane(ctx, "q", "", "r"); return err })
	add("dead lane bad queue", func() error { _, err := s.Inspector().DeadLane(ctx, "", "g", "r"); return err })
	add("move lane empty target", func() error { _, err := s.Inspector().MoveLane(ctx, "q", "g", ""); return err })
	add("move lane long target", func() error { _, err := s.Inspector().MoveLane(ctx, "q", "g", long); return err })
	add("move lane empty source", func() error { _, err := s.Inspector().MoveLane(ctx, "q", "", "h"); return err })
	add("move lane onto itself", func() error { _, err := s.Inspector().MoveLane(ctx, "q", "g", "g"); return err })
	add("move lane bad queue", func() error { _, err := s.Inspector().MoveLane(ctx, "", "g", "h"); return err })
	add("dead letters n 0", func() error { _, err := s.Inspector().DeadLetters(ctx, "q", lanes.DeadQuery{Newest: 0}); return err })
	add("dead letters bad queue", func() error { _, err := s.Inspector().DeadLetters(ctx, "", lanes.DeadQuery{Newest: 1}); return err })
	add("requeue bad queue", func() error { _, err := s.Inspector().RequeueDead(ctx, "", dead.ID); return err })
	add("purge n 0", func() error { _, err := s.Inspector().PurgeDead(ctx, "q", 0, 0); return err })
	add("purge bad queue", func() error { _, err := s.Inspector().PurgeDead(ctx, "", 0, 1); return err })
	add("stats top negative", func() error { _, err := s.Inspector().Stats(ctx, "q", -1); return err })
	add("stats top 1001", func() error { _, err := s.Inspector().Stats(ctx, "q", 1001); return err })
	add("stats bad queue", func() error { _, err := s.Inspector().Stats(ctx, "", 1); return err })

	before := dumpKeys(t, s)
	require.NotEmpty(t, before)
	for name, f := range cases {
		err := f()
		require.ErrorIs(t, err, lanes.ErrInvalid, name)
		require.Equal(t, before, dumpKeys(t, s), "%s wrote something", name)
	}

	// The limits themselves are fine.
	res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: strings.Repeat("é", lanes.MaxGroupBytes/2), ID: good, Payload: []byte("0123456789")}})
	require.NoError(t, err)
	require.Equal(t, 1, res.Added)
	require.NoError(t, s.Inspector().SetWeight(ctx, "g", lanes.MaxWeight))
	_, err = s.Claim(ctx, lanes.ClaimRequest{Queues: strings.Split("a b c d e f g q", " "), Lease: time.Millisecond, Max: lanes.MaxClaim})
	require.NoError(t, err)
	_, err = s.Nack(ctx, held, 0, "")
	require.NoError(t, err)
}
