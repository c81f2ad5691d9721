package lanes_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
)

// commandsPerLane is what serving one more one-copy lane adds to a claim of
// several lanes (ClaimRequest.Lanes), in Valkey commands run by the script:
// the claim of 9 such lanes less the claim of 1, over 8. The store is the
// paid broadcast's (an ordered queue with a budget of its own, outside the
// global one, every lane paced), on a dedicated server read with INFO
// commandstats, so each figure is exact. setup runs after the lanes are
// filled and before the claims.
func commandsPerLane(t *testing.T, setup func(ctx context.Context, s *lanes.Store)) float64 {
	t.Helper()
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	commands := scriptCommands(t, c)
	claimed := func(lanesServed int) float64 {
		s := paidStore(t, c, "cost"+strconv.Itoa(lanesServed))
		fillLanes(t, s, lanes.NewMinter(), "paid", "1000", lanesServed, 1)
		if setup != nil {
			setup(ctx, s)
		}
		// The scripts loaded (a claim that finds nothing), then measured.
		_, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"none"}, Lease: time.Minute, Max: 1})
		require.NoError(t, err)
		before := commands()
		got, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"paid"}, Lease: time.Minute, Max: 16, Lanes: lanesServed})
		require.NoError(t, err)
		require.Len(t, got.Jobs, lanesServed, "every lane served, one copy each")
		require.Len(t, got.Batches(), lanesServed)
		return commands() - before
	}
	return perOneMore(claimed)
}

// perOneMore is what one more item adds to f(n), the commands a call of n
// items ran: the call of 9 less the call of 1, over 8.
func perOneMore(f func(n int) float64) float64 { return (f(9) - f(1)) / 8 }

// scriptCommands returns a reader of the commands c's server has run, the
// scripts' calls themselves, INFO and a connection's handshake left out:
// what the scripts ran (INFO commandstats, exact on a dedicated server).
func scriptCommands(t *testing.T, c valkey.Client) func() float64 {
	return func() float64 {
		var n float64
		for name, st := range valkeytest.CommandStats(context.Background(), t, c) {
			switch {
			case name == "evalsha", name == "eval", name == "info":
			case name == "hello", name == "ping", strings.HasPrefix(name, "client"):
				// A new connection of the client's (its handshake).
			default:
				n += st.Calls
			}
		}
		return n
	}
}

// paidStore is a store on c under tag with the paid broadcast's queue:
// ordered, a budget of its own outside the global one, every lane paced
// (1 a second, or by rules).
func paidStore(t *testing.T, c valkey.Client, tag string, rules ...lanes.PaceRule) *lanes.Store {
	t.Helper()
	s, err := lanes.New(c, lanes.WithTag(tag),
		lanes.WithQueue("paid", lanes.QueueConfig{Ordered: true, Rate: 1000, Window: time.Second, OutsideGlobal: true}),
		lanes.WithGlobalRate(130, time.Second),
		lanes.WithLanePace(lanes.Pace{Limit: 1, Period: time.Second}, rules...))
	require.NoError(t, err)
	return s
}

