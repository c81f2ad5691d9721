// Package app is the codemojex program: it wires configuration, Valkey, the
// Telegram update intake, the handlers, the notifier and the workers, and
// the HTTP server of /healthz and /metrics (internal/httpserver, its checks
// internal/health, the webhook internal/webhook; http.go). cmd/bot is a thin main around it, so tests
// run the whole program in-process against internal/tgemu and a real Valkey.
//
// # Roles
//
// BOT_ROLE=poller runs the update intake (getUpdates, or a webhook's
// receiving end) and records updates; handler claims recorded updates and
// runs the handlers (HANDLERS at once, internal/handling); worker runs the
// notification workers; all runs everything. Any number of processes may
// share one Valkey; in polling mode only one of them polls at a time:
// pollers compete for a lease in Valkey ("{T}:app:poller", SET NX PX,
// renewed by its token), and the others log "another poller is active ...,
// waiting" and take over when the lease lapses. In webhook mode
// (internal/webhook) every poller receives; the lease holder only registers the
// command menu and keeps broadcast progress up to date.
//
// # Intake
//
// Update intake (the getUpdates loop, the poller lease, the update queue on
// lanes with one lane per chat, the handled marks and the journals, and
// their scripts) is package internal/intake: nothing is lost and nothing
// applied twice (see its doc). app runs the getUpdates loop while it holds
// the lease (or receives webhook POSTs) and its handlers (internal/handling) claim the
// update queue: a chat's updates one at a time, in order, different
// chats concurrently, a failing update retried and then dead-lettered. Every message an
// update enqueues carries a notifier idempotency key derived from its
// update_id ("upd:<id>:<reply index>", "upd:<id>:progress", and "upd:<id>"
// for a /broadcast), so an update handled again after a crash between
// enqueueing and finishing enqueues nothing twice, even a reply already
// sent and acked. A move that changes a game first journals the game's
// fingerprint and its replies (internal/gameui's journal.go).
//
// # Keys
//
// Every key starts with the hash tag {T}, VALKEY_KEY_TAG (default
// lanes.DefaultTag; WithTag overrides it), shared with lanes, notifier,
// chatstate, gamestore and intake, so every script runs on Valkey Cluster
// and bots with different tags share one Valkey without meeting. The broadcast audience and the chat
// directory ({T}:app:chats..., {T}:app:chatname..., {T}:app:chatidx...) are
// package internal/chats', the game boards' ({T}:app:board:<chat_id>,
// {T}:app:comp:<chat_id>:<game>) internal/gameui's, the broadcasts'
// ({T}:app:bc, {T}:app:bcp:<id>) internal/broadcast's, the audit stream
// ({T}:app:audit) internal/admin's, the /healthz probe ({T}:app:health)
// internal/health's; docs/keys.md lists every key of the program.
//
// # Buttons
//
// /play sends the game's board (internal/gameui: the player commands,
// typed guesses and the board, registered on the app's mux): one message
// with an inline keyboard (the palette, ⌫, ✅, 🏳️), kept up to date in
// place by coalesced edits (notifier.EditLatest) after every tap, typed
// guess and give-up. A tap is a callback_query update, handled like any
// update (inbox, once per update_id): App.taps (a tapdata.Router) verifies
// its signed callback data and routes it by kind (a game board's is
// tapdata.KindGame, gameui's Tap; a broadcast button's
// tapdata.KindBroadcast), then answers it (callback.go's answerCallback)
// with answerCallbackQuery straight from the handler, not through the lanes: an
// answer is not a chat message, no flood limit counts it, and the button
// spins until it comes, so it must not wait behind a broadcast's backlog.
// Its failures are retried a bounded number of times, logged and counted
// (codemojex_callback_answers_total{result}). Each player composes their
// own guess, stored in Valkey (gameui's compose.lua, applied once per
// update_id), so any poller process can handle any tap; ✅ plays it like a
// typed guess.
//
// # Admin commands
//
// The admin commands (/weight, /weights, /lanes, /dlq, /audit), the
// administration API they share with the console, and the audit log are
// internal/admin's: the app builds it over its stores (admin.go) and puts
// its commands on the mux (admin.Admin.Register). They answer only in a
// private chat between an admin (ADMIN_IDS) and the bot; in a group an
// admin gets a short hint with no data and nothing happens. Every admin
// action that changes state (a weight set, a broadcast sent or stopped,
// dead letters requeued or purged) is logged with the admin's user id and
// appended to the audit stream, which /audit shows.
//
// /broadcast is internal/broadcast's (its doc says how a preview is
// decided, sent, tracked, stopped): the app routes the command and the taps
// of kind tapdata.KindBroadcast to it behind the admin gates
// (admin.Admin.Gate, adminTap), runs its Tracker while it holds the poller
// lease, and gives it to the admin API, which lists and stops broadcasts
// through it; previews expire on the app's clock (WithClock).
package app
