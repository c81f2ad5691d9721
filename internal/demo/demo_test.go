package demo

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// TestQuickScene plays the short scene against the real bot (built from
// ./cmd/bot; DEMO_BOT=<binary> runs a prebuilt one) and checks its
// promises: quiet chats answered fast while the burst drains, nothing lost,
// no 429.
func TestQuickScene(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a 10 s scene; skipped with -short")
	}
	bin := os.Getenv("DEMO_BOT")
	if _, err := valkeyserver.Binary(); err != nil {
		t.Fatalf("no server binary for a throwaway Valkey (run ./scripts/ensure-valkey.sh): %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	if bin == "" {
		// Built first, on its own clock: with a cold build cache on 2 cores
		// it takes minutes (under make test, go vet ./... has compiled
		// every dependency already), the scene itself about 12 s. Not
		// with -race: the race detector slows the bot's sends enough
		// (claim to request) to break the 1 msg/s window now and then.
		t0 := time.Now()
		var err error
		if bin, err = buildBot(ctx, t.TempDir(), nil); err != nil {
			t.Fatal(err)
		}
		t.Logf("built the bot in %v", time.Since(t0).Round(time.Millisecond))
	}
	var out bytes.Buffer
	t0 := time.Now()
	sum, err := Run(ctx, nil, Options{Scene: QuickScene(), BotBinary: bin, Out: &out})
	took := time.Since(t0)
	t.Logf("demo output (%v):\n%s", took.Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if strings.Contains(sum.BotOutput, "DATA RACE") {
		t.Errorf("the bot reported a data race:\n%s", sum.BotOutput)
	}
	if took > 40*time.Second {
		t.Errorf("the quick scene took %v, want under 40 s", took)
	}
	for _, c := range sum.Checks {
		if !c.OK {
			t.Errorf("promise failed: %s: %s", c.Name, c.Detail)
		}
	}
	if !sum.OK() {
		t.FailNow()
	}
	sc := QuickScene()
	if sum.BurstCommands != sc.Burst+1 {
		t.Errorf("burst chat sent %d commands, want %d", sum.BurstCommands, sc.Burst+1)
	}
	// The scene must really have had a backlog: the burst paced at about
	// 1 msg/s takes several seconds, far longer than any quiet wait.
	if sum.BurstDrain < time.Duration(sc.Burst-2)*time.Second {
		t.Errorf("burst drained in %v: no real backlog to be fair against", sum.BurstDrain)
	}
	if sum.QuietMax >= sum.BurstDrain/2 {
		t.Errorf("quiet max wait %v not well below the burst's drain %v", sum.QuietMax, sum.BurstDrain)
	}
	if want := 2 + sc.Quiet + sc.Crowd; sum.BroadcastGot != want {
		t.Errorf("broadcast reached %d chats, want %d", sum.BroadcastGot, want)
	}
	if !strings.Contains(out.String(), "all promises held") {
		t.Errorf("summary does not say the promises held")
	}
}

func TestMatch(t *testing.T) {
	base := time.Unix(1000, 0)
	at := func(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }
	cmds := []command{
		{msgID: 1, at: at(0), baseline: 0},
		{msgID: 2, at: at(0), baseline: 0},
		{msgID: 3, at: at(0), baseline: 0},
		{msgID: 9, at: at(5000), baseline: 3},
	}
	// Loose replies go in order; a reply naming a command goes to it.
	got := match(cmds, tgemuMsgs{{t: 100}, {t: 1200, re: 3}, {t: 2300}}.msgs(base))
	want := []time.Time{at(100), at(2300), at(1200), {}}
	for i := range want {
		if !got[i].Equal(want[i]) {
			t.Errorf("cmd %d answered at %v, want %v", i, got[i], want[i])
		}
	}
	// A reply that arrived before a command was sent is not its answer.
	got = match(cmds[3:], tgemuMsgs{{t: 100}, {t: 200}, {t: 300}}.msgs(base))
	if !got[0].IsZero() {
		t.Errorf("command answered by an earlier reply: %v", got[0])
	}
}

func TestPercentile(t *testing.T) {
	ds := []time.Duration{5, 1, 4, 2, 3}
	for p, want := range map[float64]time.Duration{0: 1, 50: 3, 90: 5, 100: 5} {
		if got := percentile(ds, p); got != want {
			t.Errorf("p%v = %v, want %v", p, got, want)
		}
	}
	if percentile(nil, 50) != 0 {
		t.Error("percentile of nothing is not 0")
	}
}

func TestSummarizeFlagsStarvationAndLoss(t *testing.T) {
	cfg := QuickScene()
	chats := []ChatStats{
		{Name: "Burst", Role: RoleBurst, Sent: 9, Answered: 9, Delivered: 10, Broadcasts: 1},
		{Name: "Ana", Role: RoleQuiet, Sent: 5, Answered: 5, Delivered: 6, Broadcasts: 1,
			Waits: []time.Duration{time.Second, 5 * time.Second}},
		{Name: "Crowd01", Role: RoleCrowd, Sent: 1, Answered: 0, Delivered: 0},
	}
	s := summarize(cfg, time.Second, chats, limitsSeen{tooMany: 1}, []error{errors.New("boom")}, true)
	if s.OK() {
		t.Fatal("summary OK despite a starved chat, a lost reply and a 429")
	}
	failed := map[string]bool{}
	for _, c := range s.Checks {
		failed[c.Name] = !c.OK
	}
	for _, name := range []string{"quiet chats were not starved", "no message lost", "within Telegram's limits, zero 429s"} {
		if !failed[name] {
			t.Errorf("check %q did not fail", name)
		}
	}
	if failed["the bot ran the whole scene"] {
		t.Error("bot check failed though the bot was alive")
	}
}
