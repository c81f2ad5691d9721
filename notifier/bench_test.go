package notifier_test

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/valkeytest"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// costs is INFO commandstats of the store's servers: calls and µs by
// command (a script's commands counted both in their own lines and in
// its EVALSHA's).
type costs map[string]valkeytest.Stat

func readCosts(tb testing.TB, c valkey.Client) costs {
	tb.Helper()
	out := costs{}
	for _, node := range c.Nodes() {
		for name, st := range valkeytest.CommandStats(tb.Context(), tb, node) {
			s := out[name]
			s.Calls += st.Calls
			s.Usec += st.Usec
			out[name] = s
		}
	}
	return out
}

// add adds b - a (INFO itself left out) to c.
func (c costs) add(a, b costs) {
	for name, st := range b {
		if name == "info" {
			continue
		}
		d := c[name]
		d.Calls += st.Calls - a[name].Calls
		d.Usec += st.Usec - a[name].Usec
		c[name] = d
	}
}

// perCopy reports c's script µs and commands (scripts' own calls left out)
// per copy under the metric names phase-µs/copy and phase-cmds/copy, and
// returns its commands by name per copy, most first, each with its µs per
// copy (a script's command timed on its own, inside its script's), for a
// log line.
func (c costs) perCopy(b *testing.B, phase string, copies int) string {
	var usec, cmds float64
	var parts []string
	names := slices.Sorted(maps.Keys(c))
	slices.SortStableFunc(names, func(x, y string) int { return int(c[y].Calls - c[x].Calls) })
	for _, name := range names {
		st := c[name]
		if st.Calls == 0 {
			continue
		}
		switch name {
		case "evalsha", "eval":
			usec += st.Usec
			parts = append(parts, fmt.Sprintf("%s %.3f (%.1f µs)", name, st.Calls/float64(copies), st.Usec/float64(copies)))
			continue
		}
		cmds += st.Calls
		parts = append(parts, fmt.Sprintf("%s %.3f (%.2f µs)", name, st.Calls/float64(copies), st.Usec/float64(copies)))
	}
	b.ReportMetric(usec/float64(copies), phase+"-µs/copy")
	b.ReportMetric(cmds/float64(copies), phase+"-cmds/copy")
	return phase + ": " + strings.Join(parts, ", ")
}

// BenchmarkLazyPaidCopyLife: a lazy paid broadcast's copies over their
// whole life on the server, as the app moves them: made by the filler
// (Filler.Fill: enqueue.lua steps of lanes.MaxCursorItems with its stop,
// dead tally and cursor), claimed over every queue 9 lanes a call (near
// the worker's lanesFor at 1,130/s while claimGap was 8 ms, 10; 16 since
// it is 16 ms) and acked 9 at a time (Store.AckAll, the worker's acker)
// with the copy's SentTally. The store has the bot's
// limits (DefaultLimits, PaidPerSecond 1,000: the paid queue's own budget
// outside the global one, private chats paced 1 per second, the bulk
// queue's share) with budgets too high to bind. Per copy, by phase (fill,
// claim, ack): the server's µs in scripts and the commands they ran, and
// with -v each phase's commands by name (INFO commandstats; the commands
// count does not move with the machine's load). whole reads the server
// only before and after: its script µs and commands per copy, and the
// server's CPU per copy (valkeytest.ServerCPU: every command, the connection's
// work included). The audience is in memory (listAudience): the app's
// walk of its Valkey buckets is not counted.
//
//	go test -run '^$' -bench LazyPaidCopyLife -benchtime 20000x -v ./notifier/
func BenchmarkLazyPaidCopyLife(b *testing.B) {
	b.Run("phases", func(b *testing.B) { lazyPaidCopyLife(b, true, 0) })
	b.Run("whole", func(b *testing.B) { lazyPaidCopyLife(b, false, 0) })
}

