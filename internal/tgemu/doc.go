// Package tgemu is an in-process emulator of the Telegram Bot API, for tests.
//
// It is test-only code with one exception: the demo (cmd/demo, through
// internal/demo) runs it at run time in place of Telegram. The demo is a
// developer tool, never deployed; the bot binary (cmd/bot) does not link
// tgemu.
//
// It serves the Bot API over HTTP on a loopback port (127.0.0.1:0) the way
// the bot's client (tgapi: JSON bodies) and github.com/go-telegram/bot
// (multipart/form-data) talk to it: POST <URL>/bot<token>/<method> with
// either body (application/x-www-form-urlencoded and GET query strings are
// accepted too), answered with
//
//	{"ok":true,"result":...}
//	{"ok":false,"error_code":N,"description":"...","parameters":{...}}
//
// and JSON shapes taken from github.com/go-telegram/bot/models, so the real
// client parses every reply (and every error into its error types:
// *bot.TooManyRequestsError, *bot.MigrateError, bot.ErrorForbidden, ...).
//
// Supported methods: getMe, getUpdates (long polling; an offset more than
// 10 beyond the next update_id is ignored, as Telegram ignores it, and
// SetNextUpdateID moves the id sequence, e.g. below ids already handed out),
// sendMessage, editMessageText, setMyCommands, getMyCommands (a language_code
// of two letters, as Telegram takes), setMyDescription, getMyDescription,
// setMyShortDescription, getMyShortDescription, getChatMember
// (SetChatMemberStatus), setWebhook,
// getWebhookInfo, deleteWebhook, answerCallbackQuery, getMyStarBalance. Method names are case-insensitive, as in Telegram. Any
// other method is answered 404 "Not Found"; a wrong token 401 "Unauthorized".
//
// On top of that the emulator enforces Telegram's flood limits (see Limits;
// an accepted editMessageText counts like a message, answerCallbackQuery
// counts against nothing; where Telegram publishes no rule, a switch plays
// it both ways: Limits.Replies, Limits.RetryAfterCap), validates
// sendMessage and editMessageText the way Telegram does (length in UTF-16
// code units, HTML/MarkdownV2/Markdown markup, emptiness and "message is
// not modified" judged on the parsed text and entities (ParseFormatted),
// chat state, inline keyboards read as the Bot API server reads them:
// callback_data 1-64 bytes, a non-empty text, the first action field in
// the server's order, unknown fields ignored; see keyboard.go) and
// answerCallbackQuery (text at most 200 characters), lets tests
// inject user updates, button taps (InjectCallbackQuery: the query must be
// answered once, within CallbackAnswerTimeout of the tap, else 400 "query
// is too old and response timeout expired or query ID is invalid") and
// transport faults (see Fault; HeldResponse delivers a message and never
// answers), answer every request after a network latency (WithLatency,
// SetLatency: half before processing, half after; WithJitter: each half
// drawn within ±f of itself per request, as a network jitters), mark messages deleted or too old to edit (DeleteMessage,
// MakeUneditable), and records everything the bot
// did (Messages, Requests, Stats) with wait helpers that block on change
// notifications rather than polling (WaitForMessages, WaitUntil).
//
// Typical use:
//
//	emu, err := tgemu.New(tgemu.WithToken(token))
//	...
//	defer emu.Close()
//	b, err := bot.New(token, bot.WithServerURL(emu.URL()))
//	emu.AddChat(models.Chat{ID: 42})
//	_, err = b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 42, Text: "hi"})
//	msgs, err := emu.WaitForMessages(ctx, 42, 1)
//
// Webhooks: while one is set by setWebhook, queued updates are POSTed to it
// one at a time with X-Telegram-Bot-Api-Secret-Token, resent after a
// timeout or a non-2xx answer (WithWebhookTiming, WebhookDeliveries,
// last_error_message in getWebhookInfo); only an https:// URL is accepted,
// or also http:// with WithLocalBotAPI (a local Bot API server). SetWebhook
// sets the state only (getUpdates answered 409), without deliveries.
//
// Not emulated: allowed_updates (every update is delivered), concurrent
// webhook connections (max_connections), Telegram giving up on a webhook
// update after some attempts (the emulator resends until a 2xx), the 24 h
// expiry of unconfirmed updates, editing inline messages (inline_message_id), the
// "entities" parameter (markup is checked only through parse_mode), and
// entities in returned messages (their text is returned with the markup
// removed, but without entities, and not trimmed); the entities Telegram
// finds by itself (URLs, mentions, commands) and its merging of
// overlapping entities are not computed.
//
// The emulator never writes to stdout or stderr: it logs (at Debug level, and
// never the bot token) only to the *slog.Logger given with WithLogger.
package tgemu
