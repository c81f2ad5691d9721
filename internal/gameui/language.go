package gameui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/notifier"
)

// /language: "/language" alone answers a menu of the languages (a button
// each, tapdata.KindLanguage, answered by LanguageTap); "/language ru" (a
// language tag or code of the catalog) sets it at once. In a private chat
// it sets the sender's language; in a group the group's (its board's and
// its menu answers'), which only the group's administrators may set
// (Config.IsGroupAdmin). The choice is kept by chats.Languages and read
// with every update (update.Request.Lang, ChatLang); a game in progress
// has its board redrawn in the new language.

func (u *UI) onLanguage(ctx context.Context, r *update.Request) (out update.Outcome) {
	m := r.Update.Message
	c, _ := u.cmd(r.Update)
	arg := strings.TrimSpace(c.Args)
	if arg == "" {
		out.Then(func(ctx context.Context, o *update.Outcome) error { return u.sendLanguageMenu(ctx, r, o, m) })
		return out
	}
	lang, ok := i18n.Parse(arg)
	if !ok {
		u.reply(&out, m, u.texts(r).T("language_unknown", map[string]any{"Code": arg}))
		return out
	}
	var user int64
	if m.From != nil {
		user = m.From.ID
	}
	text, err := u.setLanguage(ctx, r, &out, m.Chat.ID, !update.IsPrivate(m), user, lang)
	if err != nil {
		return update.Failed(err)
	}
	u.reply(&out, m, text)
	return out
}

// onLanguageTap sets the language of a menu button (d.Arg) for the tapper
// (a private chat) or the group (its administrators only); the toast says
// what it did.
func (u *UI) onLanguageTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	lang, ok := i18n.Parse(d.Arg)
	if !ok {
		return tapdata.ToastInvalidButton
	}
	m := q.Message.Message
	text, err := u.setLanguage(ctx, r, out, m.Chat.ID, !update.IsPrivate(m), q.From.ID, lang)
	if err != nil {
		u.log.Error("language tap failed", slog.Int64("chat", m.Chat.ID), slog.Any("err", err))
		return tapdata.ToastRetry
	}
	return text
}

// setLanguage makes lang the language of user (private chat) or of group
// chat (when user administers it) and returns what to answer: in lang
// once set, in r's language when refused. A game in progress in chat has
// its board redrawn in lang (a hook on out). Errors: Valkey's, the admin
// check's.
func (u *UI) setLanguage(ctx context.Context, r *update.Request, out *update.Outcome, chat int64, group bool, user int64, lang string) (string, error) {
	id, next := user, *r
	next.Lang = lang
	text := u.cat.For(lang).T("language_set", map[string]any{"Name": u.cat.Name(lang)})
	if group {
		admin := false
		if u.isGroupAdmin != nil && user != 0 {
			var err error
			if admin, err = u.isGroupAdmin(ctx, chat, user); err != nil {
				return "", fmt.Errorf("gameui: is %d an admin of %d: %w", user, chat, err)
			}
		}
		if !admin {
			return u.texts(r).T("language_admins_only", nil), nil
		}
		id, next.Lang, next.ChatLang = chat, r.Lang, lang
		text = u.cat.For(lang).T("language_group_set", map[string]any{"Name": u.cat.Name(lang)})
	}
	if err := u.langs.Set(ctx, id, lang); err != nil {
		return "", fmt.Errorf("gameui: %w", err)
	}
	out.Then(func(ctx context.Context, o *update.Outcome) error {
		cur, err := u.games.Current(ctx, chat)
		if errors.Is(err, gamestore.ErrNoGame) || errors.Is(err, game.ErrInvalidState) {
			return nil // no game: no board to redraw
		}
		if err != nil {
			return err
		}
		return u.refreshBoard(ctx, &next, o, chat, cur, group, nil)
	})
	return text, nil
}

// sendLanguageMenu queues the /language menu in m's chat (keyed by the
// update), answering m in a group: a button per language, by its own
// name, under "Choose your language" in a private chat and "Choose this
// group's language (administrators only)" in a group (in the sender's
// language).
func (u *UI) sendLanguageMenu(ctx context.Context, r *update.Request, out *update.Outcome, m *models.Message) error {
	var rows [][]models.InlineKeyboardButton
	for _, l := range i18n.Languages() {
		d, err := u.codec.Encode(tapdata.KindLanguage, "", l, m.Chat.ID)
		if err != nil {
			return fmt.Errorf("gameui: language menu: %w", err)
		}
		b := models.InlineKeyboardButton{Text: u.cat.Name(l), CallbackData: d}
		if n := len(rows); n > 0 && len(rows[n-1]) < 2 {
			rows[n-1] = append(rows[n-1], b)
		} else {
			rows = append(rows, []models.InlineKeyboardButton{b})
		}
	}
	kb, err := json.Marshal(models.InlineKeyboardMarkup{InlineKeyboard: rows})
	if err != nil {
		return fmt.Errorf("gameui: language menu: %w", err)
	}
	msg := notifier.Message{Text: u.texts(r).T("language_choose", nil), Class: notifier.Reply, Markup: string(kb), Key: out.Key(r, "language")}
	if !update.IsPrivate(m) { // the group's language, not the sender's
		msg.Text, msg.ReplyTo = u.texts(r).T("language_group_choose", nil), m.ID
	}
	if _, err := u.notifier.Notify(ctx, m.Chat.ID, msg); err != nil {
		return fmt.Errorf("gameui: language menu in chat %d: %w", m.Chat.ID, err)
	}
	return nil
}
