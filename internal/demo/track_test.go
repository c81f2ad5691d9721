package demo

import (
	"testing"
	"time"
)

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
