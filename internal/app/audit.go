package app

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/internal/update"
)

// Admin actions recorded in the audit stream: every admin action that
// changes state (a broadcast's are broadcast.ActionSent, ActionStopped,
// ActionContinuedFree).
const (
	actionWeightSet    = "weight set"
	actionDeadRequeued = "dead letters requeued"
	actionDeadPurged   = "dead letters purged"
	auditShown         = 20 // entries /audit shows
	auditFieldAdmin    = "admin"
	auditFieldAction   = "action"
	auditFieldDetail   = "detail"
)

// DefaultAuditCap is how many admin actions the audit stream keeps (XADD
// MAXLEN ~ N: Valkey trims whole stream nodes, so it may hold up to one
// node, 100 entries by default, more).
const DefaultAuditCap = 1000

// auditLog owns the audit stream {T}:app:audit: every admin action that
// changes state is logged (slog, with the admin's user id) and appended to
// the stream, capped at max entries (approximately, see DefaultAuditCap).
type auditLog struct {
	c    valkey.Client
	keys keyspace
	max  int
	log  *slog.Logger
}

// Record logs an action of who (an admin's user id, adminWho, or
// WhoConsole) and appends it to the stream. Errors: the server's.
func (l *auditLog) Record(ctx context.Context, who, action, detail string) error {
	l.log.Info("admin action", slog.String("admin", who), slog.String("action", action), slog.String("detail", detail))
	cmd := l.c.B().Xadd().Key(l.keys.audit()).Maxlen().Almost().Threshold(strconv.Itoa(l.max)).Id("*").FieldValue().
		FieldValue(auditFieldAdmin, who).
		FieldValue(auditFieldAction, action).
		FieldValue(auditFieldDetail, detail).Build()
	if err := l.c.Do(ctx, cmd).Error(); err != nil {
		return fmt.Errorf("app: audit %s by %s: %w", action, who, err)
	}
	return nil
}

// Last returns up to n entries, newest first.
func (l *auditLog) Last(ctx context.Context, n int) ([]AuditEntry, error) {
	return l.before(ctx, "+", n)
}

// before returns up to n entries older than the entry of stream id end
// (exclusive; "+": from the newest), newest first.
func (l *auditLog) before(ctx context.Context, end string, n int) ([]AuditEntry, error) {
	rs, err := l.c.Do(ctx, l.c.B().Xrevrange().Key(l.keys.audit()).End(end).Start("-").Count(int64(n)).Build()).AsXRange()
	if err != nil {
		return nil, fmt.Errorf("app: audit: %w", err)
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

// Len returns how many entries the stream holds.
func (l *auditLog) Len(ctx context.Context) (int, error) {
	n, err := l.c.Do(ctx, l.c.B().Xlen().Key(l.keys.audit()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("app: audit: %w", err)
	}
	return int(n), nil
}

// onAudit shows the last auditShown admin actions, newest first.
func (a *App) onAudit(ctx context.Context, r *update.Request) (out update.Outcome) {
	u := r.Update
	if c, _ := a.cmd(u); c.Args != "" {
		a.reply(&out, u.Message, "❌ /audit takes no arguments.")
		return out
	}
	es, err := a.Admin().Audit(ctx, auditShown)
	if err != nil {
		out.Fail(err)
		return out
	}
	if len(es) == 0 {
		a.reply(&out, u.Message, "No admin actions recorded.")
		return out
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Last %d admin actions (newest first):", len(es))
	for _, e := range es {
		fmt.Fprintf(&b, "\n• %s %s: %s, %s", e.At.UTC().Format(time.DateTime), e.Actor(), e.Action, e.Detail)
	}
	a.reply(&out, u.Message, b.String())
	return out
}