// A step of a lazy broadcast's filler (Enqueue AtCursor with a track set,
// a stop key and a dead tally) writes each copy, one to a lane, with two
// commands (its hash, its lane): the track set takes every added id in one
// command per step, as the ring, the pending count and the cursor do. The
// figure is the step of 9 copies less the step of 1, over 8.
func TestAFillerStepWritesEachCopyWithTwoCommands(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	commands := scriptCommands(t, c)
	step := func(copies int) float64 {
		s := paidStore(t, c, "fill"+strconv.Itoa(copies))
		tag := "{" + s.Tag() + "}:"
		require.NoError(t, c.Do(ctx, c.B().Hset().Key(tag+"rec").FieldValue().FieldValue("t", "9").Build()).Error())
		require.NoError(t, c.Do(ctx, c.B().Pexpire().Key(tag+"rec").Milliseconds(60_000).Build()).Error())
		m := lanes.NewMinter()
		items := make([]lanes.Item, copies)
		for i := range items {
			items[i] = lanes.Item{Group: strconv.Itoa(1000 + i), ID: m.New(), Payload: []byte("x")}
		}
		opts := []lanes.EnqueueOption{
			lanes.Unless(tag + "stop"),
			lanes.AtCursor(lanes.Cursor{Key: tag + "rec", Field: "cur", To: "1", Count: "q", Track: tag + "rec:out"}),
			lanes.CountDead(lanes.DeadTally{Key: tag + "rec", Prefix: "f:", Once: tag + "rec:seen", TTL: time.Hour}),
		}
		// The script loaded (a step of no item elsewhere), then measured.
		_, err := s.Enqueue(ctx, "paid", nil, lanes.AtCursor(lanes.Cursor{Key: tag + "warm", Field: "cur", To: "1"}))
		require.NoError(t, err)
		before := commands()
		r, err := s.Enqueue(ctx, "paid", items, opts...)
		require.NoError(t, err)
		require.Equal(t, copies, r.Added)
		n := commands() - before
		tracked, err := c.Do(ctx, c.B().Zcard().Key(tag+"rec:out").Build()).AsInt64()
		require.NoError(t, err)
		require.EqualValues(t, copies, tracked, "every copy tracked")
		return n
	}
	require.Equal(t, 2.0, perOneMore(step))
}

// AckAll of a paid broadcast's copies, each of a lane of its own and with
// the copy's tally (a hash field counted, the id untracked), settles each
// copy with five commands of its own: its job read, its lease taken, its
// lane's in-flight count, its lane's pace log rescored, its lane's depth
// (whether the ack brings the lane back to the ring). The pace log's
// expiry is not touched: its claim gave it the store's longest window
// (its log TTL: also with a rule of a minute for other lanes, as groups'
// 20 a minute in the app) plus the lease (job field "e"), past what the
// ack's touch would ask (TestAnAckPastItsClaimsPaceExpiryStillKeepsThePaceLog
// covers an ack that comes later). What the acks share is written once
// per call: the jobs deleted, the lanes left with none in flight, the
// queue's send log rescored, the tally. The figure is the call of 9 acks
// less the call of 1, over 8.
func TestAnAckOfACopyInABatchRunsFiveCommandsOfItsOwn(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		rules []lanes.PaceRule
	}{
		{"every window a second", nil},
		// (A lease shorter than the minute: the claim's period plus lease
		// alone would not cover the ack's touch.)
		{"other lanes paced by the minute", []lanes.PaceRule{{Prefix: "-", Pace: lanes.Pace{Limit: 20, Period: time.Minute}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ackCommands(t, tc.rules)
		})
	}
}

// ackCommands is TestAnAckOfACopyInABatchRunsFiveCommandsOfItsOwn's check
// on a paid store with rules, the copies claimed under a 10 s lease.
func ackCommands(t *testing.T, rules []lanes.PaceRule) {
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	commands := scriptCommands(t, c)
	acked := func(copies int) float64 {
		s := paidStore(t, c, "ack"+strconv.Itoa(copies), rules...)
		tag := "{" + s.Tag() + "}:"
		fillLanes(t, s, lanes.NewMinter(), "paid", "1000", copies, 1)
		got, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"paid"}, Lease: 10 * time.Second, Max: 16, Lanes: copies})
		require.NoError(t, err)
		require.Len(t, got.Jobs, copies)
		require.NoError(t, c.Do(ctx, c.B().Hset().Key(tag+"bc").FieldValue().FieldValue("s", "0").Build()).Error())
		acks := make([]lanes.Acking, len(got.Jobs))
		for i, j := range got.Jobs {
			acks[i] = lanes.Acking{Lease: j.Lease, Tally: lanes.SettleTally{Key: tag + "bc", Fields: []string{"s", "ps"}, Untrack: tag + "bc:out", TTL: time.Hour}}
		}
		// The script loaded (an ack of no job), then measured.
		_, err = s.AckAll(ctx, []lanes.Acking{{Lease: lanes.Lease{Queue: "paid", ID: lanes.NewMinter().New(), Token: "1"}}})
		require.NoError(t, err)
		before := commands()
		errs, err := s.AckAll(ctx, acks)
		require.NoError(t, err)
		for _, err := range errs {
			require.NoError(t, err)
		}
		n := commands() - before
		sent, err := c.Do(ctx, c.B().Hget().Key(tag+"bc").Field("s").Build()).AsInt64()
		require.NoError(t, err)
		require.EqualValues(t, copies, sent, "every copy counted")
		return n
	}
	require.Equal(t, 5.0, perOneMore(acked))
}

