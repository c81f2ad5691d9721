package app

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/notifier"
)

// chatOf returns the chat an update comes from (0 when none).
func chatOf(u *models.Update) int64 {
	switch {
	case u.Message != nil:
		return u.Message.Chat.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.Chat.ID
	case u.CallbackQuery != nil && u.CallbackQuery.Message.Message != nil:
		return u.CallbackQuery.Message.Message.Chat.ID
	case u.MyChatMember != nil:
		return u.MyChatMember.Chat.ID
	case u.ChatMember != nil:
		return u.ChatMember.Chat.ID
	}
	return 0
}

// senderOf returns the user an update comes from and their language_code
// (0 and "" when none).
func senderOf(u *models.Update) (int64, string) {
	var from *models.User
	switch {
	case u.Message != nil:
		from = u.Message.From
	case u.EditedMessage != nil:
		from = u.EditedMessage.From
	case u.CallbackQuery != nil:
		from = &u.CallbackQuery.From
	}
	if from == nil {
		return 0, ""
	}
	return from.ID, from.LanguageCode
}

// chatMiddleware records the chat as known (the broadcast audience) and
// how it is named (the chat directory: sent only when this process has not
// recorded that name yet, written only when it changed),
// and marks it active in the notifier (a chat that blocked the bot and talks to
// it again gets notifications again) before any handler runs, and reads
// the languages the handlers answer in (Request.Lang: the sender's
// /language choice, else their language_code, i18n.Normalize'd;
// Request.ChatLang: a group's choice): the SADD, the name's EVAL and the
// languages' HGETs ride in MarkActive's pipeline (with, in a private chat,
// the user's language_code recorded for broadcasts when it changed:
// chats.Languages.RecordCode), one round trip for all (a migrated
// chat's alias target takes more). A failure is the update's Outcome (an
// infrastructure error: retried); the handler does not run.
func chatMiddleware(audience *chats.Audience, dir *chats.Directory, langs *chats.Languages, n *notifier.Notifier) update.Middleware {
	return func(next update.Handler) update.Handler {
		return update.HandlerFunc(func(ctx context.Context, r *update.Request) update.Outcome {
			u := r.Update
			user, lcode := senderOf(u)
			r.Lang = i18n.Normalize(lcode)
			if chat := chatOf(u); chat != 0 {
				also := []valkey.Completed{audience.AddCmd(chat)}
				id, name, ok := nameOf(u)
				rec, named := valkey.Completed{}, false
				if ok && id == chat {
					rec, named = dir.Record(chat, name)
				}
				reads := len(also) // the languages' HGETs: the user's, then a group's
				if user != 0 {
					also = append(also, langs.GetCmd(user))
				}
				if chat < 0 {
					also = append(also, langs.GetCmd(chat))
				}
				nread := len(also) - reads
				if named {
					also = append(also, rec)
				}
				// A private chat's language_code, so a broadcast knows its
				// language (recorded when it changed; "" for the default).
				code, coded := "", false
				var codeCmd valkey.Completed
				if user != 0 && user == chat {
					if code = i18n.Normalize(lcode); code == i18n.Default {
						code = ""
					}
					if codeCmd, coded = langs.RecordCode(user, code); coded {
						also = append(also, codeCmd)
					}
				}
				res, err := n.Chats().MarkActiveRead(ctx, chat, also...)
				if err != nil {
					return update.Failed(fmt.Errorf("record chat %d: %w", chat, err))
				}
				if err := readLangs(r, res[reads:reads+nread], user != 0, chat < 0); err != nil {
					return update.Failed(fmt.Errorf("languages of chat %d: %w", chat, err))
				}
				if named {
					dir.Recorded(chat, name)
				}
				if coded {
					langs.CodeRecorded(user, code)
				}
			}
			return next.Handle(ctx, r)
		})
	}
}

// readLangs sets r's languages from the HGETs of chatMiddleware: the
// user's choice (when user), then the group's (when group).
func readLangs(r *update.Request, res []valkey.ValkeyResult, user, group bool) error {
	if user {
		l, err := chats.ReadLang(res[0])
		if err != nil {
			return err
		}
		if l != "" {
			r.Lang = i18n.Normalize(l)
		}
		res = res[1:]
	}
	if group {
		l, err := chats.ReadLang(res[0])
		if err != nil {
			return err
		}
		if l != "" {
			r.ChatLang = i18n.Normalize(l)
		}
	}
	return nil
}

// newMux builds the update handlers' mux: the extra handlers (WithHandler)
// first, then the commands, callback queries and my_chat_member
// (registerHandlers), the game UI's Other for the rest, ignoring what it
// ignores (gameui.UI.Ignores); every one under the handlers' Recover
// (handling.Metrics.Recover, outermost) and chatMiddleware. Its Ignores is
// the intake's filter (ignores): an update it ignores is dropped before
// it is recorded.
func (a *App) newMux() *update.Mux {
	m := update.NewMux()
	m.Use(a.hm.Recover(a.log), chatMiddleware(a.audience, a.chatDir, a.langs, a.notifier))
	for _, h := range a.opt.handlers {
		m.RouteFunc(h.match, h.h)
	}
	a.registerHandlers(m)
	m.Default(update.HandlerFunc(a.ui.Other))
	m.Ignoring(a.ui.Ignores)
	return m
}

// ignores is the intake's filter (intake.Inbox.WithFilter): why the bot
// does not act on the update of JSON raw (the mux's Ignores of it), ""
// when it does or may: until getMe answered (a command "@<username>" or a
// reply to the bot cannot be told from one to another bot) and for a body
// that does not decode (recorded, so the handler dead-letters it as it
// did).
func (a *App) ignores(raw json.RawMessage) string {
	if a.me.Load() == nil {
		return ""
	}
	var u models.Update
	if json.Unmarshal(raw, &u) != nil {
		return ""
	}
	return string(a.mux.Ignores(&u))
}

// isMyChatMember matches the bot's own membership changes (added to or
// removed from a group, blocked or unblocked in a private chat): no
// handler answers them, chatMiddleware records the chat (known, active).
func isMyChatMember(u *models.Update) bool { return u.MyChatMember != nil }

// noReply is the handler of updates only chatMiddleware acts on.
func noReply(context.Context, *update.Request) update.Outcome { return update.Outcome{} }
