package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// benchChatter runs BenchmarkFlood's chatter part only (a group's 3,000
// plain messages, then the same count of /help from the same members, each
// on a fresh server of its own) and turns its metrics into rows.
func benchChatter(ctx context.Context, cfg config, _ *valkeyserver.Server, t *table) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", floodBench...)
	cmd.Dir = cfg.repo
	cmd.Env = append(os.Environ(), "CODEMOJEX_BENCH_FLOOD_PARTS=chatter")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(floodBench, " "), err, out)
	}
	m, logs, err := parseBenchOutput(out, "BenchmarkFlood")
	if err != nil {
		return err
	}
	for _, side := range []string{"chatter", "chatterhelp"} {
		for _, u := range []string{"_ignored", "_handled", "_dropped", "_bytes", "_used_memory", "_valkey_us/message", "_cmd_us/message", "_replies"} {
			if _, ok := m[side+u]; !ok {
				return fmt.Errorf("BenchmarkFlood reported no %q metric (it reported %v)", side+u, m)
			}
		}
	}
	chatterRows(t, m)
	if len(logs) > 0 {
		t.note("BenchmarkFlood's log of this run:\n\n```\n" + strings.Join(logs, "\n") + "\n```")
	}
	return nil
}

// chatterRows adds the chatter section's rows from BenchmarkFlood's chatter
// metrics m: the group's conversation against the same count of /help.
func chatterRows(t *table, m map[string]float64) {
	n := func(v float64) string { return commas(int(v + 0.5)) }
	const total = 3000
	c, h := "chatter", "chatterhelp"
	t.add("3,000 group messages from 30 members: dropped unrecorded / handled / dropped by the flood limits, plain conversation vs `/help`",
		fmt.Sprintf("%s / %s / %s", n(m[c+"_ignored"]), n(m[c+"_handled"]), n(m[c+"_dropped"])),
		fmt.Sprintf("%s / %s / %s", n(m[h+"_ignored"]), n(m[h+"_handled"]), n(m[h+"_dropped"])),
		"goal: all 3,000 dropped unrecorded: "+verdict(m[c+"_ignored"] == total))
	t.add("replies to the group (sent or queued when the last update is confirmed; the flood notices included), conversation vs `/help`",
		n(m[c+"_replies"]), n(m[h+"_replies"]), "goal 0: "+verdict(m[c+"_replies"] == 0))
	t.add("Valkey CPU per message, first injection to the last update confirmed (INFO cpu: the polling's and the idle loops' work included), conversation vs `/help` (lower is better)",
		fmt.Sprintf("%.2f µs", m[c+"_valkey_us/message"]), fmt.Sprintf("%.2f µs", m[h+"_valkey_us/message"]), ratio(m[c+"_valkey_us/message"], m[h+"_valkey_us/message"]))
	t.add("Valkey time in commands per message over the same window (INFO commandstats, the sum of usec), conversation vs `/help` (lower is better)",
		fmt.Sprintf("%.2f µs", m[c+"_cmd_us/message"]), fmt.Sprintf("%.2f µs", m[h+"_cmd_us/message"]), ratio(m[c+"_cmd_us/message"], m[h+"_cmd_us/message"]))
	t.add("bytes added: MEMORY USAGE of the bot's keys (the polling's offset, lease, heartbeat and the senders' floors aside); INFO used_memory delta (allocator and client buffers included), conversation vs `/help`",
		fmt.Sprintf("%s B; %s B", n(m[c+"_bytes"]), signed(m[c+"_used_memory"])), fmt.Sprintf("%s B; %s B", n(m[h+"_bytes"]), signed(m[h+"_used_memory"])),
		"goal 0 B of keys: "+verdict(m[c+"_bytes"] <= 0))
}

// signed formats a byte delta with its sign and thousands commas.
func signed(v float64) string {
	if v < 0 {
		return "−" + commas(int(-v+0.5))
	}
	return "+" + commas(int(v+0.5))
}
