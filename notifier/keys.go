package notifier

import "github.com/codemojex/codemojex/lanes"

// Every key the notifier keeps lives under the lanes store's hash tag, so it
// shares the store's cluster slot. Layout (T = tag):
//
//	{T}:n:inactive           set     chat ids (decimal) that blocked the bot
//	{T}:n:alias              hash    old chat id -> new chat id (migrated groups)
//	{T}:n:bc:<id>            hash    broadcast progress: t (total), q (queued), s (sent), f:<reason> (failed); PEXPIRE ttl
//	{T}:n:bc:<id>:seen       set     job ids already counted as failed (dedupe); PEXPIRE ttl
//	{T}:n:msg:<job id>       string  Telegram message id the job was sent as; PX SentTTL
//	{T}:n:once:m:<key>       string  Notify/Edit idempotency key: the job ids, comma-separated (written by lanes.EnqueueOnce); PX KeyTTL
//	{T}:n:once:bc:<key>      string  Broadcast idempotency key: the broadcast id; PX KeyTTL
//
// keyspace is the one place that builds them.
type keyspace struct{ tag string }

func (k keyspace) prefix() string             { return "{" + k.tag + "}:n:" }
func (k keyspace) inactive() string           { return k.prefix() + "inactive" }
func (k keyspace) alias() string              { return k.prefix() + "alias" }
func (k keyspace) progress(id string) string  { return k.prefix() + "bc:" + id }
func (k keyspace) seen(id string) string      { return k.prefix() + "bc:" + id + ":seen" }
func (k keyspace) sent(id lanes.JobID) string { return k.prefix() + "msg:" + string(id) }
func (k keyspace) once(key string) string     { return k.prefix() + "once:m:" + key }
func (k keyspace) onceBC(key string) string   { return k.prefix() + "once:bc:" + key }

// Fields of the progress hash.
const (
	fieldTotal   = "t"
	fieldQueued  = "q"
	fieldSent    = "s"
	fieldFailed  = "f:" // + reason
	reasonSkip   = "inactive"
	maxAliasHops = 4
)
