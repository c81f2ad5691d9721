package lanes

import (
	"context"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// What the tests of package lanes_test reach beyond the public API: the
// store's client, its wake channel, the server clock, and the keyspace of
// keys.go, so tests read keys by the names the scripts use instead of
// spelling them out.

// Client returns the Valkey client the store uses.
func (s *Store) Client() valkey.Client { return s.c }

// WakeChannel is the Pub/Sub channel on which the store announces that work
// became claimable (see Waiter).
func (s *Store) WakeChannel() string { return s.keys.wake() }

// ServerTime returns the server's clock (TIME).
func (s *Store) ServerTime(ctx context.Context) (time.Time, error) { return s.serverTime(ctx) }

// Keys returns the store's keyspace.
func (s *Store) Keys() Keys { return Keys{k: s.keys} }

// Keys names the keys of a store (see keys.go for the layout).
type Keys struct{ k keyspace }

// Tag is "{T}", the prefix every key starts with.
func (k Keys) Tag() string { return "{" + k.k.tag + "}" }

// Pattern matches every key of the store ("{T}*").
func (k Keys) Pattern() string { return k.Tag() + "*" }

// Shared is the store-wide key name, e.g. Shared("pacecfg") = "{T}:s:pacecfg".
func (k Keys) Shared(name string) string { return k.k.shared() + name }

// Rate is the global send log.
func (k Keys) Rate() string { return k.k.rate() }

// Pause is the global pause.
func (k Keys) Pause() string { return k.k.pause() }

// Pace is lane g's send log, shared by every queue.
func (k Keys) Pace(g string) string { return k.k.pace(g) }

// Queue is queue q's key name, e.g. Queue("q", "inflight") = "{T}:q:q:inflight".
func (k Keys) Queue(q, name string) string { return k.k.queueKey(q, name) }

// Ring is queue q's ring.
func (k Keys) Ring(q string) string { return k.k.ring(q) }

// Lane is lane g of queue q.
func (k Keys) Lane(q, g string) string { return k.k.lane(q, g) }

// Job is job id's hash in queue q.
func (k Keys) Job(q string, id JobID) string { return k.k.job(q, id) }

// Coalesce is coalesce key name of queue q.
func (k Keys) Coalesce(q, name string) string { return k.k.coalesce(q, name) }

// Floor is the shared round-trip floor's set of epoch e (ShareFloor).
func (k Keys) Floor(e int64) string { return k.k.floor() + strconv.FormatInt(e, 10) }