// BenchmarkLazyPaidCopyLifePaced is BenchmarkLazyPaidCopyLife's whole run
// with the server left idle for gap after each claim and each ack, as a
// worker's claims and acks reach it at 1,000/s (about 100 calls a second
// each, the worker waiting on its sends between them) rather than back to
// back: the same calls and commands, only spread in time. Its
// server-cpu-µs/copy against the unpaced run's is what the server's
// wake-ups cost: 2026-12-07 on the 2-CPU machine (-benchtime 5000x), 61 µs
// a copy back to back, 91 at 200 µs, 96 at 1 ms, 128 at 5 ms, 155 at 20 ms
// (0.226 calls a copy: 130 to 420 µs of server CPU a wake-up, more the
// longer it idled), and the scripts' own µs (all-µs/copy, commandstats)
// rise with it, 55 to 128: the same commands run slower on a server woken
// from idle, not more of them. The delivery run (bench section 14) wakes
// its Valkey about 0.32 times a copy (INFO stats eventloop_cycles).
//
//	go test -run '^$' -bench LazyPaidCopyLifePaced -benchtime 5000x ./notifier/
func BenchmarkLazyPaidCopyLifePaced(b *testing.B) {
	for _, gap := range []time.Duration{200 * time.Microsecond, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond} {
		b.Run(gap.String(), func(b *testing.B) { lazyPaidCopyLife(b, false, gap) })
	}
}

// lazyPaidCopyLife runs b.N copies' lives (see BenchmarkLazyPaidCopyLife),
// by phase or whole, sleeping gap after each claim and each ack (0: none).
func lazyPaidCopyLife(b *testing.B, phases bool, gap time.Duration) {
	const lanesPerClaim = 9
	ctx := b.Context()
	c := valkeytest.Shared(b).Client(b)
	limits := notifier.DefaultLimits()
	limits.PaidPerSecond, limits.GlobalPerSecond = 1_000_000, 1_000_000
	s, err := notifier.NewStore(c, limits, 0, lanes.WithTag(valkeytest.Namespace(b)))
	require.NoError(b, err)
	n, err := notifier.New(c, s, notifier.Config{})
	require.NoError(b, err)
	copies := b.N
	chats := make([]int64, copies)
	for i := range chats {
		chats[i] = int64(1_000_000_000 + i)
	}
	f, err := n.NewFiller(newListAudience(chats), notifier.FillConfig{Rates: map[string]int{tgjob.QueuePaid: 1000}})
	require.NoError(b, err)
	req := lanes.ClaimRequest{Queues: tgjob.AllQueues(), Lease: time.Minute, Max: 16, Lanes: lanesPerClaim}
	fill, claim, ack := costs{}, costs{}, costs{}
	acks := make([]lanes.Acking, 0, lanesPerClaim)
	b.ResetTimer()
	whole0, cpu0 := readCosts(b, c), valkeytest.ServerCPU(b, c)
	c0 := whole0
	id, err := f.Start(ctx, notifier.Message{Text: "a broadcast", Paid: true}, notifier.Plan{})
	require.NoError(b, err)
	if phases {
		fill.add(c0, readCosts(b, c)) // its first window
	}
	tally, err := n.SentTally(id, true)
	require.NoError(b, err)
	delivered := 0
	read := func() costs {
		if !phases {
			return nil
		}
		return readCosts(b, c)
	}
	for delivered < copies {
		c0 := read()
		_, err := f.Fill(ctx)
		require.NoError(b, err)
		c1 := read()
		fill.add(c0, c1)
		for {
			c0 := read()
			cl, err := s.Claim(ctx, req)
			require.NoError(b, err)
			c1 := read()
			claim.add(c0, c1)
			if len(cl.Jobs) == 0 {
				break
			}
			acks = acks[:0]
			for _, j := range cl.Jobs {
				acks = append(acks, lanes.Acking{Lease: j.Lease, Tally: tally})
			}
			idle(gap)
			errs, err := s.AckAll(ctx, acks)
			if err != nil || errors.Join(errs...) != nil {
				b.Fatal(err, errs)
			}
			ack.add(c1, read())
			delivered += len(cl.Jobs)
			idle(gap)
		}
	}
	b.StopTimer()
	require.Equal(b, copies, delivered)
	if !phases {
		b.ReportMetric((valkeytest.ServerCPU(b, c)-cpu0)/float64(copies), "server-cpu-µs/copy")
		whole := costs{}
		whole.add(whole0, readCosts(b, c))
		b.Log(whole.perCopy(b, "all", copies))
		return
	}
	var all costs = costs{}
	for _, p := range []costs{fill, claim, ack} {
		all.add(costs{}, p)
	}
	for _, line := range []string{fill.perCopy(b, "fill", copies), claim.perCopy(b, "claim", copies), ack.perCopy(b, "ack", copies), all.perCopy(b, "all", copies)} {
		b.Log(line)
	}
}

// idle sleeps d (none for 0).
func idle(d time.Duration) {
	if d > 0 {
		time.Sleep(d)
	}
}
