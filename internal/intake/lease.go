package intake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/consumer"
	"github.com/codemojex/codemojex/luascript"
)

// DefaultLeaseTTL is the poller lease length: a poller that dies is
// replaced by a waiting one within this time. The holder renews it every
// third of it.
const DefaultLeaseTTL = 15 * time.Second

// Lease is the poller lease in Valkey: SET NX PX to take it, renewal and
// release by token only (lease.lua), so only one process polls Telegram.
// Its token also fences the getUpdates offset (Record, Rebase).
type Lease struct {
	c      valkey.Client
	key    string
	polled string
	script *valkey.Lua
	ttl    time.Duration
	token  string
	log    *slog.Logger
}

// newToken returns "<host>/<pid>/<16 hex>", unique per process and start,
// readable in the "waiting" log line of the other pollers.
func newToken() string {
	host, _ := os.Hostname()
	var b [8]byte
	_, _ = rand.Read(b[:])
	return host + "/" + strconv.Itoa(os.Getpid()) + "/" + hex.EncodeToString(b[:])
}

// NewLease returns this process's lease of length ttl under hash tag tag,
// on client c, with a fresh token; log receives its waiting and renewal
// lines.
func NewLease(c valkey.Client, tag string, ttl time.Duration, log *slog.Logger) *Lease {
	k := Keys{tag: tag}
	return &Lease{c: c, key: k.Lease(), polled: k.Polled(), script: luascript.Must(luaFS, "lease"), ttl: ttl, token: newToken(), log: log}
}

// Token is this process's lease token ("<host>/<pid>/<16 hex>").
func (l *Lease) Token() string { return l.token }

// Heartbeat records that this process's getUpdates just succeeded: the
// polled key holds its token and expires after ttl (2x the long-poll
// timeout), so standby pollers' /healthz sees whether polling is alive
// anywhere (Health).
func (l *Lease) Heartbeat(ctx context.Context, ttl time.Duration) error {
	return l.c.Do(ctx, l.c.B().Set().Key(l.polled).Value(l.token).Px(ttl).Build()).Error()
}

// tryAcquire takes the lease if it is free (or already ours). It returns the
// current holder's token when another process holds it.
func (l *Lease) tryAcquire(ctx context.Context) (held bool, holder string, err error) {
	err = l.c.Do(ctx, l.c.B().Set().Key(l.key).Value(l.token).Nx().Px(l.ttl).Build()).Error()
	if err == nil {
		return true, l.token, nil
	}
	if !valkey.IsValkeyNil(err) {
		return false, "", fmt.Errorf("intake: take poller lease: %w", err)
	}
	holder, err = l.c.Do(ctx, l.c.B().Get().Key(l.key).Build()).ToString()
	if valkey.IsValkeyNil(err) {
		return false, "", nil // just expired: try again at once
	}
	if err != nil {
		return false, "", fmt.Errorf("intake: read poller lease: %w", err)
	}
	if holder == l.token {
		return true, holder, nil
	}
	return false, holder, nil
}

// Acquire blocks until this process holds the lease or ctx ends. While
// another poller holds it, it logs once per holder "another poller is
// active ..., waiting" and retries every third of the lease.
func (l *Lease) Acquire(ctx context.Context, waiting func(bool)) error {
	lastHolder := ""
	for {
		held, holder, err := l.tryAcquire(ctx)
		switch {
		case err != nil:
			if ctx.Err() != nil {
				return ctx.Err()
			}
			l.log.Warn("poller lease: Valkey error, retrying", slog.Any("err", err))
		case held:
			waiting(false)
			l.log.Info("poller lease acquired: this process polls Telegram", slog.String("holder", l.token))
			return nil
		case holder != "" && holder != lastHolder:
			lastHolder = holder
			waiting(true)
			l.log.Info("another poller is active (it holds the poller lease in Valkey), waiting",
				slog.String("holder", holder), slog.String("lease", l.ttl.String()))
		}
		if holder == "" && err == nil {
			continue
		}
		if err := consumer.Sleep(ctx, l.ttl/3); err != nil {
			return err
		}
	}
}

// Hold renews the lease every third of its length until ctx ends (it then
// returns ctx.Err()) or the lease is lost: taken by another process, or not
// renewed for two thirds of its length because Valkey did not answer (it
// then returns ErrLeaseLost, before the lease can lapse under us).
func (l *Lease) Hold(ctx context.Context) error {
	t := time.NewTicker(l.ttl / 3)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		rctx, cancel := context.WithTimeout(ctx, l.ttl/3)
		ok, err := l.script.Exec(rctx, l.c, []string{l.key}, []string{l.token, "renew", strconv.FormatInt(l.ttl.Milliseconds(), 10)}).AsInt64()
		cancel()
		switch {
		case err == nil && ok == 1:
			last = time.Now()
		case err == nil:
			return fmt.Errorf("%w: another process holds it now", ErrLeaseLost)
		case ctx.Err() != nil:
			return ctx.Err()
		default:
			l.log.Warn("poller lease: renewal failed", slog.Any("err", err))
			if time.Since(last) > l.ttl*2/3 {
				return fmt.Errorf("%w: not renewed for %v: %w", ErrLeaseLost, time.Since(last).Round(time.Millisecond), err)
			}
		}
	}
}

// Release gives the lease up if this process still holds it, so a waiting
// poller takes over at once rather than after the lease lapses.
func (l *Lease) Release(ctx context.Context) {
	err := l.script.Exec(ctx, l.c, []string{l.key}, []string{l.token, "release", "0"}).Error()
	if err != nil {
		l.log.Warn("poller lease: release failed; it lapses by itself", slog.Any("err", err))
	}
}
