package lanes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
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
	// Refused jobs were not enqueued because the stop key of
	// EnqueueBatchUnless existed when their chunk ran.
	Refused int
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
	return s.enqueueBatch(ctx, queue, "", items)
}

// EnqueueBatchUnless is EnqueueBatch that enqueues nothing once key stop
// exists: each chunk checks it in its own atomic call, so a chunk that runs
// after the key was set adds no job (counted in Refused), and a caller that
// sets the key and then cancels the jobs it knows of (recorded before they
// were enqueued) leaves none of them on a lane. It is how a fan-out is
// stopped mid-way (notifier.StopBroadcast). stop is a full key name under
// the store's hash tag (it must start with "{tag}:"). Errors: as
// EnqueueBatch; ErrInvalid for a bad stop key.
func (s *Store) EnqueueBatchUnless(ctx context.Context, queue, stop string, items []Item) (EnqueueResult, error) {
	if err := s.validTagged("stop key", stop); err != nil {
		return EnqueueResult{}, err
	}
	return s.enqueueBatch(ctx, queue, stop, items)
}

func (s *Store) enqueueBatch(ctx context.Context, queue, stop string, items []Item) (EnqueueResult, error) {
	if err := s.validItems(queue, items); err != nil {
		return EnqueueResult{}, err
	}
	if len(items) == 0 {
		return EnqueueResult{}, nil
	}
	var calls []valkeyExec
	var sizes []int
	for start := 0; start < len(items); start += batchChunk {
		end := min(start+batchChunk, len(items))
		sizes = append(sizes, end-start)
		c := s.enqueueCall(queue, "", 0, items[start:end])
		if stop != "" {
			c.keys = append(c.keys, stop)
		}
		calls = append(calls, c)
	}
	var res EnqueueResult
	for i, r := range s.execMulti(ctx, s.scripts.enqueue, calls) {
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 2 {
			return res, fmt.Errorf("lanes: enqueue chunk %d of %d: %w", i+1, len(calls), errors.Join(err, errMalformed(len(v))))
		}
		if v[0] == -2 {
			res.Refused += sizes[i]
			continue
		}
		res.Added += int(v[0])
		res.Duplicates += int(v[1])
	}
	return res, nil
}

// errMalformed is nil for an enqueue reply of two integers.
func errMalformed(n int) error {
	if n == 2 {
		return nil
	}
	return fmt.Errorf("malformed reply (%d integers)", n)
}

// validTagged checks that key is a full key name under the store's hash
// tag (so it shares the scripts' cluster slot).
func (s *core) validTagged(what, key string) error {
	prefix := "{" + s.keys.tag + "}:"
	if !strings.HasPrefix(key, prefix) || len(key) == len(prefix) {
		return fmt.Errorf("%w: %s %q: want %q + a name", ErrInvalid, what, key, prefix)
	}
	return nil
}

// MaxOnceItems is the most jobs one EnqueueOnce call takes (one atomic
// script call).
const MaxOnceItems = batchChunk

// EnqueueOnce is EnqueueBatch guarded by an idempotency key, for a caller
// that may run again after a crash (and would otherwise enqueue the same
// messages twice, even after the first copies were delivered and acked).
// In one atomic call it either enqueues items and SETs key (NX) to their
// ids with ttl, or, when key exists, enqueues nothing and returns the ids
// stored under it. fresh reports which happened. key is a full key name
// under the store's hash tag (it must start with "{tag}:", so it shares
// the scripts' cluster slot); the caller owns its layout. Errors:
// ErrInvalid (nothing written) for a bad key, a ttl under 1 ms, no items or
// more than MaxOnceItems, or any bad item as for EnqueueBatch; the
// server's error.
func (s *Store) EnqueueOnce(ctx context.Context, queue, key string, ttl time.Duration, items []Item) (ids []JobID, fresh bool, err error) {
	if err := s.validTagged("idempotency key", key); err != nil {
		return nil, false, err
	}
	if ttl < time.Millisecond {
		return nil, false, fmt.Errorf("%w: idempotency ttl %v: want >= 1ms", ErrInvalid, ttl)
	}
	if len(items) == 0 || len(items) > MaxOnceItems {
		return nil, false, fmt.Errorf("%w: enqueue once: %d items: want 1..%d", ErrInvalid, len(items), MaxOnceItems)
	}
	if err := s.validItems(queue, items); err != nil {
		return nil, false, err
	}
	c := s.enqueueCall(queue, key, ttl, items)
	v, err := s.scripts.enqueue.Exec(ctx, s.c, c.keys, c.args).ToArray()
	if err != nil {
		return nil, false, fmt.Errorf("lanes: enqueue once: %w", err)
	}
	if len(v) != 2 {
		return nil, false, fmt.Errorf("lanes: enqueue once: malformed reply")
	}
	if code, _ := v[0].AsInt64(); code == -1 {
		stored, err := v[1].ToString()
		if err != nil {
			return nil, false, fmt.Errorf("lanes: enqueue once: malformed reply: %w", err)
		}
		for _, id := range strings.Split(stored, ",") {
			ids = append(ids, JobID(id))
		}
		return ids, false, nil
	}
	ids = make([]JobID, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	return ids, true, nil
}

// enqueueCall is one enqueue.lua call for items (at most batchChunk), with
// an idempotency key when once is not "".
func (s *core) enqueueCall(queue, once string, ttl time.Duration, items []Item) valkeyExec {
	keys, args := s.header(queue, 1+3*len(items))
	if once != "" {
		keys = append(keys, once)
	}
	args = append(args, ms(ttl))
	for _, it := range items {
		args = append(args, it.Group, string(it.ID), string(it.Payload))
	}
	return valkeyExec{keys: keys, args: args}
}

// validItems checks queue and every item (group, id, payload size).
func (s *core) validItems(queue string, items []Item) error {
	if err := validQueue(queue); err != nil {
		return err
	}
	for i, it := range items {
		if err := validGroup(it.Group); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		if err := it.ID.Validate(); err != nil {
			return fmt.Errorf("item %d: %w", i, err)
		}
		if len(it.Payload) > s.opt.maxPayload {
			return fmt.Errorf("item %d: %w: payload of %d bytes: at most %d", i, ErrInvalid, len(it.Payload), s.opt.maxPayload)
		}
	}
	return nil
}
