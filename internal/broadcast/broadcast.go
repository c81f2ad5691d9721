// Package broadcast is the admin's broadcasts: /broadcast <text> answers
// with a preview (preview.go: the text as the chats will see it, how many
// chats, the estimated time and, with paid broadcasts on, the cost) whose
// Send, Send paid or Cancel button decides it once (decide.lua); Send fans
// the text out through the notifier to the audience and keeps one progress
// message in the admin's chat up to date (Tracker: edits through the reply
// lane, a Stop button while it runs); a paid broadcast the bot cannot pay
// for halts and offers Continue free or Stop. /broadcast stop <id>, the Stop
// button and the admin API (Service.Stop, Service.View) stop and list them.
// The console composes one (Service.Compose: the same preview) and
// confirms it (Service.StartComposed: the same start, launch, and audit
// entry as the Send button, once per preview however often confirmed).
// Every action that changes state is audited (Auditor).
//
// It owns {T}:app:bc (the tracked broadcasts) and {T}:app:bcp:<id> (the
// previews) (Keys), and the journal fields bc and bcs of the update that
// sent a broadcast (journal.go). The fan-out, the stop, the move to free
// and the progress counts are the notifier's (notifier.Broadcast,
// StopBroadcast, ContinueFree, Progress). internal/app wires it: the
// /broadcast route (Service.OnCommand, behind the admin gate), the taps of
// kind tapdata.KindBroadcast (Service.OnTap, idem), the tracker while the
// process holds the poller lease, the admin API.
package broadcast

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/intake"
	"github.com/codemojex/codemojex/internal/tapdata"
	"github.com/codemojex/codemojex/notifier"
	"github.com/codemojex/codemojex/notifier/tgjob"
)

// Audience is the chats a broadcast goes to (chats.Audience), walked by
// the notifier's Filler a step at a time, never loaded whole.
type Audience = notifier.Audience

// Journal is an update's journal (intake.Inbox): the fields a handler
// keeps while it handles update id, dropped once it is handled.
type Journal interface {
	LoadJournal(ctx context.Context, id int64) (intake.Journal, error)
	// SaveJournal sets fields (name, value pairs) of update id's journal.
	SaveJournal(ctx context.Context, id int64, kv ...string) error
}

// Auditor records an admin action (the app's audit stream,
// admin.AuditLog): who is the admin's user id in decimal (or the console's
// name), action one of the Action* constants, detail what it acted on.
// RecordOnce records it unless an action was recorded under key within
// keep, and reports whether it wrote: a stop and a move to free, whose
// retry finds the state already changed, record with it on every run
// (auditOnce). Errors: the store's (RecordOnce's writes nothing).
type Auditor interface {
	Record(ctx context.Context, who, action, detail string) error
	RecordOnce(ctx context.Context, key string, keep time.Duration, who, action, detail string) (bool, error)
}

// auditKeep is how long the audit remembers that a broadcast's stop or
// move to free was recorded (Auditor.RecordOnce): longer than the
// notifier keeps any broadcast's progress (a day, notifier.Config's
// default ProgressTTL, after its last settle or its planned end, which is
// at most 2 MaxPlanAhead after its start), so no Stop or Continue free
// answered from that progress later records it again.
const auditKeep = 2*MaxPlanAhead + 2*24*time.Hour

// Admin actions this package records (Auditor). ActionSent's detail
// starts with the broadcast id (SentID).
const (
	ActionSent          = "broadcast sent"
	ActionStopped       = "broadcast stopped"
	ActionContinuedFree = "broadcast continued free"
)

// DefaultEditInterval is the least time between two edits of a
// broadcast's progress message (a final edit always follows).
const DefaultEditInterval = 2 * time.Second

