// Package gameui is the game's chat interface: the player commands
// (/start, /help, /play, /guess, /giveup, /top, /language), guesses typed as plain
// text (in a private chat, or as a reply to the bot in a group), and the
// board: one message per game with an inline keyboard (the palette, ⌫, ✅,
// 🏳️), kept up to date in place by coalesced edits (notifier.EditLatest)
// after every tap, typed guess and give-up.
//
// Handlers return an update.Outcome (internal/update); internal/app wires
// them: Register puts the commands on its mux, Other is the mux's default,
// Tap handles the taps of kind tapdata.KindGame (routed by a
// tapdata.Router, which also answers them). The game rules are package
// game; the games and leaderboards live in internal/gamestore; replies and
// board edits go out through the notifier.
//
// A game move is applied once per update, also when the update is handled
// again after a crash: it is journalled first in the update's journal
// (intake's; fields "pre", the game's fingerprint before the move, and
// "out", the replies it produces: journal.go). Each player composes their
// own guess on the board, stored in Valkey (lua/compose.lua, applied once
// per update_id), so any process can handle any tap; ✅ plays it like a
// typed guess.
//
// Keys (docs/keys.md), {T} the lanes tag:
//
//	{T}:app:board:<chat_id>           hash    the chat's board: g (game id), j (job id of its sendMessage), l (its language)
//	{T}:app:comp:<chat_id>:<game id>  hash    the players' compositions of a game (compose.lua)
//
// Every text is the catalog's (internal/i18n) in the sender's language
// (update.Request.Lang); a group's board speaks the group's language
// (Request.ChatLang, set by its admins with /language), else that of the
// player who started the game (kept with the board: field l). render.go
// renders package game's texts from the catalog. /language sets the
// sender's language (in a group, the group's: admins only), kept by
// chats.Languages.
package gameui

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"

	"github.com/go-telegram/bot/models"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/gamestore"
	"github.com/codemojex/codemojex/internal/i18n"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/luascript"
	"github.com/codemojex/codemojex/notifier"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS

// Journal is an update's journal (*intake.Inbox): fields kept until the
// update is handled. gameui reads and writes the fields "pre" and "out".
type Journal interface {
	LoadJournal(ctx context.Context, id int64) (intake.Journal, error)
	SaveJournal(ctx context.Context, id int64, kv ...string) error
}

// Config is what the game UI runs on. Every field but Random, Catalog and
// IsGroupAdmin is required (New refuses a nil Client, Games, Notifier,
// Journal, Languages, Me or Log; Codec must come from tapdata.New).
type Config struct {
	Client   valkey.Client
	Tag      string // the lanes tag {T} of its keys
	Games    *gamestore.Store
	Notifier *notifier.Notifier
	Journal  Journal
	Codec    tapdata.Codec // signs the board's buttons (kind tapdata.KindGame)
	Game     game.Config   // defaults filled in by New
	Random   io.Reader     // the secrets' randomness; nil: gamestore's default
	// Me is the bot's own user from getMe (nil until it answered): its
	// username for commands addressed to it, its id for replies to it.
	Me func() *models.User
	// Catalog is the players' texts (nil: New reads i18n.New's);
	// Languages keeps the /language choices of users and groups.
	Catalog   *i18n.Catalog
	Languages *chats.Languages
	// IsGroupAdmin reports whether user is an administrator (or the
	// creator) of group chat (getChatMember): only they set a group's
	// language. Nil: nobody can.
	IsGroupAdmin func(ctx context.Context, chat, user int64) (bool, error)
	Log          *slog.Logger
}

// UI is the game's chat interface. Its handlers may be called
// concurrently.
type UI struct {
	c             valkey.Client
	keys          Keys
	games         *gamestore.Store
	notifier      *notifier.Notifier
	journal       Journal
	codec         tapdata.Codec
	gameCfg       game.Config
	rng           io.Reader
	me            func() *models.User
	log           *slog.Logger
	cat           *i18n.Catalog
	langs         *chats.Languages
	isGroupAdmin  func(ctx context.Context, chat, user int64) (bool, error)
	helpTexts     map[string]string // /help's answer by language (helpText of gameCfg), built once
	composeScript *valkey.Lua       // compose.lua: a player's composition on a board
}

