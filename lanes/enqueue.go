package lanes

import (
	"context"
	"fmt"
)

// Item is one job for EnqueueBatch.
type Item struct {
	Group   string
	ID      JobID
	Payload []byte
}

// EnqueueResult counts what an enqueue did.
type EnqueueResult struct {
	// Added jobs were new; Duplicates had an id that exists already and
	// were left as they were.
	Added, Duplicates int
}

// batchChunk is how many jobs go in one script call; chunks of one batch are
// sent in one round trip (pipelined).
const batchChunk = 500

// Enqueue adds one job to lane group of queue: the payload is stored once
// and the id joins the lane's sorted set at score 0, so the lane is FIFO by
// id. A lane that was not in the ring joins its tail (never twice). It
// reports false when a job with this id exists already (no duplicate is
// made). Errors: ErrInvalid (nothing written) for an empty or bad queue, an
// empty group or one over 256 bytes, a malformed id, a payload over the
// store's limit; or the server's error.
func (s *Store) Enqueue(ctx context.Context, queue, group string, id JobID, payload []byte) (bool, error) {
	r, err := s.EnqueueBatch(ctx, queue, []Item{{Group: group, ID: id, Payload: payload}})
	if err != nil {
		return false, err
	}
	return r.Added == 1, nil
}

// EnqueueBatch adds many jobs (fan-out) in chunks of 500 jobs per script
// call, all chunks in one pipelined round trip. Every item is checked first:
// one bad item fails the whole batch with ErrInvalid and nothing is written.
// Each chunk is atomic; on a server error some chunks may have been applied
// (enqueueing the same batch again is safe: existing ids are skipped).
func (s *Store) EnqueueBatch(ctx context.Context, queue string, items []Item) (EnqueueResult, error) {
	if err := validQueue(queue); err != nil {
		return EnqueueResult{}, err
	}
	for i, it := range items {
		if err := validGroup(it.Group); err != nil {
			return EnqueueResult{}, fmt.Errorf("item %d: %w", i, err)
		}
		if err := it.ID.Validate(); err != nil {
			return EnqueueResult{}, fmt.Errorf("item %d: %w", i, err)
		}
		if len(it.Payload) > s.opt.maxPayload {
			return EnqueueResult{}, fmt.Errorf("item %d: %w: payload of %d bytes: at most %d", i, ErrInvalid, len(it.Payload), s.opt.maxPayload)
		}
	}
	if len(items) == 0 {
		return EnqueueResult{}, nil
	}
	var calls []valkeyExec
	for start := 0; start < len(items); start += batchChunk {
		end := min(start+batchChunk, len(items))
		keys, args := s.header(queue, 3*(end-start))
		for _, it := range items[start:end] {
			args = append(args, it.Group, string(it.ID), string(it.Payload))
		}
		calls = append(calls, valkeyExec{keys: keys, args: args})
	}
	var res EnqueueResult
	for i, r := range s.execMulti(ctx, s.scripts.enqueue, calls) {
		v, err := r.AsIntSlice()
		if err != nil {
			return res, fmt.Errorf("lanes: enqueue chunk %d of %d: %w", i+1, len(calls), err)
		}
		res.Added += int(v[0])
		res.Duplicates += int(v[1])
	}
	return res, nil
}
