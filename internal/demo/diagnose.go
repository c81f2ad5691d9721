package demo

import (
	"fmt"

	"github.com/codemojex/codemojex/internal/tgemu"
)

// diagnose429s says, for each 429 the emulator answered, how full the
// global and the chat's 1 s windows were (accepted sends in the second
// before it), so a 429 points at the limit the bot's pacing missed.
func diagnose429s(reqs []tgemu.Request) []string {
	var out []string
	for _, th := range tgemu.Throttles(reqs) {
		out = append(out, fmt.Sprintf("chat %d: %d sends in the second before (limit 30), %d to that chat (limit 1)", th.ChatID, th.Global, th.Chat))
	}
	return out
}