// New returns the UI of cfg. Errors: a required field missing.
func New(cfg Config) (*UI, error) {
	if cfg.Client == nil || cfg.Games == nil || cfg.Notifier == nil || cfg.Journal == nil || cfg.Languages == nil || cfg.Me == nil || cfg.Log == nil {
		return nil, errors.New("gameui: Client, Games, Notifier, Journal, Languages, Me and Log are required")
	}
	cat := cfg.Catalog
	if cat == nil {
		var err error
		if cat, err = i18n.New(); err != nil {
			return nil, fmt.Errorf("gameui: %w", err)
		}
	}
	gc := cfg.Game.WithDefaults()
	help := map[string]string{}
	for _, l := range i18n.Languages() {
		help[l] = helpText(cat.For(l), gc)
	}
	return &UI{c: cfg.Client, keys: Keys{Tag: cfg.Tag}, games: cfg.Games, notifier: cfg.Notifier, journal: cfg.Journal,
		codec: cfg.Codec, gameCfg: gc, rng: cfg.Random, me: cfg.Me, log: cfg.Log, cat: cat, langs: cfg.Languages,
		isGroupAdmin: cfg.IsGroupAdmin, helpTexts: help, composeScript: luascript.Must(luaFS, "compose")}, nil
}

// texts are the catalog in the language of r's sender (Request.Lang).
func (u *UI) texts(r *update.Request) i18n.Texts { return u.cat.For(r.Lang) }

// Catalog returns the UI's catalog.
func (u *UI) Catalog() *i18n.Catalog { return u.cat }

// Keys returns the keys of the UI (tests read them).
func (u *UI) Keys() Keys { return u.keys }

// Register routes the player commands to their handlers on m. Everything
// else the UI handles goes to Other (m's default) and Tap (the router's
// tapdata.KindGame).
func (u *UI) Register(m *update.Mux) {
	for name, h := range map[string]update.HandlerFunc{
		"start": u.onStart, "help": u.onHelp, "play": u.onPlay, "guess": u.onGuessCommand,
		"giveup": u.onGiveUp, "top": u.onTop, "language": u.onLanguage,
	} {
		m.RouteFunc(update.IsCommand(name, u.username), h)
	}
}

// Other handles every update no command matched (onOther).
func (u *UI) Other(ctx context.Context, r *update.Request) update.Outcome { return u.onOther(ctx, r) }

// LanguageTap handles a tap on a /language button (a tapdata.Handler of
// kind tapdata.KindLanguage) and returns its toast.
func (u *UI) LanguageTap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	return u.onLanguageTap(ctx, r, out, q, d)
}

// Tap handles a tap on a game board (a tapdata.Handler of kind
// tapdata.KindGame) and returns its toast.
func (u *UI) Tap(ctx context.Context, r *update.Request, out *update.Outcome, q *models.CallbackQuery, d tapdata.Data) string {
	return u.onBoardTap(ctx, r, out, q, d)
}

// username is the bot's username ("" until getMe answered).
func (u *UI) username() string {
	if me := u.me(); me != nil {
		return me.Username
	}
	return ""
}

// cmd returns the command of update up, if any, for this bot.
func (u *UI) cmd(up *models.Update) (update.Command, bool) {
	if up.Message == nil {
		return update.Command{}, false
	}
	return update.ParseCommand(up.Message, u.username())
}

// Keys builds the UI's keys ({T}:app:..., the names older processes
// wrote; docs/keys.md).
type Keys struct{ Tag string }

func (k Keys) prefix() string { return "{" + k.Tag + "}:app:" }

// Board is chat's game board: hash g (game id), j (job id of its send).
func (k Keys) Board(chat int64) string {
	return k.prefix() + "board:" + strconv.FormatInt(chat, 10)
}

// Comp holds the compositions of game id in chat (compose.lua).
func (k Keys) Comp(chat int64, id string) string {
	return k.prefix() + "comp:" + strconv.FormatInt(chat, 10) + ":" + id
}
