package intake

import "strconv"

// Keys builds every key the intake keeps (see the package doc and
// docs/keys.md), under the program's hash tag T:
//
//	{T}:app:poller        string  poller lease: token, PX lease
//	{T}:app:polled        string  heartbeat: token of the poller whose getUpdates succeeded, PX 2x long-poll timeout
//	{T}:app:in:offset     string  next getUpdates offset (last recorded update_id + 1)
//	{T}:app:in:queue      list    recorded updates not yet handled: "<update_id>\n<update JSON>", or a re-base marker "rebase\n<E>"
//	{T}:app:in:handled    string  highest update_id handled (in the current epoch)
//	{T}:app:in:rebases    string  re-bases recorded (integer: the epoch of the last marker)
//	{T}:app:in:epoch      string  epoch of the handler: the last re-base marker it popped (integer, 0 before any)
//	{T}:app:j:<update_id> hash    journal of an update being handled: pre, out, bc, bcs (deleted when handled)
type Keys struct{ tag string }

func (k Keys) prefix() string { return "{" + k.tag + "}:app:" }

// Lease is the poller lease.
func (k Keys) Lease() string { return k.prefix() + "poller" }

// Polled is the polling heartbeat.
func (k Keys) Polled() string { return k.prefix() + "polled" }

// Offset is the next getUpdates offset.
func (k Keys) Offset() string { return k.prefix() + "in:offset" }

// Queue is the inbox list.
func (k Keys) Queue() string { return k.prefix() + "in:queue" }

// Handled is the handled mark.
func (k Keys) Handled() string { return k.prefix() + "in:handled" }

// Rebases is the count of re-bases recorded.
func (k Keys) Rebases() string { return k.prefix() + "in:rebases" }

// Epoch is the handler's epoch (the last re-base marker it popped).
func (k Keys) Epoch() string { return k.prefix() + "in:epoch" }

// Journal is the journal of update id.
func (k Keys) Journal(id int64) string { return k.prefix() + "j:" + strconv.FormatInt(id, 10) }
