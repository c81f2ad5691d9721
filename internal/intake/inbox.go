package app

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/valkey-io/valkey-go"
)

//go:embed lua/*.lua
var luaFS embed.FS

func mustScript(name string) *valkey.Lua {
	src, err := luaFS.ReadFile("lua/" + name + ".lua")
	if err != nil {
		panic("app: missing embedded script " + name) // a build error, not a runtime one
	}
	return valkey.NewLuaScript(string(src))
}

// ErrLeaseLost is returned (wrapped) by the intake when the poller lease is
// no longer held by this process: another poller took over, nothing was
// written.
var ErrLeaseLost = errors.New("app: poller lease lost")

// leaseErr maps a script's "LEASE ..." error reply to ErrLeaseLost.
func leaseErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "LEASE ") {
		return fmt.Errorf("%w: %v", ErrLeaseLost, err)
	}
	return err
}

// rawUpdate is one update as fetched: its id and its JSON, kept verbatim so
// the inbox holds exactly what Telegram sent.
type rawUpdate struct {
	ID   int64
	JSON json.RawMessage
}

// inbox is the durable record of fetched updates in Valkey (see the package
// doc): offset, queue, handled mark and journals.
type inbox struct {
	c                     valkey.Client
	keys                  keyspace
	record, finish, lease *valkey.Lua
}

func newInbox(c valkey.Client, k keyspace) *inbox {
	return &inbox{c: c, keys: k, record: mustScript("record"), finish: mustScript("finish"), lease: mustScript("lease")}
}

// Offset returns the getUpdates offset to send: the last recorded update_id
// + 1, or 0 when nothing was ever recorded.
func (in *inbox) Offset(ctx context.Context) (int64, error) {
	v, err := in.c.Do(ctx, in.c.B().Get().Key(in.keys.offset()).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("app: inbox offset: %w", err)
	}
	return v, nil
}

// Record appends the updates (in update_id order) whose id is at or above
// the stored offset and advances the offset, atomically, only while token
// holds the poller lease. It returns how many were new and the next offset.
// Errors: ErrLeaseLost (nothing written), the server's error.
func (in *inbox) Record(ctx context.Context, token string, ups []rawUpdate) (int, int64, error) {
	args := make([]string, 0, 1+2*len(ups))
	args = append(args, token)
	for _, u := range ups {
		args = append(args, strconv.FormatInt(u.ID, 10), string(u.JSON))
	}
	v, err := in.record.Exec(ctx, in.c, []string{in.keys.lock(), in.keys.offset(), in.keys.queue()}, args).ToArray()
	if err != nil {
		return 0, 0, fmt.Errorf("app: record updates: %w", leaseErr(err))
	}
	added, _ := v[0].AsInt64()
	next, _ := v[1].ToString()
	off, _ := strconv.ParseInt(next, 10, 64)
	return int(added), off, nil
}

// Head returns the oldest recorded update not yet handled; ok is false when
// the inbox is empty.
func (in *inbox) Head(ctx context.Context) (u rawUpdate, ok bool, err error) {
	s, err := in.c.Do(ctx, in.c.B().Lindex().Key(in.keys.queue()).Index(0).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return rawUpdate{}, false, nil
	}
	if err != nil {
		return rawUpdate{}, false, fmt.Errorf("app: inbox head: %w", err)
	}
	idStr, body, _ := strings.Cut(s, "\n")
	id, perr := strconv.ParseInt(idStr, 10, 64)
	if perr != nil {
		// Not written by record.lua; handled as a poison entry by the caller.
		return rawUpdate{ID: -1, JSON: json.RawMessage(s)}, true, nil
	}
	return rawUpdate{ID: id, JSON: json.RawMessage(body)}, true, nil
}

// Handled returns the highest update_id handled (-1 when none).
func (in *inbox) Handled(ctx context.Context) (int64, error) {
	v, err := in.c.Do(ctx, in.c.B().Get().Key(in.keys.handled()).Build()).AsInt64()
	if valkey.IsValkeyNil(err) {
		return -1, nil
	}
	if err != nil {
		return 0, fmt.Errorf("app: inbox handled mark: %w", err)
	}
	return v, nil
}

// Finish marks update id handled: pops it from the inbox head, raises the
// handled mark and deletes its journal, atomically, only while token holds
// the lease. Errors: ErrLeaseLost, the server's error.
func (in *inbox) Finish(ctx context.Context, token string, id int64) error {
	keys := []string{in.keys.lock(), in.keys.queue(), in.keys.handled(), in.keys.journal(id)}
	if err := in.finish.Exec(ctx, in.c, keys, []string{token, strconv.FormatInt(id, 10)}).Error(); err != nil {
		return fmt.Errorf("app: finish update %d: %w", id, leaseErr(err))
	}
	return nil
}

// Drop pops a malformed head entry (one that is not "<id>\n<json>").
func (in *inbox) Drop(ctx context.Context, entry string) error {
	if err := in.c.Do(ctx, in.c.B().Lrem().Key(in.keys.queue()).Count(1).Element(entry).Build()).Error(); err != nil {
		return fmt.Errorf("app: drop inbox entry: %w", err)
	}
	return nil
}

// Depth returns how many recorded updates wait to be handled.
func (in *inbox) Depth(ctx context.Context) (int64, error) {
	n, err := in.c.Do(ctx, in.c.B().Llen().Key(in.keys.queue()).Build()).AsInt64()
	if err != nil {
		return 0, fmt.Errorf("app: inbox depth: %w", err)
	}
	return n, nil
}
