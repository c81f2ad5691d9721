// Package play is the playground (make play, docs/play.md): the real bot,
// a throwaway Valkey, the Bot API emulator and the operator console, as the
// demo starts them (internal/demo.StartStack), plus a local web page that
// looks and behaves like a Telegram chat list. Simulated users (each with
// a language_code) type into their private chats or a group; what they type
// is injected as a message update (tgemu.Emulator.InjectMessage), a tap on
// an inline button as a callback_query (InjectCallbackQuery); the bot's
// messages are shown with their keyboards and edited in place, from a JSON
// state the page polls every 500 ms. Buttons stage what the demo stages: a
// burst, a flood from one user, a /broadcast from the admin, Telegram
// slowing down (the emulator's latency) or answering 429 (its faults).
//
// Like the emulator it is a developer tool, never deployed: the bot binary
// does not link it. The page is plain HTML, CSS and vanilla JavaScript
// embedded in the binary (no build step).
package play
