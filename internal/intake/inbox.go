package intake

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/luascript"
)

// Scripts are kept in lua/*.lua (each with a KEYS/ARGV header), embedded,
// and loaded with luascript.Must.
//
//go:embed lua/*.lua
var luaFS embed.FS

// ErrLeaseLost is returned (wrapped) by the intake when the poller lease is
// no longer held by this process: another poller took over, nothing was
// written.
var ErrLeaseLost = errors.New("intake: poller lease lost")

// leaseErr maps a script's "LEASE ..." error reply to ErrLeaseLost.
func leaseErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "LEASE ") {
		return fmt.Errorf("%w: %v", ErrLeaseLost, err)
	}
	return err
}

// Update is one update as fetched: its id and its JSON, kept verbatim so
// the inbox holds exactly what Telegram sent.
type Update struct {
	ID   int64
	JSON json.RawMessage
	// Rebase, when > 0, marks an inbox entry that is not an update but the
	// start of re-base number Rebase (see record.lua): the updates after
	// it are in the server's new update_id space.
	Rebase int64
}

// Inbox is the durable record of fetched updates in Valkey (see the package
// doc): offset, queue, handled mark, journals, and the poller's lease and
// heartbeat as /healthz reads them. Every Valkey command of the intake is a
// method of Inbox or Lease. Safe for concurrent use.
type Inbox struct {
	c                     valkey.Client
	keys                  Keys
	record, finish, epoch *valkey.Lua
}

// NewInbox returns the inbox under hash tag tag, on client c.
func NewInbox(c valkey.Client, tag string) *Inbox {
	return &Inbox{c: c, keys: Keys{tag: tag}, record: luascript.Must(luaFS, "record"), finish: luascript.Must(luaFS, "finish"),
		epoch: luascript.Must(luaFS, "epoch")}
}

// Keys returns the inbox's key builder (tests read the keys it writes).
func (in *Inbox) Keys() Keys { return in.keys }

// Offset returns the getUpdates offset to send: the last recorded update_id
// + 1, or 0 when nothing was ever recorded.
func (in *Inbox) Offset(ctx context.Context) (int64, error) {
	v, err := in.c.Do(ctx, in.c.B().Get().Key(in.keys.Offset()).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("intake: inbox offset: %w", err)
	}
	return v, nil
}

// Record appends the updates (in update_id order) whose id is at or above
// the stored offset and advances the offset, atomically, only while token
// holds the poller lease. It returns how many were new and the next offset.
// Errors: ErrLeaseLost (nothing written), the server's error.
func (in *Inbox) Record(ctx context.Context, token string, ups []Update) (int, int64, error) {
	added, off, _, err := in.exec(ctx, token, "", ups)
	return added, off, err
}

// Rebase records a batch that lies entirely below the stored offset, handed
// out again because the server ignored the offset (its update_id sequence
// was reset): after a re-base marker, every update of the batch is appended
// and the offset is set past it, atomically, only while token holds the
// lease. It returns the next offset and the re-base number. Errors:
// ErrLeaseLost, an error when the batch is not entirely below the offset
// (nothing written either way), the server's error.
func (in *Inbox) Rebase(ctx context.Context, token string, ups []Update) (int64, int64, error) {
	_, off, epoch, err := in.exec(ctx, token, "rebase", ups)
	return off, epoch, err
}

// exec runs record.lua in mode ("" or "rebase"); it returns the updates
// added, the next offset and the re-base number (0 in record mode).
func (in *Inbox) exec(ctx context.Context, token, mode string, ups []Update) (int, int64, int64, error) {
	args := make([]string, 0, 2+2*len(ups))
	args = append(args, token, mode)
	for _, u := range ups {
		args = append(args, strconv.FormatInt(u.ID, 10), string(u.JSON))
	}
	keys := []string{in.keys.Lease(), in.keys.Offset(), in.keys.Queue(), in.keys.Rebases()}
	v, err := in.record.Exec(ctx, in.c, keys, args).ToArray()
	if err != nil {
		return 0, 0, 0, fmt.Errorf("intake: record updates: %w", leaseErr(err))
	}
	if len(v) != 3 {
		return 0, 0, 0, fmt.Errorf("intake: record updates: unexpected reply of %d elements", len(v))
	}
	added, _ := v[0].AsInt64()
	next, _ := v[1].ToString()
	off, _ := strconv.ParseInt(next, 10, 64)
	epoch, _ := v[2].AsInt64()
	return int(added), off, epoch, nil
}

