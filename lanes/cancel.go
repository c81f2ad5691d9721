package lanes

import (
	"context"
	"fmt"
	"strings"
)

// CancelResult counts what Cancel did with the ids it was given.
type CancelResult struct {
	// Cancelled jobs were waiting (on their lane, or in the delayed set of
	// an unordered queue) and are gone: never claimed again.
	Cancelled int
	// InFlight jobs were under a lease: left to their claimer but marked
	// cancelled. Its Ack still settles one as delivered (it was sent; the
	// Tally does not count it); any other end of its lease (Release, Nack,
	// Postpone, Dead, DeadUntried: Outcome Cancelled; its expiry, also
	// after RecoverDead) drops it instead, never claimed again nor
	// dead-lettered, and counts it in the Tally then, once.
	InFlight int
	// Gone ids were dead letters (left in the dead-letter set), jobs in
	// flight already known delivered (Store.AckLost marked them:
	// LostMarked; counted sent however their lease ends, never in the
	// Tally), or had no job (acked, purged, or never enqueued).
	Gone int
}

// Tally names a counter Cancel increments by the number of jobs it
// cancelled, in the same atomic call as the removal, so a caller's count
// never drifts from what was removed even when it crashes right after; a
// job it found in flight is counted in it later, by the call or the claim
// that drops it (CancelResult.InFlight), in that same atomic call, while
// the hash exists (one that expired is not brought back). So once every
// job named is settled, the tally plus the jobs acked after the Cancel
// (and those gone before it) account for every id once. Key is a full key
// name under the store's hash tag (it must start with "{tag}:"), with no
// newline, a hash the caller owns; Field its field.
type Tally struct {
	Key, Field string
}

// cancelChunk is how many ids go in one cancel script call; chunks of one
// call are sent in one round trip (pipelined).
const cancelChunk = 500

// Cancel removes the jobs ids of queue that are still waiting: each is
// taken off its lane (or, on an unordered queue, out of the delayed set)
// and deleted, so no claimer ever gets it. Jobs in flight are left to their
// claimer but marked (one HSETNX each), so that none goes back to its lane
// or to the dead letters: an ack settles it as delivered, any other end of
// its lease drops it and counts it in tally (see CancelResult.InFlight;
// a second Cancel keeps the first one's tally). Dead letters stay dead
// letters, and unknown ids are counted as gone. Each chunk of 500 ids is one atomic script call, all chunks in one
// pipelined round trip; the cost is O(ids x log n), independent of the
// number of lanes and keys (no scan). A lane Cancel empties leaves the ring
// at the next claim that visits it, in O(1). With a non-zero tally, its
// counter is incremented by each chunk's cancelled jobs atomically with
// the chunk. Cancelling the same ids again cancels nothing more.
// Errors: ErrInvalid (nothing changed) for a bad queue, a malformed id or a
// tally key outside the store's tag (or holding a newline); the server's error (chunks before the
// failing one may have been applied; the result counts them).
func (s *Store) Cancel(ctx context.Context, queue string, ids []JobID, tally Tally) (CancelResult, error) {
	if err := validQueueAndIDs(queue, ids); err != nil {
		return CancelResult{}, err
	}
	if tally != (Tally{}) {
		prefix := "{" + s.keys.tag + "}:"
		if !strings.HasPrefix(tally.Key, prefix) || len(tally.Key) == len(prefix) || strings.Contains(tally.Key, "\n") || tally.Field == "" {
			return CancelResult{}, fmt.Errorf("%w: cancel tally %q field %q: want a key %q + a name (no newline) and a field", ErrInvalid, tally.Key, tally.Field, prefix)
		}
	}
	var res CancelResult
	if len(ids) == 0 {
		return res, nil
	}
	var calls []valkeyExec
	for start := 0; start < len(ids); start += cancelChunk {
		part := ids[start:min(start+cancelChunk, len(ids))]
		keys, args := s.header(queue, 1+len(part))
		if tally.Key != "" {
			keys = append(keys, tally.Key)
		}
		args = append(args, tally.Field)
		for _, id := range part {
			args = append(args, string(id))
		}
		calls = append(calls, valkeyExec{keys: keys, args: args})
	}
	for i, r := range s.execMulti(ctx, s.scripts.cancel, calls) {
		v, err := r.AsIntSlice()
		if err == nil && len(v) != 3 {
			err = fmt.Errorf("malformed reply")
		}
		if err != nil {
			return res, fmt.Errorf("lanes: cancel chunk %d of %d: %w", i+1, len(calls), err)
		}
		res.Cancelled += int(v[0])
		res.InFlight += int(v[1])
		res.Gone += int(v[2])
	}
	return res, nil
}
