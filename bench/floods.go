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

// floodBench is the go test command of the intake limits' benchmark
// (internal/app BenchmarkFlood), run in the main module like the intake's.
var floodBench = []string{"test", "-run", "^$", "-bench", "^BenchmarkFlood$", "-benchtime", "1x", "-count", "1", "-timeout", "30m", "./internal/app/"}

// benchFloods runs BenchmarkFlood (its own servers) and turns its metrics
// into rows; its log lines go into the report.
func benchFloods(ctx context.Context, cfg config, _ *valkeyserver.Server, t *table) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", floodBench...)
	cmd.Dir = cfg.repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("go %s: %w\n%s", strings.Join(floodBench, " "), err, out)
	}
	m, logs, err := parseBenchOutput(out, "BenchmarkFlood")
	if err != nil {
		return err
	}
	cfg.log.Info("floods", "metrics", m)
	for _, u := range []string{"flood_handled", "flood_dropped", "flood_replies_queued", "flood_bytes/dropped", "flood_next_ms",
		"flood_keys_left", "rest_chats", "rest_lang_choices", "rest_lang_codes", "rest_bytes/chat", "rest_bytes/chat_1min", "msg_bytes/delivered", "msg_bytes/delivered_1min",
		"limit_on_updates/s", "limit_off_updates/s", "limit_on_valkey_us/update", "limit_off_valkey_us/update",
		"path_on_updates/s", "path_off_updates/s", "path_on_valkey_us/update", "path_off_valkey_us/update",
		"path_valkey_us_ratio", "path_updates_ratio", "limit_valkey_us_ratio",
		"chatter_ignored", "chatter_bytes", "chatter_valkey_us/message", "chatter_replies"} {
		if _, ok := m[u]; !ok {
			return fmt.Errorf("BenchmarkFlood reported no %q metric (it reported %v)", u, m)
		}
	}
	floodRows(t, m)
	if len(logs) > 0 {
		t.note("BenchmarkFlood's log of this run:\n\n```\n" + strings.Join(logs, "\n") + "\n```")
	}
	return nil
}

// floodRows adds the floods section's rows from BenchmarkFlood's metrics m
// (every name benchFloods checks for): the checks with their goals and a
// verdict computed from m, the costs as ratios of limits on to off.
func floodRows(t *table, m map[string]float64) {
	n := func(v float64) string { return commas(int(v + 0.5)) }
	const flood = 3000 // the /help BenchmarkFlood sends from one user
	t.add("flood: 3,000 `/help` from one user in 3 s, default `FLOOD_*`, Telegram's limits: handled / dropped / replies queued for the chat",
		fmt.Sprintf("%s / %s / %s", n(m["flood_handled"]), n(m["flood_dropped"]), n(m["flood_replies_queued"])),
		"none: a check (handled + dropped = the 3,000 sent)", verdict(m["flood_handled"]+m["flood_dropped"] == flood))
	t.add("the flood's bytes in Valkey (MEMORY USAGE of the bot's keys, queued replies included) per dropped update while its window lasts; keys of the limits left once it has passed",
		fmt.Sprintf("%.1f B; %s keys", m["flood_bytes/dropped"], n(m["flood_keys_left"])), "none: a check (goal < 100 B; 0 keys)",
		verdict(m["flood_bytes/dropped"] < 100 && m["flood_keys_left"] == 0))
	t.add("the flooder's `/start` 10 s after the flood: sent -> answered",
		fmt.Sprintf("%.0f ms", m["flood_next_ms"]), "none: a check (goal < 2 s)", verdict(m["flood_next_ms"] < 2000))
	t.add(fmt.Sprintf("memory per known chat at rest, with stored languages: %s chats, one message each (%s `/language <code>`: stored choices; the rest `/start`), language_codes en, ru, es, pt-BR, fa in turn (%s recorded for broadcasts), delivered: bytes/chat at once, and 61 s later (pace logs expired; the finished-update set stays 24 h)",
		n(m["rest_chats"]), n(m["rest_lang_choices"]), n(m["rest_lang_codes"])),
		fmt.Sprintf("%s B; %s B", n(m["rest_bytes/chat"]), n(m["rest_bytes/chat_1min"])), "none: a check (goal <= 200 B within the first minute)",
		verdict(m["rest_bytes/chat"] <= 200 && m["rest_bytes/chat_1min"] <= 200))
	t.add("bytes kept per delivered message never edited (10,000 notifications): 1 s after delivery (the limiter's own send logs: each chat's pace log lives one pace period), and 61 s later",
		fmt.Sprintf("%.1f B; %.1f B", m["msg_bytes/delivered"], m["msg_bytes/delivered_1min"]), "none: a check (goal <= 40 B kept, 61 s later)",
		verdict(m["msg_bytes/delivered_1min"] <= 40))
	t.add("the limit's cost on the whole normal path: 6,000 `/help` from 2,000 chats (under the limits) fetched by getUpdates, recorded, claimed, handled, replies enqueued, done marks written (a poller and a handler app in process), updates/s, limits on vs off",
		commas(int(m["path_on_updates/s"]))+" updates/s", commas(int(m["path_off_updates/s"]))+" updates/s",
		fmt.Sprintf("%.2f× (pairs' median; of the medians %s)", m["path_updates_ratio"], ratio(m["path_on_updates/s"], m["path_off_updates/s"])))
	t.add("the same, Valkey CPU per update over the whole path (INFO cpu), limits on vs off (lower is better; the issue's goal: within 5%, the pairs' median <= 1.05×)",
		fmt.Sprintf("%.1f µs", m["path_on_valkey_us/update"]), fmt.Sprintf("%.1f µs", m["path_off_valkey_us/update"]),
		fmt.Sprintf("%.2f× (pairs' median; of the medians %s): goal %s", m["path_valkey_us_ratio"], ratio(m["path_on_valkey_us/update"], m["path_off_valkey_us/update"]),
			verdict(m["path_valkey_us_ratio"] <= 1.05)))
	t.add("the record step alone: 20,000 updates from 2,000 chats (under the limits) recorded in batches of 100 (Inbox.Accept: record and enqueue), updates/s, limits on vs off",
		commas(int(m["limit_on_updates/s"]))+" updates/s", commas(int(m["limit_off_updates/s"]))+" updates/s", ratio(m["limit_on_updates/s"], m["limit_off_updates/s"]))
	t.add("the record step alone, Valkey CPU per recorded update (INFO cpu), limits on vs off (lower is better)",
		fmt.Sprintf("%.1f µs", m["limit_on_valkey_us/update"]), fmt.Sprintf("%.1f µs", m["limit_off_valkey_us/update"]),
		fmt.Sprintf("%.2f× (pairs' median; of the medians %s)", m["limit_valkey_us_ratio"], ratio(m["limit_on_valkey_us/update"], m["limit_off_valkey_us/update"])))
	const chatter = 3000 // the group messages BenchmarkFlood's chatter part sends
	t.add("a group's conversation: 3,000 plain messages from 30 members, none to the bot (privacy mode off), default config: dropped unrecorded / bytes they added to Valkey (the polling's own state and the processes' heartbeats aside) / Valkey CPU per message (INFO cpu, the poller's and idle loops' included) / replies",
		fmt.Sprintf("%s / %s B / %.2f µs / %s", n(m["chatter_ignored"]), n(m["chatter_bytes"]), m["chatter_valkey_us/message"], n(m["chatter_replies"])),
		"none: a check (goal: all 3,000 dropped, 0 B, 0 replies)",
		verdict(m["chatter_ignored"] == chatter && m["chatter_bytes"] <= 0 && m["chatter_replies"] == 0))
}
