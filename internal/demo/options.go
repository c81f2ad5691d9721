package demo

import (
	"io"
	"time"

	"github.com/codemojex/codemojex/lanes"
)

// Token is the fake, well-formed bot token the demo gives the bot and the
// emulator. It is not a real token and never leaves the machine.
const Token = "123456789:DEMO_local_emulator_token_not_real"

// Chat ids of the scene's cast (private chats: chat id = user id).
const (
	AdminID    int64 = 1_000_001
	BurstID    int64 = 2_000_001
	firstQuiet int64 = 3_000_001
	firstCrowd int64 = 4_000_001
	TapperID   int64 = 5_000_001
	// VIPID is the crowd chat whose weight the admin raises in the rush.
	VIPID       int64 = 6_000_001
	firstRush   int64 = 7_000_001
	burstWeight       = 5
	vipWeight         = 5
)

// Options configure Run. The zero value of a field means its default (see
// FullScene and QuickScene).
type Options struct {
	// Name prefixes the errors of starting the stack, as the command that
	// runs it is called (default "demo"; the playground's "play").
	Name string
	// Scene sizes the scripted scene.
	Scene Scene
	// BotBinary is a prebuilt bot to run (a relative path is the working
	// directory's; BotFlag checks a -bot flag's); "" builds ./cmd/bot with
	// go build into a temporary directory (the working directory must be
	// inside the module).
	BotBinary string
	// BuildFlags are extra go build flags for the bot (e.g. "-race").
	BuildFlags []string
	// ValkeyURL uses an existing, empty Valkey/Redis database instead of a
	// throwaway server ("" starts one).
	ValkeyURL string
	// ConsoleAddr, when set, has the bot serve its operator console there
	// (CONSOLE_ADDR) with a fresh random token, printed with the address, to
	// watch the scene in a browser (docs/console.md).
	ConsoleAddr string
	// HTTPAddr, when set, has the bot serve its health check (/healthz)
	// and /metrics there (HTTP_ADDR), the address printed with the
	// others; "" lets the bot pick a free loopback port, not printed.
	HTTPAddr string
	// ExtraEnv is appended to the bot's environment (a later value of a
	// key wins), e.g. the playground's flood limits over the demo's.
	ExtraEnv []string
	// LanesTag is the hash tag of the bot's keys: the bot's
	// VALKEY_KEY_TAG, and the tag the "queued" column reads its lanes
	// store under (default lanes.DefaultTag, the bot's default).
	LanesTag string
	// Out receives the live table and the summary (nil: io.Discard).
	Out io.Writer
	// TTY redraws the table in place with ANSI escapes; otherwise a plain
	// progress line is printed every PlainEvery.
	TTY bool
	// Refresh is the redraw period on a TTY (default 250 ms); PlainEvery
	// the plain progress period (default 2 s).
	Refresh, PlainEvery time.Duration
}

// Scene sizes the scripted scene.
type Scene struct {
	// Burst is how many /help commands the bursting chat sends at once.
	Burst int
	// Quiet is the number of quiet chats playing the game.
	Quiet int
	// Crowd is the number of extra chats that only say /start, so the
	// broadcast fans out wide enough to press on the global limit (0:
	// none; the only field whose zero value is not replaced by a default).
	Crowd int
	// MinMoves is how many moves each quiet chat makes at least; they keep
	// playing until the burst has drained.
	MinMoves int
	// Think is the quiet players' pause between a reply and their next
	// message (a deterministic spread around it).
	Think time.Duration
	// QuietMaxWait is the starvation threshold: a quiet chat's reply may
	// never wait longer than this.
	QuietMaxWait time.Duration
	// Rush is the number of chats that only join the rush (after the
	// broadcast: they are not in its audience), with the crowd and the VIP
	// chat.
	Rush int
	// RushPer is how many /help commands each crowd chat sends at once in
	// the rush (the VIP chat sends 3 × RushPer), the phase where the global rate
	// binds: with more than 30 chats' backlogs at once, 30 messages/s
	// overall is less than 1 per chat per second.
	RushPer int
	// RushWindow is how long the VIP chat's share is counted before the
	// admin raises its weight; after it, the share is counted for 1.5 ×
	// RushWindow. The raised weight shows as bursts of up to 5 messages a
	// ring turn (paced at 1 msg/s), so the longer window holds more of them
	// and one message more or less cannot flip the verdict.
	RushWindow time.Duration
	// Deadline bounds the scene; messages missing by then count as lost.
	Deadline time.Duration
}

// FullScene is the scene `make demo` plays (about 60 s).
func FullScene() Scene {
	return Scene{Burst: 20, Quiet: 4, Crowd: 40, Rush: 80, MinMoves: 6, Think: 400 * time.Millisecond,
		QuietMaxWait: 3 * time.Second, RushPer: 8, RushWindow: 8 * time.Second, Deadline: 120 * time.Second}
}

// QuickScene is a shorter scene for tests (about 55 s: the rush needs many
// more than 30 chats with backlogs, so the global rate binds well below
// Telegram's 1 message/s per chat and a weight has room to show).
func QuickScene() Scene {
	return Scene{Burst: 8, Quiet: 3, Crowd: 12, Rush: 108, MinMoves: 4, Think: 300 * time.Millisecond,
		QuietMaxWait: 3 * time.Second, RushPer: 8, RushWindow: 8 * time.Second, Deadline: 110 * time.Second}
}

func (o Options) withDefaults() Options {
	def := FullScene()
	s := &o.Scene
	if s.Burst <= 0 {
		s.Burst = def.Burst
	}
	if s.Quiet <= 0 {
		s.Quiet = def.Quiet
	}
	if s.Crowd < 0 {
		s.Crowd = 0
	}
	if s.MinMoves <= 0 {
		s.MinMoves = def.MinMoves
	}
	if s.Think <= 0 {
		s.Think = def.Think
	}
	if s.QuietMaxWait <= 0 {
		s.QuietMaxWait = def.QuietMaxWait
	}
	if s.Rush < 0 {
		s.Rush = 0
	}
	if s.RushPer <= 0 {
		s.RushPer = def.RushPer
	}
	if s.RushWindow <= 0 {
		s.RushWindow = def.RushWindow
	}
	if s.Deadline <= 0 {
		s.Deadline = def.Deadline
	}
	if o.Name == "" {
		o.Name = "demo"
	}
	if o.LanesTag == "" {
		o.LanesTag = lanes.DefaultTag
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.Refresh <= 0 {
		o.Refresh = 250 * time.Millisecond
	}
	if o.PlainEvery <= 0 {
		o.PlainEvery = 2 * time.Second
	}
	return o
}
