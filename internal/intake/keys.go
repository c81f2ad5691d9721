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
//	{T}:app:in:done:<b>   hash    lane -> "<epoch>:<update_id>" of the last update handled on it, for the
//	                              lanes of bucket b = ChatBucket(lane) (0..ChatBuckets-1)
//	{T}:app:in:done       hash    the same marks as one hash (before the buckets): read, and moved to the
//	                              buckets (MigrateMarks, and done.lua for a lane it finishes)
//	{T}:app:in:seen:<g>   sorted set  lane g's last SeenCap finished updates (score 0) and its floor
//	                              (one member of score 1, "f" + padded member); EXPIRE SeenTTL
//	{T}:app:in:floor      hash    lane -> floor, as kept before the floor lived in the set: read, and
//	                              emptied (MigrateFloors, and done.lua for a lane it finishes)
//	{T}:app:in:rec        sorted set  job id -> recorded time (ms) of each update not yet handled
//	{T}:app:in:sync       string  the time (ms) of the last replica wait's write (WithReplicaWait), PX 1 min
//	{T}:app:j:<update_id> hash    journal of an update being handled: the fields its handler wrote (deleted when handled)
type Keys struct{ tag string }

// ChatBuckets is how many buckets the intake's handled marks, kept for
// good per chat, are split into (internal/chats splits the audience and
// the chat directory by the same rule, chats.Buckets): Valkey keeps a small hash or set as a listpack or intset, a
// few bytes per entry, where one hash of every chat is a hash table of
// 40-100 bytes per entry. 1,024 keeps a bucket under Valkey 8's defaults
// (hash-max-listpack-entries 512, set-max-intset-entries 512) up to about
// 500,000 chats (docs/floods.md, the retention rule; beyond, raise them).
const ChatBuckets = 1024

// ChatBucket is chat's bucket: chat mod ChatBuckets, 0..ChatBuckets-1
// (a negative group id too).
func ChatBucket(chat int64) int64 { return (chat%ChatBuckets + ChatBuckets) % ChatBuckets }

// laneBucket is lane's bucket: its chat's (lanes are decimal chat ids,
// LaneOf); a lane that is not one (none is made) goes to bucket 0.
func laneBucket(lane string) int64 {
	id, err := strconv.ParseInt(lane, 10, 64)
	if err != nil {
		return 0
	}
	return ChatBucket(id)
}

func (k Keys) prefix() string { return "{" + k.tag + "}:app:" }

// Lease is the poller lease.
func (k Keys) Lease() string { return k.prefix() + "poller" }

// Polled is the polling heartbeat.
func (k Keys) Polled() string { return k.prefix() + "polled" }

// Sync is the key a replica wait writes before its WAIT (waitReplicas).
func (k Keys) Sync() string { return k.prefix() + "in:sync" }

// Offset is the next getUpdates offset.
func (k Keys) Offset() string { return k.prefix() + "in:offset" }

// Rebases is the count of re-bases begun (the current epoch).
func (k Keys) Rebases() string { return k.prefix() + "in:rebases" }

// Rebasing is the epoch of a re-base begun and not yet ended.
func (k Keys) Rebasing() string { return k.prefix() + "in:rebasing" }

// Done is the hash of the handled marks of lane's bucket (ChatBucket).
func (k Keys) Done(lane string) string {
	return k.prefix() + "in:done:" + strconv.FormatInt(laneBucket(lane), 10)
}

// DoneBucket is the hash of the handled marks of bucket b (0..ChatBuckets-1).
func (k Keys) DoneBucket(b int64) string { return k.prefix() + "in:done:" + strconv.FormatInt(b, 10) }

// LegacyDone is the one hash of every lane's handled mark that the intake
// kept before the buckets: still read, and emptied into the buckets
// (MigrateMarks; done.lua moves a lane's mark when it finishes an update
// of it).
func (k Keys) LegacyDone() string { return k.prefix() + "in:done" }

// Seen is the sorted set of lane's recently finished update ids (done.lua).
func (k Keys) Seen(lane string) string { return k.prefix() + "in:seen:" + lane }

// LegacyFloor is the one hash of per-lane floors (updates at or below a
// lane's floor count as finished) that the intake kept before the floor
// lived in the lane's finished set (Seen, the member of score 1, expiring
// with it): still read (the higher floor counts), and emptied (MigrateFloors;
// done.lua moves or drops a lane's field when it finishes an update of it).
func (k Keys) LegacyFloor() string { return k.prefix() + "in:floor" }

// Recorded is the sorted set of unhandled updates' recorded times.
func (k Keys) Recorded() string { return k.prefix() + "in:rec" }

// Journal is the journal of update id.
func (k Keys) Journal(id int64) string { return k.prefix() + "j:" + strconv.FormatInt(id, 10) }
