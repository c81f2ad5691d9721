package app

import (
	"context"
	"fmt"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/internal/admin"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
)

// initAdmin builds the admin commands and the administration API over the
// app's stores, after the flood limits (initFloods).
func (a *App) initAdmin() error {
	var err error
	a.procs = procs.New(a.c, a.opt.tag)
	a.admin, err = admin.New(admin.Config{Processes: a.procs, Outbound: a.store, Inbox: a.inbox, Directory: a.chatDir, Audience: a.audience,
		Games: a.games, Broadcasts: a.bc, Audit: a.audit, Flood: a.floods.Limiter(), Client: a.c, Gatherer: a.reg,
		Rates: a.cfg.Rates, IsAdmin: a.cfg.IsAdmin, Username: a.username, Refusal: a.refusal})
	if err != nil {
		return fmt.Errorf("app: %w", err)
	}
	return nil
}

// Admin returns the app's administration API (the console's backend).
func (a *App) Admin() *admin.Admin { return a.admin }

// refusal is what a player who is not an admin gets for admin command
// name, in their language (admin.Config.Refusal).
func (a *App) refusal(r *update.Request, name string) string {
	return a.cat.Text(r.Lang, "admins_only", map[string]any{"Command": name})
}

// toastAdminOnly answers a tap on an admin's button by anyone else (in
// English: localizeToast says it in the tapper's language).
const toastAdminOnly = "⛔ For bot admins only, in a private chat with the bot."

// adminTap is the admin gate for taps (as admin.Admin.Gate is for the
// admin commands): only an admin, in the admin's private chat, may tap the
// buttons h handles (the broadcasts'); anyone else gets toastAdminOnly and
// nothing happens.
func (a *App) adminTap(h tapdata.Handler) tapdata.Handler {
	return func(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
		m := q.Message.Message
		if !a.cfg.IsAdmin(q.From.ID) || !update.IsPrivate(m) || m.Chat.ID != q.From.ID {
			return toastAdminOnly
		}
		return h(ctx, r, out, q, d)
	}
}
