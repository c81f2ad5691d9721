package config

import (
	"fmt"
	"time"

	"github.com/codemojex/codemojex/internal/flood"
)

// Flood is the intake limits on floods of updates (flood.Limits, from
// Limits; docs/floods.md). The defaults are flood.DefaultLimits.
type Flood struct {
	// FloodWindow is the intake limits' window (FLOOD_WINDOW, a Go
	// duration; 0 turns every intake limit off). See docs/floods.md.
	FloodWindow time.Duration `env:"FLOOD_WINDOW"`
	// FloodUserMessages is the most messages one user may send per window
	// (FLOOD_USER_MESSAGES; 0: no limit); the excess is dropped unhandled.
	FloodUserMessages int `env:"FLOOD_USER_MESSAGES"`
	// FloodUserTaps is the most button taps one user may send per window
	// (FLOOD_USER_TAPS; 0: no limit); a dropped tap is answered with a toast.
	FloodUserTaps int `env:"FLOOD_USER_TAPS"`
	// FloodChatMessages and FloodChatTaps are the most messages and taps
	// one group may receive per window from all its members together
	// (FLOOD_CHAT_MESSAGES, FLOOD_CHAT_TAPS; 0: no limit). Admins
	// (ADMIN_IDS) are never limited nor counted.
	FloodChatMessages int `env:"FLOOD_CHAT_MESSAGES"`
	FloodChatTaps     int `env:"FLOOD_CHAT_TAPS"`
}

// defaultFlood is flood.DefaultLimits as a Flood section.
func defaultFlood() Flood {
	l := flood.DefaultLimits()
	return Flood{FloodWindow: l.Window, FloodUserMessages: l.UserMessages, FloodUserTaps: l.UserTaps,
		FloodChatMessages: l.ChatMessages, FloodChatTaps: l.ChatTaps}
}

// Validate checks FLOOD_WINDOW (0..1 h) and each limit (0..1,000,000 per
// window). Errors: *Error.
func (f Flood) Validate() error {
	if f.FloodWindow < 0 || f.FloodWindow > time.Hour {
		return &Error{Var: "FLOOD_WINDOW", Want: fmt.Sprintf("a duration from 0 (limits off) to 1h, e.g. 10s; got %v", f.FloodWindow)}
	}
	return checkWholeNumbers(f.wholeNumbers())
}

// wholeNumbers are the rules of the section's whole-number variables.
func (f Flood) wholeNumbers() []wholeNumber {
	const want = "updates per FLOOD_WINDOW, 0 (no limit) to 1000000"
	return []wholeNumber{
		{"FLOOD_USER_MESSAGES", f.FloodUserMessages, 0, 1_000_000, want},
		{"FLOOD_USER_TAPS", f.FloodUserTaps, 0, 1_000_000, want},
		{"FLOOD_CHAT_MESSAGES", f.FloodChatMessages, 0, 1_000_000, want},
		{"FLOOD_CHAT_TAPS", f.FloodChatTaps, 0, 1_000_000, want},
	}
}

// Limits returns the section as the flood limiter's limits.
func (f Flood) Limits() flood.Limits {
	return flood.Limits{Window: f.FloodWindow, UserMessages: f.FloodUserMessages, UserTaps: f.FloodUserTaps,
		ChatMessages: f.FloodChatMessages, ChatTaps: f.FloodChatTaps}
}