// A claim serving several one-copy lanes (a broadcast's, ClaimRequest.Lanes)
// reads per lane only what can differ between lanes: with no lane weighted,
// no pace override and nothing parked in the queue, a lane whose pace log
// is empty (its first send) costs 10 commands (the rotation, its depth,
// in-flight count, pace log counted (trimmed only when it holds sends),
// the pop, the job read and written, its pace log written and given its
// expiry, leaving the ring's tail); the lanes' in-flight counts and the
// ring's member set ("inring") are written once per call; whether any
// lane is weighted, has an override or is parked is read once per call.
// Each of those that exists brings back its lookup per lane (one command
// each), and the lanes are served as before. A lane's pace log made by the
// claim gets its expiry without a PTTL first.
func TestAClaimOfOneCopyLanesReadsWeightsOverridesAndParksOncePerCall(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		setup func(ctx context.Context, s *lanes.Store)
		want  float64
	}{
		{"nothing weighted, overridden or parked", nil, 10},
		{"another lane weighted", func(ctx context.Context, s *lanes.Store) {
			require.NoError(t, s.Inspector().SetWeight(ctx, "other", 3))
		}, 11},
		{"another lane's pace overridden", func(ctx context.Context, s *lanes.Store) {
			require.NoError(t, s.Inspector().SetLanePace(ctx, "other", lanes.Pace{Limit: 5, Period: time.Second}))
		}, 11},
		{"another lane parked", func(ctx context.Context, s *lanes.Store) {
			_, err := s.Inspector().Park(ctx, "paid", "other", time.Hour)
			require.NoError(t, err)
		}, 11},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, commandsPerLane(t, tc.setup))
		})
	}
}

// A paced lane's send log outlives the sends it holds: its claim gives it
// the pace period plus the lease (job field "e"), so an ack within the
// lease sends no touch (TestAnAckOfACopyInABatchRunsFiveCommandsOfItsOwn),
// and an ack later than that (its lease past its deadline, not reclaimed
// yet) still renews the log to the longest window from the ack, through
// AckAll as through Ack. The store's window and pace period are 1 s, the
// lease 300 ms: an ack 600 ms after the claim finds 700 ms left, and
// leaves about 1,000.
func TestAnAckPastItsClaimsPaceExpiryStillKeepsThePaceLog(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := valkeytest.Start(t, valkeytest.Options{}).Client(t)
	for _, tc := range []struct {
		name string
		ack  func(s *lanes.Store, l lanes.Lease) error
	}{
		{"Ack", func(s *lanes.Store, l lanes.Lease) error { return s.Ack(ctx, l) }},
		{"AckAll", func(s *lanes.Store, l lanes.Lease) error {
			errs, err := s.AckAll(ctx, []lanes.Acking{{Lease: l}})
			if err != nil {
				return err
			}
			return errs[0]
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := paidStore(t, c, "late"+tc.name)
			fillLanes(t, s, lanes.NewMinter(), "paid", "1000", 1, 1)
			got, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"paid"}, Lease: 300 * time.Millisecond, Max: 1})
			require.NoError(t, err)
			require.Len(t, got.Jobs, 1)
			pk := s.Keys().Pace("10000")
			claimed, err := c.Do(ctx, c.B().Pttl().Key(pk).Build()).AsInt64()
			require.NoError(t, err)
			require.Greater(t, claimed, int64(1_000), "the claim gave the log its period plus the lease")
			time.Sleep(600 * time.Millisecond)
			require.NoError(t, tc.ack(s, got.Jobs[0].Lease))
			left, err := c.Do(ctx, c.B().Pttl().Key(pk).Build()).AsInt64()
			require.NoError(t, err)
			require.Greater(t, left, int64(850), "renewed to the window from the ack")
		})
	}
}
