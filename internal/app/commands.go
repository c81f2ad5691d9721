package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"

	"github.com/go-telegram/bot"

	"github.com/codemojex/codemojex/internal/gameui"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
)

// username is the bot's username ("" until getMe answered).
func (a *App) username() string {
	if me := a.me.Load(); me != nil {
		return me.Username
	}
	return ""
}

// registerHandlers routes commands and callback queries to their
// handlers on m: the player commands to the game UI (gameui), the admin
// commands to internal/admin's (behind its gate, as /broadcast is), taps to
// the tapdata router, the bot's membership changes to noReply (only
// chatMiddleware's record); anything else goes to m's default (the game
// UI's Other: guesses as plain emoji messages).
func (a *App) registerHandlers(m *update.Mux) {
	a.ui.Register(m)
	a.admin.Register(m)
	m.RouteFunc(update.IsCommand("broadcast", a.username), a.admin.Gate(a.bc.OnCommand))
	m.RouteFunc(update.IsCommand("broadcasts", a.username), a.admin.Gate(a.bc.OnList))
	m.Route(update.IsCallbackQuery, a.taps)
	m.RouteFunc(isMyChatMember, noReply)
}

// registerCommands sets the command menu and the descriptions in every
// language of the catalog (gameui.Menus): setMyCommands,
// setMyDescription and setMyShortDescription for each language's
// two-letter code (pt-BR's as "pt": Telegram takes ISO 639-1 codes and
// shows a user the menu of their language_code's), and the default
// language's also without a code (every other user's). Like getMe,
// getUpdates and answerCallbackQuery (callback.go), they are direct Bot
// API calls, not chat messages; a failure is logged and the rest go on.
func (a *App) registerCommands(ctx context.Context) {
	var wg sync.WaitGroup
	for _, m := range gameui.Menus(a.cat) {
		wg.Go(func() { a.registerMenu(ctx, m) })
	}
	wg.Wait()
}

// registerMenu sets the commands and descriptions of m (registerCommands:
// the languages' calls run side by side, each language's in turn).
func (a *App) registerMenu(ctx context.Context, m gameui.Menu) {
	code, _, _ := strings.Cut(m.Lang, "-")
	codes := []string{code}
	if m.Lang == i18n.Default {
		codes = []string{"", code}
	}
	for _, c := range codes {
		if err := a.api.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: m.Commands, LanguageCode: c}); err != nil {
			a.log.Warn("setMyCommands failed; the command menu is unchanged", slog.String("language", c), slog.Any("err", a.redactor.Error(err)))
		}
		if err := a.api.SetMyDescription(ctx, &bot.SetMyDescriptionParams{Description: m.Description, LanguageCode: c}); err != nil {
			a.log.Warn("setMyDescription failed", slog.String("language", c), slog.Any("err", a.redactor.Error(err)))
		}
		if err := a.api.SetMyShortDescription(ctx, &bot.SetMyShortDescriptionParams{ShortDescription: m.ShortDescription, LanguageCode: c}); err != nil {
			a.log.Warn("setMyShortDescription failed", slog.String("language", c), slog.Any("err", a.redactor.Error(err)))
		}
	}
}

// isGroupAdmin reports whether user administers (or created) group chat
// (getChatMember): gameui asks it before a group's language is set.
// Errors: the Bot API's; no client in this role.
func (a *App) isGroupAdmin(ctx context.Context, chat, user int64) (bool, error) {
	if a.api == nil {
		return false, errors.New("app: no Bot API client in this role")
	}
	st, err := a.api.ChatMemberStatus(ctx, chat, user)
	if err != nil {
		return false, a.redactor.Error(err)
	}
	return st == "administrator" || st == "creator", nil
}

// localizeToast says the router's own toasts (a refused button, a tap to
// retry) and the admin buttons' refusal (adminTap) in the tapper's language (the tapdata.Router's Localize); every
// other toast is said in it already.
func (a *App) localizeToast(r *update.Request, toast string) string {
	id := ""
	switch toast {
	case tapdata.ToastInvalidButton:
		id = "toast_invalid_button"
	case tapdata.ToastOldButton:
		id = "toast_old_button"
	case tapdata.ToastRetry:
		id = "toast_retry"
	case toastAdminOnly:
		id = "toast_admins_only"
	default:
		return toast
	}
	return a.cat.Text(r.Lang, id, nil)
}
