package intake

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/codemojex/codemojex/lanes"
)

// QueueName is the lanes queue of recorded updates, one lane per chat
// (LaneOf).
const QueueName = "update"

// Defaults of the update queue.
const (
	// DefaultMaxAttempts is how many times an update may fail (its handler
	// panicked or an infrastructure error stopped it, or its handler's
	// lease expired) before it is dead-lettered with the last reason: a
	// poison update blocks its chat for a few retries, never forever.
	DefaultMaxAttempts = 5
	// MaxUpdateBytes is the largest update JSON the intake records (1 MiB;
	// Telegram's updates are a few KiB). It is also the webhook body limit.
	MaxUpdateBytes = 1 << 20
	// maxPayload is the update queue's payload limit: an update of
	// MaxUpdateBytes and its recorded-time header.
	maxPayload = MaxUpdateBytes + 32
)

// StoreOptions are the lanes options of the update queue's store: QueueName
// ordered (a chat's updates one at a time, in update_id order) with
// maxAttempts (0 means DefaultMaxAttempts), payloads up to MaxUpdateBytes
// plus the recorded-time header, and no global rate, no lane pace and
// lanes.WithoutSendLimits: the intake's claims are not Telegram sends, so
// Telegram's budgets (a lane's pace override, the global pause the worker
// sets on a bot-wide 429, both kept per tag) must not throttle them. The
// store shares the program's hash tag (append lanes.WithTag), so per-chat
// weights, which lanes keeps per tag, apply to a chat's updates as to its
// messages.
func StoreOptions(maxAttempts int) []lanes.Option {
	if maxAttempts <= 0 {
		maxAttempts = DefaultMaxAttempts
	}
	return []lanes.Option{
		lanes.WithQueue(QueueName, lanes.QueueConfig{Ordered: true, MaxAttempts: maxAttempts}),
		lanes.WithMaxPayload(maxPayload),
		lanes.WithoutSendLimits(),
	}
}

// JobID is the update queue's job id of update id in epoch: a ULID whose
// time field is the epoch and whose entropy is the update_id, so byte order
// is (epoch, update_id) order (a lane is handled in update_id order, a new
// epoch after the old one) and the same update always gets the same id: an
// update recorded again while its job waits or runs is not enqueued twice.
func JobID(epoch, id int64) lanes.JobID {
	var u ulid.ULID
	var t [8]byte
	binary.BigEndian.PutUint64(t[:], uint64(epoch))
	copy(u[0:6], t[2:8])
	binary.BigEndian.PutUint64(u[8:16], uint64(id))
	return lanes.JobID(lanes.JobIDPrefix + u.String())
}

// parseJobID is JobID's inverse.
func parseJobID(j lanes.JobID) (epoch, id int64, err error) {
	s := string(j)
	if len(s) != lanes.JobIDLen {
		return 0, 0, fmt.Errorf("intake: job id %q is not an update's", s)
	}
	u, err := ulid.ParseStrict(s[len(lanes.JobIDPrefix):])
	if err != nil {
		return 0, 0, fmt.Errorf("intake: job id %q: %w", s, err)
	}
	var t [8]byte
	copy(t[2:8], u[0:6])
	return int64(binary.BigEndian.Uint64(t[:])), int64(binary.BigEndian.Uint64(u[8:16])), nil
}

// payload is a job's payload: the recorded time (unix ms, decimal),
// followed by " o" when the update was fetched by getUpdates (inOrder:
// no earlier update of its chat can be recorded after it), a newline, the
// update's JSON as Telegram sent it.
func payload(recorded time.Time, inOrder bool, raw []byte) []byte {
	b := strconv.AppendInt(nil, recorded.UnixMilli(), 10)
	if inOrder {
		b = append(b, inOrderMark...)
	}
	b = append(b, '\n')
	return append(b, raw...)
}

// inOrderMark follows the recorded time in the payload of an update
// fetched by getUpdates.
const inOrderMark = " o"
