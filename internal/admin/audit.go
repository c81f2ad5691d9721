package admin

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
)

// Admin actions this package records in the audit stream (a broadcast's
// are internal/broadcast's: ActionSent, ActionStopped,
// ActionContinuedFree). Every admin action that changes state is recorded.
const (
	ActionWeightSet    = "weight set"
	ActionDeadRequeued = "dead letters requeued"
	ActionDeadPurged   = "dead letters purged"
	ActionQueuePaused  = "queue paused"
	ActionQueueResumed = "queue resumed"
	ActionChatPaused   = "chat paused"
	ActionChatResumed  = "chat resumed"
)

// Fields of an audit stream entry.
const (
	auditFieldAdmin  = "admin"
	auditFieldAction = "action"
	auditFieldDetail = "detail"
)

// DefaultAuditCap is how many admin actions the audit stream keeps (XADD
// MAXLEN ~ N: Valkey trims whole stream nodes, so it may hold up to one
// node, 100 entries by default, more).
const DefaultAuditCap = 1000

// WhoConsole is who the audit log names for an action taken in the
// console (a chat command's is the admin's Telegram user id: Who).
const WhoConsole = "console"

// Who is who the audit log names for admin user id: the id in decimal.
func Who(user int64) string { return strconv.FormatInt(user, 10) }

// AuditLog owns the audit stream {T}:app:audit (Keys.Audit): every admin
// action that changes state is logged (slog, with who did it) and
// appended to the stream, capped at about its cap (DefaultAuditCap). It
// is the broadcasts' Auditor too (internal/broadcast). Safe for
// concurrent use.
type AuditLog struct {
	c    valkey.Client
	keys Keys
	max  int
	log  *slog.Logger
	once *valkey.Lua // recordonce.lua
}

// NewAuditLog returns the audit log under hash tag tag, keeping about max
// entries (max < 1: DefaultAuditCap) and logging each action to log (nil:
// discarded).
func NewAuditLog(c valkey.Client, tag string, max int, log *slog.Logger) *AuditLog {
	if max < 1 {
		max = DefaultAuditCap
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &AuditLog{c: c, keys: NewKeys(tag), max: max, log: log, once: luascript.Must(luaFS, "recordonce")}
}

// AuditEntry is one recorded admin action.
type AuditEntry struct {
	ID     string    // its stream id (AuditBefore pages from it)
	At     time.Time // when it was recorded (the stream id's time, server clock)
	Who    string    // the admin's Telegram user id, or WhoConsole
	Action string    // what was done, e.g. "weight set"
	Detail string    // what it acted on, e.g. "chat 42: weight 5 (was 1)"
}

// Actor is how /audit names who: "admin <id>" or "console".
func (e AuditEntry) Actor() string {
	if _, err := strconv.ParseInt(e.Who, 10, 64); err == nil {
		return "admin " + e.Who
	}
	return e.Who
}

// Record logs an action of who (an admin's user id, Who, or WhoConsole)
// and appends it to the stream. Errors: the server's.
func (l *AuditLog) Record(ctx context.Context, who, action, detail string) error {
	l.log.Info("admin action", slog.String("admin", who), slog.String("action", action), slog.String("detail", detail))
	cmd := l.c.B().Xadd().Key(l.keys.Audit()).Maxlen().Almost().Threshold(strconv.Itoa(l.max)).Id("*").FieldValue().
		FieldValue(auditFieldAdmin, who).
		FieldValue(auditFieldAction, action).
		FieldValue(auditFieldDetail, detail).Build()
	if err := l.c.Do(ctx, cmd).Error(); err != nil {
		return fmt.Errorf("admin: audit %s by %s: %w", action, who, err)
	}
	return nil
}

// RecordOnce is Record once per key: it appends the action to the stream
// and marks key recorded (Keys.AuditOnce, kept for keep, at least 1 ms),
// in one script (recordonce.lua), unless key is marked already, and
// reports whether it wrote. It is for an action whose handler may run
// again after a failure (its update handled again) when the state it
// changed no longer says whether it was recorded: internal/broadcast's stop
// ("stop:<id>") and move to free ("free:<id>") record on every run, the
// first to get through records it, a later one nothing. keep must outlast
// every run that may still record it. A failure writes nothing, the
// marker included (the next call writes). Errors: keep under 1 ms; the
// server's.
func (l *AuditLog) RecordOnce(ctx context.Context, key string, keep time.Duration, who, action, detail string) (bool, error) {
	if keep < time.Millisecond {
		return false, fmt.Errorf("admin: audit %s by %s: keep %v, want at least 1ms", action, who, keep)
	}
	id, err := l.once.Exec(ctx, l.c, []string{l.keys.Audit(), l.keys.AuditOnce(key)},
		[]string{strconv.Itoa(l.max), strconv.FormatInt(keep.Milliseconds(), 10), who, action, detail}).ToString()
	if err != nil {
		return false, fmt.Errorf("admin: audit %s by %s: %w", action, who, err)
	}
	if id == "" {
		return false, nil
	}
	l.log.Info("admin action", slog.String("admin", who), slog.String("action", action), slog.String("detail", detail), slog.String("once", key))
	return true, nil
}

// Last returns up to n entries, newest first.
func (l *AuditLog) Last(ctx context.Context, n int) ([]AuditEntry, error) {
	return l.before(ctx, "+", n)
}

// auditIDRE is a stream entry id.
var auditIDRE = regexp.MustCompile(`^[0-9]{1,20}-[0-9]{1,20}$`)

// Before returns up to n entries older than the one of stream id id (an
// AuditEntry.ID; exclusive), newest first: the next page of Last. Errors:
// an *InputError for a malformed id; the server's.
func (l *AuditLog) Before(ctx context.Context, id string, n int) ([]AuditEntry, error) {
	if !auditIDRE.MatchString(id) {
		return nil, inputErr(fmt.Sprintf("❌ %q is not an audit entry's id.", id))
	}
	return l.before(ctx, "("+id, n)
}

// before returns up to n entries older than the entry of stream id end
// (XREVRANGE's end: "(<id>" exclusive, "+" from the newest), newest first.
func (l *AuditLog) before(ctx context.Context, end string, n int) ([]AuditEntry, error) {
	rs, err := l.c.Do(ctx, l.c.B().Xrevrange().Key(l.keys.Audit()).End(end).Start("-").Count(int64(n)).Build()).AsXRange()
	if err != nil {
		return nil, fmt.Errorf("admin: audit: %w", err)
	}
	out := make([]AuditEntry, 0, len(rs))
	for _, r := range rs {
		msStr, _, _ := strings.Cut(r.ID, "-")
		ms, _ := strconv.ParseInt(msStr, 10, 64)
		out = append(out, AuditEntry{ID: r.ID, At: time.UnixMilli(ms), Who: r.FieldValues[auditFieldAdmin],
			Action: r.FieldValues[auditFieldAction], Detail: r.FieldValues[auditFieldDetail]})
	}
	return out, nil
}

// Len returns how many entries the stream holds. Errors: the server's.
func (l *AuditLog) Len(ctx context.Context) (int, error) {
	n, err := l.c.Do(ctx, l.c.B().Xlen().Key(l.keys.Audit()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("admin: audit: %w", err)
	}
	return int(n), nil
}
