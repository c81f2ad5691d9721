// Package tgapi is codemojex's one Telegram Bot API client: every call the
// bot makes (getUpdates, setWebhook, deleteWebhook, getWebhookInfo,
// sendMessage, editMessageText, answerCallbackQuery, getMe, setMyCommands,
// getMyStarBalance) goes through one request path and one decoder, and
// every failure is one typed error, *Error, carrying the HTTP status,
// error_code, description, parameters.retry_after and
// parameters.migrate_to_chat_id of the answer (or the transport's cause
// when none came, and whether the request had been written).
//
// Callers decide by fields where Telegram gives them: IsRetryAfter (429),
// MigrateTo (400 with migrate_to_chat_id), IsCode, IsForbidden,
// IsUnauthorized, IsConflict, Status. Where only the description tells two
// failures apart ("message is not modified", "chat not found", "bot was
// blocked by the user"...), Error.Kind reads it from one table (kinds in
// errors.go), documented with its source.
//
// The token is in every request URL: it never appears in an *Error (a
// *url.Error's URL is redacted, and every text passes through
// redact.Redactor).
//
// Requests are JSON bodies (application/json); parameters and results are
// go-telegram/bot's *Params types and models. The package imports nothing
// of internal/ (worker/, public, uses it).
package tgapi
