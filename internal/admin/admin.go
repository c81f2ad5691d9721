// Package admin is codemojex's administration: the admin chat commands
// (/weight, /weights, /lanes, /dlq, /audit, and the gate every admin
// command, /broadcast included, passes), the administration API those
// commands and the operator console (internal/console) share (Admin), and
// the audit log of the admin actions (AuditLog, its stream key: Keys).
//
// A chat command and its console page call the same functions, so both
// read the same lanes.Inspector queries, validate alike (an *InputError
// carries the command's answer), write the same audit entry (who: the
// admin's user id, or WhoConsole) and give the same answer.
//
// It holds no state of its own but the audit stream: what it reads and
// changes belongs to the packages it is given (Config): the lanes stores
// of the outbound and update queues, the chat directory and audience
// (internal/chats), the game store, the intake limits (internal/flood),
// the broadcasts (Broadcasts, internal/broadcast's Service); internal/app
// wires them and puts the commands on its update mux (Register).
package admin

import (
	"context"
	"errors"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/game"
	"github.com/codemojex/codemojex/internal/broadcast"
	"github.com/codemojex/codemojex/internal/chats"
	"github.com/codemojex/codemojex/internal/config"
	"github.com/codemojex/codemojex/internal/flood"
	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/procs"
	"github.com/codemojex/codemojex/internal/update"
	"github.com/codemojex/codemojex/lanes"
	"github.com/codemojex/codemojex/notifier"
)

// Inbox is the update queue as the admin API reads it (intake.Inbox):
// its lanes store (the update queue's lanes and dead updates) and its
// backlog.
type Inbox interface {
	Store() *lanes.Store
	Backlog(ctx context.Context) (intake.Backlog, error)
}

// Directory names chats and finds them by name (chats.Directory).
type Directory interface {
	// Name is chat's name as the bot last saw it ("" when never seen named).
	Name(ctx context.Context, chat int64) (string, error)
	// Find returns up to n chats whose title or username starts with
	// prefix, in name order.
	Find(ctx context.Context, prefix string, n int) ([]chats.Ref, error)
}

// Audience tells whether a chat wrote to the bot (chats.Audience).
type Audience interface {
	IsKnown(ctx context.Context, chat int64) (bool, error)
}

// Games reads a chat's running game (gamestore.Store): an error wrapping
// gamestore.ErrNoGame when it has none.
type Games interface {
	Current(ctx context.Context, chat int64) (game.State, error)
}

// Broadcasts is what the admin API needs of the broadcasts
// (internal/broadcast's *Service): a broadcast's progress, stopping one
// (with its answer and audit entry), and composing one: its preview, then
// its start once confirmed (the Telegram preview's, and audit entry), or
// its cancel (the Telegram preview's Cancel).
type Broadcasts interface {
	View(ctx context.Context, id string) (broadcast.View, error)
	Stop(ctx context.Context, who, id string) (string, error)
	Compose(ctx context.Context, c broadcast.Composition) (broadcast.Preview, error)
	StartComposed(ctx context.Context, who, token string) (id, answer string, err error)
	CancelComposed(ctx context.Context, who, token string) (string, error)
	Texts(ctx context.Context, id string) ([]notifier.BroadcastText, error)
}

var _ Broadcasts = (*broadcast.Service)(nil)

// Config is what an Admin needs. Outbound, Inbox, Directory, Audience,
// Games, Broadcasts and Audit are required.
type Config struct {
	// Outbound is the lanes store of the outbound queues (reply, notify,
	// paid): the notifier's.
	Outbound *lanes.Store
	// Inbox is the update queue.
	Inbox      Inbox
	Directory  Directory
	Audience   Audience
	Games      Games
	Broadcasts Broadcasts
	// Audit is the audit log every action that changes state is recorded
	// in (the broadcasts record theirs in it too).
	Audit *AuditLog
	// Flood is the intake limiter (nil: the limits are off) and Client the
	// Valkey client it reads with.
	Flood  *flood.Limiter
	Client valkey.Client
	// Gatherer is the bot's Prometheus registry (what /metrics serves).
	Gatherer prometheus.Gatherer
	// Rates are the bot's configured rates (TELEGRAM_*_RATE): the global
	// budget, a chat's pace, and whether paid broadcasts are on (the paid
	// queue is read only then).
	Rates config.Rates
	// IsAdmin reports whether a Telegram user is a bot admin (ADMIN_IDS).
	// Nil: nobody is.
	IsAdmin func(user int64) bool
	// Username is the bot's username ("" until getMe answered): commands
	// may be addressed "/weight@<username>". Nil: "".
	Username func() string
	// Processes is the deployment's list of live processes (their
	// heartbeats). Nil: none listed.
	Processes *procs.Registry
	// Refusal is what a sender who is not an admin gets for admin command
	// name (without its "/") of request r: a player's text, so in their
	// language (the app's catalog, r.Lang). Nil: RefusalText (English).
	Refusal func(r *update.Request, name string) string
}

// Admin is the administration API of the bot: what the admin chat
// commands (/weight, /lanes, /dlq, /broadcast stop, /audit) do, as
// functions the commands and the console share. Create it with New. Safe
// for concurrent use.
type Admin struct {
	cfg   Config
	out   *lanes.Inspector // the outbound queues'
	upd   *lanes.Inspector // the update queue's
	audit *AuditLog
}

// New returns the administration API over cfg. Errors: a required part
// missing.
func New(cfg Config) (*Admin, error) {
	if cfg.Outbound == nil || cfg.Inbox == nil || cfg.Directory == nil || cfg.Audience == nil || cfg.Games == nil ||
		cfg.Broadcasts == nil || cfg.Audit == nil {
		return nil, errors.New("admin: Outbound, Inbox, Directory, Audience, Games, Broadcasts and Audit are required")
	}
	if cfg.Flood != nil && cfg.Client == nil {
		return nil, errors.New("admin: Flood needs Client")
	}
	if cfg.IsAdmin == nil {
		cfg.IsAdmin = func(int64) bool { return false }
	}
	if cfg.Refusal == nil {
		cfg.Refusal = func(_ *update.Request, name string) string { return RefusalText(name) }
	}
	if cfg.Username == nil {
		cfg.Username = func() string { return "" }
	}
	if cfg.Gatherer == nil {
		cfg.Gatherer = prometheus.NewRegistry()
	}
	return &Admin{cfg: cfg, out: cfg.Outbound.Inspector(), upd: cfg.Inbox.Store().Inspector(), audit: cfg.Audit}, nil
}

// InputError is an admin action refused for its input, before anything is
// read or written; its text is the answer the chat command gives (the
// console shows the same).
type InputError struct{ Text string }

func (e *InputError) Error() string { return e.Text }

func inputErr(text string) error { return &InputError{Text: text} }
