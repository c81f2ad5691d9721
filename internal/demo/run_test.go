package demo

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// TestQuickScene plays the short scene against the real bot (built from
// ./cmd/bot; DEMO_BOT=<binary> runs a prebuilt one) and checks its
// promises: quiet chats answered fast while the burst drains, nothing lost,
// a raised weight raised the VIP chat's share in the rush,
// no 429.
func TestQuickScene(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a 45 s scene; skipped with -short")
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
		// every dependency already), the scene itself about 30 s. Not
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
	if took > 60*time.Second {
		t.Errorf("the quick scene took %v, want under 60 s", took)
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
	if want := 4 + sc.Quiet + sc.Crowd; sum.BroadcastGot != want { // admin, burst, tapper, VIP, quiet, crowd
		t.Errorf("broadcast reached %d chats, want %d", sum.BroadcastGot, want)
	}
	if sum.Taps == 0 || sum.TapsAnswered != sum.Taps {
		t.Errorf("the tapper's taps: %d answered of %d", sum.TapsAnswered, sum.Taps)
	}
	// The rush had 121 backlogs, so 30/s overall bound well below 1/s per
	// chat: before /weight the VIP chat's share was an average chat's.
	if want := sc.Crowd + 1 + sc.Rush; sum.Rush.Chats != want || sum.Rush.Before.All < 30*int(sc.RushWindow/time.Second)*8/10 {
		t.Errorf("rush: %d chats, %d messages in the first window: the global rate did not bind", sum.Rush.Chats, sum.Rush.Before.All)
	}
	// The weighted share is read from enough of the VIP chat's messages
	// that one message more or less cannot flip the check: at 5 or more,
	// one less moves its share by at most a fifth, and the promise
	// (1.5×) sits well below the about 2× a weight of 5 gives here.
	if sum.Rush.After.VIP < 5 {
		t.Errorf("rush: the VIP chat got %d messages in the window after /weight: too few to measure its share", sum.Rush.After.VIP)
	}
	if !strings.Contains(out.String(), "all promises held") {
		t.Errorf("summary does not say the promises held")
	}
}
