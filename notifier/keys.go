package notifier

import "github.com/codemojex/codemojex/lanes"

// Every key the notifier keeps lives under the lanes store's hash tag, so it
// shares the store's cluster slot. Layout (T = tag):
//
//	{T}:n:bc:<id>            hash    broadcast progress: t (total), q (queued), s (sent), f:<reason> (failed), c (cancelled), x (stopped), xt (when, ms), xd (the stop finished),
//	                                 p (paid), ps (paid copies sent), h (paid part halted: cannot pay), fr (continued free), mv (copies moved to free);
//	                                 a lazy one's record too (lazy.go): lz, tpl (template), np (parts), cur (cursor), at (start ms), rt (spread
//	                                 rate), sk (skipped inactive), qp (queued paid), pm (paid max); PEXPIRE ttl
//	{T}:n:bc:<id>:seen       set     job ids already counted as failed (dedupe); PEXPIRE ttl
//	{T}:n:bc:<id>:jobs       list    the broadcast's job ids, in fan-out order (what StopBroadcast cancels); PEXPIRE ttl
//	{T}:n:bc:<id>:out        zset    a lazy broadcast's copies not yet settled (score 0, by id: what StopBroadcast cancels, ContinueFree moves); PEXPIRE ttl
//	{T}:n:bcs                zset    lazy broadcasts still to fill (walk not over, not stopped), score = start (unix ms)
//	{T}:n:paidhalt           string  the paid queue is halted (the bot could not pay): the broadcast id; PX ProgressTTL
//	{T}:n:once:m:<key>       string  Notify/Edit idempotency key: the job ids, comma-separated (written by lanes.Enqueue with lanes.Dedupe); PX KeyTTL
//	{T}:n:once:bc:<key>      string  Broadcast idempotency key: the broadcast id; PX KeyTTL
//
// keyspace is the one place that builds them. The chats' delivery state
// ({T}:n:inactive, {T}:n:alias, {T}:n:msg:<job id>, {T}:n:unk:<job id>) is package chatstate's;
// docs/keys.md lists every key of the program.
type keyspace struct{ tag string }

func (k keyspace) prefix() string            { return "{" + k.tag + "}:n:" }
func (k keyspace) progress(id string) string { return k.prefix() + "bc:" + id }
func (k keyspace) seen(id string) string     { return k.prefix() + "bc:" + id + ":seen" }
func (k keyspace) jobs(id string) string     { return k.prefix() + "bc:" + id + ":jobs" }
func (k keyspace) stop(id string) string     { return k.prefix() + "bc:" + id + ":stop" }
func (k keyspace) out(id string) string      { return k.prefix() + "bc:" + id + ":out" }
func (k keyspace) active() string            { return k.prefix() + "bcs" }
func (k keyspace) once(key string) string    { return k.prefix() + "once:m:" + key }
func (k keyspace) paidHalt() string          { return k.prefix() + "paidhalt" }
func (k keyspace) onceBC(key string) string  { return k.prefix() + "once:bc:" + key }

// latest is the lanes coalesce name of EditLatest's edits of the message
// job ref sent (a key of the queue, "{T}:q:Q:co:edit:<ref>", owned by lanes).
func (k keyspace) latest(ref lanes.JobID) string { return "edit:" + string(ref) }

// Fields of the progress hash.
const (
	fieldTotal  = "t"
	fieldQueued = "q"
	fieldSent   = "s"
	fieldFailed = "f:" // + reason
	fieldCancel = "c"  // copies removed from their lanes by StopBroadcast
	fieldStop   = "x"  // set once StopBroadcast was called
	fieldStopOK = "xd" // set once a StopBroadcast ran to its end (lua/stopdone.lua)
	fieldStopAt = "xt" // when StopBroadcast was first called, unix ms
	fieldStopS  = "xs" // copies sent when the stop first finished (lua/stopdone.lua)
	fieldStopI  = "xi" // copies in flight when the stop first finished (lua/stopdone.lua)
	fieldPaid   = "p"  // "1": a paid broadcast (copies on tgjob.QueuePaid)
	fieldPaidN  = "ps" // paid copies delivered (each 0.1 Star)
	fieldHalt   = "h"  // "1": the paid part halted, the bot could not pay
	fieldFree   = "fr" // "1": the rest continued free (ContinueFree)
	fieldMoved  = "mv" // copies ContinueFree moved to tgjob.QueueNotify
	reasonSkip  = "inactive"
)
