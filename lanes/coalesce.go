package lanes

import (
	"context"
	"fmt"
	"time"
)

// MaxCoalesceKeyBytes is the longest coalesce key name, in bytes.
const MaxCoalesceKeyBytes = 256

// EnqueueCoalesce enqueues it under coalesce key name so that, while the
// job is still pending, a newer call with the same name replaces it: one
// atomic script (lua/coalesce.lua) either overwrites the payload of the
// pending job last enqueued under name (it keeps its id, so its place in
// the lane: latest wins, one send) or, when that job was claimed, settled,
// dead-lettered or never existed, enqueues it fresh (as Enqueue) and makes
// name point to it. A job already in flight is never touched, so on an
// ordered queue the newer payload is sent after it. It returns the id of
// the job that will carry the payload (it.ID when enqueued fresh, the
// pending job's id when replaced) and replaced = true for a replacement.
//
// Use it for frames of one thing where only the latest matters (an edited
// message's content). The name is a key of the queue
// ("{T}:q:<queue>:co:<name>", a string holding a job id); it is renewed to
// ttl on every call and expires ttl after the last one (it is not deleted
// when its job settles: a stale name is overwritten by the next call), so
// names leak nothing beyond ttl. A ttl shorter than a job's wait only
// costs the coalescing of that job (the next call enqueues fresh),
// never a lost or reordered payload.
//
// Errors: ErrInvalid (nothing written) for a bad queue, a name empty or
// over MaxCoalesceKeyBytes, a ttl under 1 ms, or an item that Enqueue
// would refuse; the server's error (an it.ID that exists already is
// refused by the script when a fresh job is needed).
func (s *Store) EnqueueCoalesce(ctx context.Context, queue, name string, ttl time.Duration, it Item) (JobID, bool, error) {
	if name == "" || len(name) > MaxCoalesceKeyBytes {
		return "", false, fmt.Errorf("%w: coalesce key of %d bytes: want 1..%d", ErrInvalid, len(name), MaxCoalesceKeyBytes)
	}
	if ttl < time.Millisecond {
		return "", false, fmt.Errorf("%w: coalesce ttl %v: want >= 1ms", ErrInvalid, ttl)
	}
	if err := s.validItems(queue, []Item{it}); err != nil {
		return "", false, err
	}
	keys, args := s.header(queue, 4)
	keys = append(keys, s.keys.coalesce(queue, name))
	args = append(args, ms(ttl), it.Group, string(it.ID), string(it.Payload))
	v, err := s.scripts.coalesce.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return "", false, fmt.Errorf("lanes: enqueue coalesce: %w", err)
	}
	if len(v) != 2 {
		return "", false, fmt.Errorf("lanes: enqueue coalesce: malformed reply")
	}
	fresh, err := v[0].AsInt64()
	if err != nil {
		return "", false, fmt.Errorf("lanes: enqueue coalesce: malformed reply: %w", err)
	}
	id, err := v[1].ToString()
	if err != nil {
		return "", false, fmt.Errorf("lanes: enqueue coalesce: malformed reply: %w", err)
	}
	return JobID(id), fresh == 0, nil
}
