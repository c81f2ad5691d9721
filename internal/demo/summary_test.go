package demo

import (
	"errors"
	"testing"
	"time"
)

func TestSummarizeFlagsStarvationLossAndAWeightWithoutEffect(t *testing.T) {
	cfg := QuickScene()
	chats := []ChatStats{
		{Name: "Burst", Role: RoleBurst, Sent: 9, Answered: 9, Delivered: 10, Broadcasts: 1},
		{Name: "Ana", Role: RoleQuiet, Sent: 5, Answered: 5, Delivered: 6, Broadcasts: 1,
			Waits: []time.Duration{time.Second, 5 * time.Second}},
		{Name: "Crowd01", Role: RoleCrowd, Sent: 1, Answered: 0, Delivered: 0},
	}
	rush := rushShare{Chats: 61, Measured: true, Before: windowCount{VIP: 3, All: 180}, After: windowCount{VIP: 4, All: 180}}
	s := summarize(cfg, time.Second, chats, rush, limitsSeen{tooMany: 1}, []error{errors.New("boom")}, true)
	if s.OK() {
		t.Fatal("summary OK despite a starved chat, a lost reply and a 429")
	}
	failed := map[string]bool{}
	for _, c := range s.Checks {
		failed[c.Name] = !c.OK
	}
	for _, name := range []string{"quiet chats were not starved", "no message lost", "within Telegram's limits, zero 429s",
		"a raised weight raised the chat's share while the global rate bound"} {
		if !failed[name] {
			t.Errorf("check %q did not fail", name)
		}
	}
	if failed["the bot ran the whole scene"] {
		t.Error("bot check failed though the bot was alive")
	}
}

// The tap check fails on an unanswered tap or a p99 over a second, and
// holds otherwise.
func TestSummarizeChecksTapLatency(t *testing.T) {
	cfg := QuickScene()
	check := func(c ChatStats) bool {
		t.Helper()
		for _, ch := range summarize(cfg, time.Second, []ChatStats{c}, rushShare{}, limitsSeen{}, nil, true).Checks {
			if ch.Name == "taps answered within 1 s" {
				return ch.OK
			}
		}
		t.Fatal("no tap check")
		return false
	}
	fast := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 30 * time.Millisecond}
	if !check(ChatStats{Role: RoleTap, Taps: 3, TapWaits: fast}) {
		t.Error("fast, all answered: the check failed")
	}
	if check(ChatStats{Role: RoleTap, Taps: 4, TapWaits: fast}) {
		t.Error("an unanswered tap passed")
	}
	if check(ChatStats{Role: RoleTap, Taps: 3, TapWaits: append(fast[:2:2], 1500*time.Millisecond)}) {
		t.Error("a 1.5 s answer passed")
	}
	if check(ChatStats{Role: RoleTap}) {
		t.Error("no taps at all passed")
	}
}
