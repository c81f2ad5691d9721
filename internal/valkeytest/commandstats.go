package valkeytest

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/valkey-io/valkey-go"
)

// Stat is one command's counters in INFO commandstats since the server
// started (or since CONFIG RESETSTAT): Calls, and Usec, the server's own
// time in it in µs (network and client excluded; a script's commands are
// counted both in their own lines and in the EVAL/EVALSHA's).
type Stat struct {
	Calls float64
	Usec  float64
}

// CommandStats reads INFO commandstats from c (one server: on a cluster,
// call it with each of Client.Nodes()) and returns each command's Stat by
// its name without the cmdstat_ prefix ("evalsha", "zrange",
// "config|resetstat"). It fails tb on the server's error.
func CommandStats(ctx context.Context, tb testing.TB, c valkey.Client) map[string]Stat {
	tb.Helper()
	info, err := c.Do(ctx, c.B().Info().Section("commandstats").Build()).ToString()
	if err != nil {
		tb.Fatalf("valkeytest: INFO commandstats: %v", err)
	}
	return ParseCommandStats(info)
}

// ParseCommandStats returns the Stat of each cmdstat_<name> line of an
// INFO answer, by name (lines of other sections are ignored), for a
// caller that reads other sections in the same INFO call. A counter that
// does not parse counts 0.
func ParseCommandStats(info string) map[string]Stat {
	out := map[string]Stat{}
	for line := range strings.Lines(info) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(k, "cmdstat_")
		if !ok || !isCmd {
			continue
		}
		var st Stat
		for kv := range strings.SplitSeq(v, ",") {
			field, val, _ := strings.Cut(kv, "=")
			f, _ := strconv.ParseFloat(val, 64)
			switch field {
			case "calls":
				st.Calls = f
			case "usec":
				st.Usec = f
			}
		}
		out[name] = st
	}
	return out
}

// UsecOf is the total Usec in stats of the commands named.
func UsecOf(stats map[string]Stat, names ...string) float64 {
	total := 0.0
	for _, name := range names {
		total += stats[name].Usec
	}
	return total
}

// ServerCPU is the CPU time c's servers (every node of a cluster client)
// used since they started, in µs: INFO cpu's used_cpu_user + used_cpu_sys
// (every thread's). Unlike commandstats' wall-clock µs, it is not
// inflated while a loaded machine preempts the server. It fails tb on a
// server's error or a figure that does not parse.
func ServerCPU(tb testing.TB, c valkey.Client) float64 {
	tb.Helper()
	var us float64
	for _, node := range c.Nodes() {
		info, err := node.Do(context.Background(), node.B().Info().Section("cpu").Build()).ToString()
		if err != nil {
			tb.Fatalf("valkeytest: INFO cpu: %v", err)
		}
		for line := range strings.Lines(info) {
			k, v, _ := strings.Cut(strings.TrimSpace(line), ":")
			if k == "used_cpu_user" || k == "used_cpu_sys" {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					tb.Fatalf("valkeytest: INFO cpu %s %q: %v", k, v, err)
				}
				us += f * 1e6
			}
		}
	}
	return us
}
