package flood_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/valkeytest"
)

// BenchmarkRecord measures the server's cost of the record of a batch's
// times with the limits (Limiter.Record: check.lua) against the plain
// record they replace (a pipelined ZADD NX per update, as the intake does
// with the limits off), alone (no queue): 20,000 updates under the
// default limits in batches of 100, from 2,000 users (10 each, a tenth of
// them in one of 100 groups, a fifth of them taps), on a namespace of its
// own per run, five alternating runs each. It reports the server's CPU
// time per update (INFO cpu, used_cpu_user + used_cpu_sys: µs) and the
// server's time in the script or the ZADDs per update (INFO commandstats
// usec: µs), medians, and their ratios. One run whatever b.N.
//
// CODEMOJEX_FLOOD_BENCH=on or off runs that side only, once (for an
// instruction count of the server: start valkey-server under
// valgrind --tool=callgrind, point VALKEY_URL at it, and subtract a run
// with CODEMOJEX_FLOOD_BENCH=none, which sets up and records nothing).
//
// Run: go test -run '^$' -bench '^BenchmarkRecord$' -benchtime 1x ./internal/flood/
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	c := valkeytest.Shared(b).Client(b)
	const users, per, batch = 2000, 10, 100
	subjects := make([]flood.Subject, 0, users*per)
	for i := range users * per {
		u := int64(100_000 + i%users)
		s := flood.Subject{User: u, Chat: u, Kind: flood.Message}
		if u%10 == 0 {
			s.Chat = -int64(1 + (u/10)%100)
		}
		if i%5 == 4 {
			s.Kind, s.QueryID = flood.Tap, "q"
		}
		subjects = append(subjects, s)
	}
	members := make([]string, len(subjects))
	for i := range members {
		members[i] = fmt.Sprintf("0:%020d", i+1)
	}
	type sample struct{ cpu, usec float64 }
	info := func() sample {
		s, err := c.Do(ctx, c.B().Info().Section("cpu", "commandstats").Build()).ToString()
		require.NoError(b, err)
		var out sample
		for line := range strings.Lines(s) {
			k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
			if !ok {
				continue
			}
			if k == "used_cpu_user" || k == "used_cpu_sys" {
				f, _ := strconv.ParseFloat(v, 64)
				out.cpu += f * 1e6
			}
		}
		out.usec = valkeytest.UsecOf(valkeytest.ParseCommandStats(s), "evalsha", "zadd")
		return out
	}
	once := func(on bool) (cpuUs, srvUs float64) {
		tag := valkeytest.Namespace(b)
		recorded := "{" + tag + "}:app:in:rec"
		l := flood.New(tag, flood.DefaultLimits(), nil)
		now := time.Now()
		// Load the script (its first call) outside the window.
		_, err := l.Record(ctx, c, recorded+"-warm", now, []flood.Subject{{User: 1, Chat: 1}}, members[:1])
		require.NoError(b, err)
		before := info()
		for s := 0; s < len(subjects); s += batch {
			if on {
				res, err := l.Record(ctx, c, recorded, now, subjects[s:s+batch], members[s:s+batch])
				require.NoError(b, err)
				for _, r := range res {
					require.Equal(b, flood.Recorded, r.Outcome, "within the limits")
				}
				continue
			}
			cmds := make(valkey.Commands, 0, batch)
			for _, m := range members[s : s+batch] {
				cmds = append(cmds, c.B().Zadd().Key(recorded).Nx().ScoreMember().ScoreMember(float64(now.UnixMilli()), m).Build())
			}
			for _, r := range c.DoMulti(ctx, cmds...) {
				require.NoError(b, r.Error())
			}
		}
		after := info()
		n, err := c.Do(ctx, c.B().Zcard().Key(recorded).Build()).AsInt64()
		require.NoError(b, err)
		require.EqualValues(b, len(subjects), n, "every update recorded")
		return (after.cpu - before.cpu) / float64(len(subjects)), (after.usec - before.usec) / float64(len(subjects))
	}
	med := func(v []float64) float64 { s := slices.Clone(v); slices.Sort(s); return s[len(s)/2] }
	var onCPU, offCPU, onSrv, offSrv []float64
	switch os.Getenv("CODEMOJEX_FLOOD_BENCH") {
	case "on":
		cpu, srv := once(true)
		onCPU, onSrv = append(onCPU, cpu), append(onSrv, srv)
	case "off":
		cpu, srv := once(false)
		offCPU, offSrv = append(offCPU, cpu), append(offSrv, srv)
	case "none":
	default:
		for range 5 {
			cpu, srv := once(false)
			offCPU, offSrv = append(offCPU, cpu), append(offSrv, srv)
			cpu, srv = once(true)
			onCPU, onSrv = append(onCPU, cpu), append(onSrv, srv)
		}
	}
	for b.Loop() {
	}
	if len(onCPU) > 0 {
		b.ReportMetric(med(onCPU), "on_valkey_us/update")
		b.ReportMetric(med(onSrv), "on_srv_us/update")
	}
	if len(offCPU) > 0 {
		b.ReportMetric(med(offCPU), "off_valkey_us/update")
		b.ReportMetric(med(offSrv), "off_srv_us/update")
	}
	if len(onCPU) > 0 && len(offCPU) > 0 {
		b.ReportMetric(med(onCPU)/med(offCPU), "on/off_cpu")
		b.ReportMetric(med(onSrv)/med(offSrv), "on/off_srv")
		b.Logf("record of %d updates in batches of %d: on %v µs CPU/update, %v µs in the script; off %v, %v in the ZADDs",
			len(subjects), batch, onCPU, onSrv, offCPU, offSrv)
	}
}
