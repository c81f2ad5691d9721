// Package demo runs codemojex end to end on one machine without a Telegram
// token: a throwaway Valkey (internal/valkeyserver), the in-repo Bot API
// emulator (internal/tgemu) with Telegram's flood limits, and the real bot
// binary (cmd/bot, built with go build and run as a child process pointed at
// both). A scripted scene then plays on the emulator: one chat bursts many
// commands, quiet chats play the game by typing, a tapper plays it with the
// board's buttons, an admin raises the bursting chat's weight and
// broadcasts to everyone; then, in the rush, 121 chats have backlogs at once
// so the global rate binds, and the admin raises one (VIP) chat's weight. A
// live per-chat table shows what each chat received and how long it waited,
// and the run ends with a Summary whose checks say whether the queue kept
// its promises: quiet chats were not starved, no message was lost,
// Telegram's limits held (no 429), taps were answered within a second
// (tap-to-answer latency; the tapper taps at a human pace, and a tap
// answered with the intake limit's toast counts as limited, not answered),
// the raised weight raised the VIP chat's share. Ctrl-C stops the demo
// with the figures so far and "interrupted": nothing is judged.
//
// cmd/demo is the command (make demo); Run is the whole program.
package demo
