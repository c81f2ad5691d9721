// Package valkeyclient makes the program's valkey-go clients: New is
// valkey.NewClient with every retryable command pinned (Pinned), so a
// command valkey-go retries after a broken connection is never handed
// back to its command pool while the broken connection's writer may still
// read it.
//
// Why (valkey-go v1.0.79 and v1.0.80, and redis/rueidis, which it forks):
// a client recycles a command after Do or DoMulti unless its result is a
// non-Valkey error ("since cmds may be used later in the pipe",
// client.go), and it retries a retryable command (every read-only one,
// e.g. HGETALL, and any built with ToRetryable) on such an error, on a
// new connection, with the same command. When a connection breaks, the
// reader fails every queued call at once, among them a command the
// writer goroutine has taken from the queue and is still copying into its
// buffer (pipe.go, _background and _backgroundWrite; writeCmd in resp.go
// reads every argument even after a write error). The retry succeeds on
// the new connection, the client recycles the command, and the next
// Builder (any command, on any client of the process) writes its
// arguments into the slice the dead connection's writer read, with no
// synchronisation between the two: a data race (seen under go test -race
// in a chaos run; TestRetriedReadsRaceNothingWhenConnectionsBreak
// reproduces it within seconds without Pinned). A pinned command is never
// recycled, so it is left to the garbage collector instead.
package valkeyclient

import (
	"context"
	"time"

	"github.com/valkey-io/valkey-go"
)

// New returns valkey.NewClient(opt) wrapped by Pinned. Errors:
// valkey.NewClient's, as they are (with opt.ForceSingleClient it returns
// a client even when the dial fails, and so does New).
func New(opt valkey.ClientOption) (valkey.Client, error) {
	c, err := valkey.NewClient(opt)
	if c == nil {
		return nil, err
	}
	return Pinned(c), err
}

// Pinned returns c with every retryable command passed to Do and DoMulti,
// and every command passed to DoCache and DoMultiCache, pinned (Completed.Pin) before c sends it: c
// never recycles those, see the package comment. Other commands (writes
// not built ToRetryable: valkey-go never retries them) are recycled as
// before. The cost is one command slice allocated per retryable command
// instead of one reused from the pool. Dedicated and Dedicate hand out
// c's own dedicated clients, not pinned (the program uses neither).
func Pinned(c valkey.Client) valkey.Client {
	if p, ok := c.(pinned); ok {
		return p
	}
	return pinned{c}
}

// pinned is Pinned's client.
type pinned struct {
	valkey.Client
}

// Do is valkey.Client's Do with cmd pinned when retryable.
func (p pinned) Do(ctx context.Context, cmd valkey.Completed) valkey.ValkeyResult {
	return p.Client.Do(ctx, pin(cmd))
}

// DoMulti is valkey.Client's DoMulti with each retryable command pinned.
func (p pinned) DoMulti(ctx context.Context, multi ...valkey.Completed) []valkey.ValkeyResult {
	for _, cmd := range multi {
		pin(cmd)
	}
	return p.Client.DoMulti(ctx, multi...)
}

// DoCache is valkey.Client's DoCache with cmd pinned (a cacheable
// command is a read: always retryable).
func (p pinned) DoCache(ctx context.Context, cmd valkey.Cacheable, ttl time.Duration) valkey.ValkeyResult {
	return p.Client.DoCache(ctx, cmd.Pin(), ttl)
}

// DoMultiCache is valkey.Client's DoMultiCache with each command pinned.
func (p pinned) DoMultiCache(ctx context.Context, multi ...valkey.CacheableTTL) []valkey.ValkeyResult {
	for _, m := range multi {
		m.Cmd.Pin()
	}
	return p.Client.DoMultiCache(ctx, multi...)
}

// pin pins cmd when valkey-go may retry it (Pin marks the command's
// shared slice, so the caller's copy is pinned too) and returns it.
func pin(cmd valkey.Completed) valkey.Completed {
	if cmd.IsRetryable() {
		return cmd.Pin()
	}
	return cmd
}