// Config is what a Service needs. Client, Notifier, Audience, Journal,
// Audit and Codec are required.
type Config struct {
	Client   valkey.Client
	Tag      string // the hash tag of every key (lanes.DefaultTag unless the program says otherwise)
	Notifier *notifier.Notifier
	Audience Audience
	// Languages reads the chats' languages for a broadcast with texts per
	// language (chats.Languages). Nil: such a text is refused.
	Languages Languages
	Journal   Journal
	Audit     Auditor
	Codec     tapdata.Codec // signs the buttons (kind tapdata.KindBroadcast)
	// Username is the bot's username ("" until getMe answered): a
	// command may be addressed "/broadcast@<username>". Nil: "".
	Username func() string
	// GlobalRate is the free broadcast rate (messages/s, Telegram's
	// global limit as configured) the previews estimate with (or the
	// rate the send budget learned, when lower: Service.rates); PaidRate
	// the paid one (TELEGRAM_PAID_BROADCAST_RATE; 0: paid broadcasts
	// off, no Send paid button).
	GlobalRate, PaidRate int
	// StarBalance reads the bot's Telegram Stars balance in tenths of a
	// Star (Bot API getMyStarBalance), which the paid preview shows beside
	// the cost. Nil: not shown.
	StarBalance func(ctx context.Context) (tenths int64, err error)
	// EditInterval: see DefaultEditInterval (0: the default).
	EditInterval time.Duration
	// Now is the clock that dates previews and so decides when one
	// expires (PreviewLifetime). Nil: time.Now.
	Now func() time.Time
	Log *slog.Logger // nil: discarded
}

// Service is the broadcasts of one process: its handlers run on any
// handler process, its Tracker on the one holding the poller lease.
type Service struct {
	cfg      Config
	log      *slog.Logger
	notifier *notifier.Notifier
	audience Audience
	journal  Journal
	audit    Auditor
	previews *previews
	tracking *tracking
	// filler makes the copies of the lazy broadcasts (Filler).
	filler *notifier.Filler
	// wakeC: a broadcast started, stopped or moved to free -> Tracker.
	wakeC chan struct{}
}

// New returns the broadcasts of cfg. Errors: a required part missing.
func New(cfg Config) (*Service, error) {
	if cfg.Client == nil || cfg.Notifier == nil || cfg.Audience == nil || cfg.Journal == nil || cfg.Audit == nil {
		return nil, fmt.Errorf("broadcast: Client, Notifier, Audience, Journal and Audit are required")
	}
	if cfg.EditInterval <= 0 {
		cfg.EditInterval = DefaultEditInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Username == nil {
		cfg.Username = func() string { return "" }
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	keys := NewKeys(cfg.Tag)
	fc := notifier.FillConfig{Rates: map[string]int{tgjob.QueueNotify: cfg.GlobalRate, tgjob.QueuePaid: cfg.PaidRate}, Log: cfg.Log}
	if cfg.Languages != nil {
		fc.Languages = cfg.Languages.Of
	}
	filler, err := cfg.Notifier.NewFiller(cfg.Audience, fc)
	if err != nil {
		return nil, fmt.Errorf("broadcast: %w", err)
	}
	return &Service{cfg: cfg, log: cfg.Log, notifier: cfg.Notifier, audience: cfg.Audience, journal: cfg.Journal,
		audit: cfg.Audit, previews: newPreviews(cfg.Client, keys), tracking: &tracking{c: cfg.Client, keys: keys},
		filler: filler, wakeC: make(chan struct{}, 1)}, nil
}

// Filler is the service that makes the lazy broadcasts' copies a window
// ahead of the budget (notifier.Filler.Run): run it in every process that
// sends (the app runs it beside the worker).
func (s *Service) Filler() Filler { return Filler{f: s.filler} }

// Filler is Service.Filler's lifecycle service.
type Filler struct{ f *notifier.Filler }

// Name names the filler in logs.
func (Filler) Name() string { return "broadcast filler" }

// Run fills until ctx ends, then returns nil (a stop is not a failure).
func (f Filler) Run(ctx context.Context, started func()) error {
	started()
	_ = f.f.Run(ctx)
	return nil
}

// count is how many chats a broadcast started now would reach: the
// audience without the chats marked inactive (left out of the count, not
// reported later as failures). Errors: the store's.
func (s *Service) count(ctx context.Context) (int, error) {
	size, err := s.audience.Size(ctx)
	if err != nil {
		return 0, err
	}
	inactive, err := s.notifier.Chats().InactiveCount(ctx)
	if err != nil {
		return 0, err
	}
	return max(size-inactive, 0), nil
}

// now is the service's clock (Config.Now).
func (s *Service) now() time.Time { return s.cfg.Now() }

// wake tells the Tracker to look at the tracked broadcasts now (not at its
// next tick); it never blocks.
func (s *Service) wake() {
	select {
	case s.wakeC <- struct{}{}:
	default:
	}
}

// adminWho is how the audit names an admin: the user id in decimal.
func adminWho(user int64) string { return strconv.FormatInt(user, 10) }
