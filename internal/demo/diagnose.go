package demo

import (
	"fmt"
	"time"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// diagnose429s says, for each 429 the emulator answered, how full the
// global and the chat's 1 s windows were (accepted sends in the second
// before it), so a 429 points at the limit the bot's pacing missed.
func diagnose429s(reqs []tgemu.Request) []string {
	var out []string
	for _, r := range reqs {
		if r.ErrorCode != 429 || r.Fault != tgemu.FaultNone {
			continue
		}
		global, chat := 0, 0
		for _, a := range reqs {
			if !a.Accepted() || !a.Time.After(r.Time.Add(-time.Second)) || a.Time.After(r.Time) {
				continue
			}
			global++
			if a.ChatID == r.ChatID {
				chat++
			}
		}
		out = append(out, fmt.Sprintf("chat %d: %d sends in the second before (limit 30), %d to that chat (limit 1)", r.ChatID, global, chat))
	}
	return out
}
