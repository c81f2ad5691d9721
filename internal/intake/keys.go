package intake

import "strconv"

// Keys builds every key the intake keeps (see the package doc and
// docs/keys.md), under the program's hash tag T. The update queue itself
// is a lanes queue (QueueName) of the same tag; its keys are the lanes
// package's ({T}:q:update:...).
//
//	{T}:app:poller        string  poller lease: token, PX lease
//	{T}:app:polled        string  heartbeat: token of the poller whose getUpdates succeeded, PX 2x long-poll timeout
//	{T}:app:in:offset     string  next getUpdates offset (last recorded update_id + 1)
//	{T}:app:in:rebases    string  re-bases begun (integer: the current epoch E)
//	{T}:app:in:rebasing   string  the epoch of a re-base begun and not yet ended (absent otherwise)
//	{T}:app:in:done       hash    lane -> "<epoch>:<update_id>" of the last update handled on it
//	{T}:app:in:rec        sorted set  job id -> recorded time (ms) of each update not yet handled
//	{T}:app:j:<update_id> hash    journal of an update being handled: pre, out, bc, bcs (deleted when handled)
type Keys struct{ tag string }

func (k Keys) prefix() string { return "{" + k.tag + "}:app:" }

// Lease is the poller lease.
func (k Keys) Lease() string { return k.prefix() + "poller" }

// Polled is the polling heartbeat.
func (k Keys) Polled() string { return k.prefix() + "polled" }

// Offset is the next getUpdates offset.
func (k Keys) Offset() string { return k.prefix() + "in:offset" }

// Rebases is the count of re-bases begun (the current epoch).
func (k Keys) Rebases() string { return k.prefix() + "in:rebases" }

// Rebasing is the epoch of a re-base begun and not yet ended.
func (k Keys) Rebasing() string { return k.prefix() + "in:rebasing" }

// Done is the hash of per-lane handled marks.
func (k Keys) Done() string { return k.prefix() + "in:done" }

// Seen is the sorted set of lane's recently finished update ids (done.lua).
func (k Keys) Seen(lane string) string { return k.prefix() + "in:seen:" + lane }

// Floor is the hash of per-lane floors: updates at or below a lane's floor
// count as finished (done.lua).
func (k Keys) Floor() string { return k.prefix() + "in:floor" }

// Recorded is the sorted set of unhandled updates' recorded times.
func (k Keys) Recorded() string { return k.prefix() + "in:rec" }

// Journal is the journal of update id.
func (k Keys) Journal(id int64) string { return k.prefix() + "j:" + strconv.FormatInt(id, 10) }