// StartEpoch pops the re-base marker of epoch at the inbox head, resets the
// handled mark and makes epoch the handler's, atomically, only while token
// holds the lease (see epoch.lua). Errors: ErrLeaseLost, the server's error.
func (in *Inbox) StartEpoch(ctx context.Context, token string, epoch int64) error {
	keys := []string{in.keys.Lease(), in.keys.Queue(), in.keys.Handled(), in.keys.Epoch()}
	if err := in.epoch.Exec(ctx, in.c, keys, []string{token, strconv.FormatInt(epoch, 10)}).Error(); err != nil {
		return fmt.Errorf("intake: start update epoch %d: %w", epoch, leaseErr(err))
	}
	return nil
}

// Mark returns the highest update_id handled in the current epoch (-1 when
// none) and that epoch (0 before any re-base), in one MGET.
func (in *Inbox) Mark(ctx context.Context) (handled, epoch int64, err error) {
	vs, err := in.c.Do(ctx, in.c.B().Mget().Key(in.keys.Handled(), in.keys.Epoch()).Build()).ToArray()
	if err != nil {
		return 0, 0, fmt.Errorf("intake: inbox handled mark: %w", err)
	}
	handled, epoch = -1, 0
	if len(vs) == 2 {
		if v, err := vs[0].AsInt64(); err == nil {
			handled = v
		}
		if v, err := vs[1].AsInt64(); err == nil {
			epoch = v
		}
	}
	return handled, epoch, nil
}

// Head returns the oldest recorded update not yet handled; ok is false when
// the inbox is empty.
func (in *Inbox) Head(ctx context.Context) (u Update, ok bool, err error) {
	s, err := in.c.Do(ctx, in.c.B().Lindex().Key(in.keys.Queue()).Index(0).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return Update{}, false, nil
	}
	if err != nil {
		return Update{}, false, fmt.Errorf("intake: inbox head: %w", err)
	}
	idStr, body, _ := strings.Cut(s, "\n")
	if idStr == "rebase" {
		if e, perr := strconv.ParseInt(body, 10, 64); perr == nil && e > 0 {
			return Update{ID: -1, Rebase: e}, true, nil
		}
	}
	id, perr := strconv.ParseInt(idStr, 10, 64)
	if perr != nil {
		// Not written by record.lua; handled as a poison entry by the caller.
		return Update{ID: -1, JSON: json.RawMessage(s)}, true, nil
	}
	return Update{ID: id, JSON: json.RawMessage(body)}, true, nil
}

// Handled returns the highest update_id handled (-1 when none).
func (in *Inbox) Handled(ctx context.Context) (int64, error) {
	v, err := in.c.Do(ctx, in.c.B().Get().Key(in.keys.Handled()).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("intake: inbox handled mark: %w", err)
	}
	return v, nil
}

// Finish marks update id handled: pops it from the inbox head, raises the
// handled mark and deletes its journal, atomically, only while token holds
// the lease. Errors: ErrLeaseLost, the server's error.
func (in *Inbox) Finish(ctx context.Context, token string, id int64) error {
	keys := []string{in.keys.Lease(), in.keys.Queue(), in.keys.Handled(), in.keys.Journal(id)}
	if err := in.finish.Exec(ctx, in.c, keys, []string{token, strconv.FormatInt(id, 10)}).Error(); err != nil {
		return fmt.Errorf("intake: finish update %d: %w", id, leaseErr(err))
	}
	return nil
}

// Drop pops a malformed head entry (one that is not "<id>\n<json>").
func (in *Inbox) Drop(ctx context.Context, entry string) error {
	if err := in.c.Do(ctx, in.c.B().Lrem().Key(in.keys.Queue()).Count(1).Element(entry).Build()).Error(); err != nil {
		return fmt.Errorf("intake: drop inbox entry: %w", err)
	}
	return nil
}

// Depth returns how many recorded updates wait to be handled.
func (in *Inbox) Depth(ctx context.Context) (int64, error) {
	n, err := in.c.Do(ctx, in.c.B().Llen().Key(in.keys.Queue()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("intake: inbox depth: %w", err)
	}
	return n, nil
}

// PollerState reads the poller lease's holder ("" when free) and the token
// of the poller whose last getUpdates succeeded within the heartbeat's
// expiry ("" when none), in one MGET.
func (in *Inbox) PollerState(ctx context.Context) (holder, polled string, err error) {
	vals, err := in.c.Do(ctx, in.c.B().Mget().Key(in.keys.Lease(), in.keys.Polled()).Build()).ToArray()
	if err == nil && len(vals) != 2 {
		err = fmt.Errorf("MGET answered %d values, want 2", len(vals))
	}
	if err != nil {
		return "", "", fmt.Errorf("intake: read the poller lease: %w", err)
	}
	holder, _ = vals[0].ToString() // "" when the lease is free
	polled, _ = vals[1].ToString()
	return holder, polled, nil
}
