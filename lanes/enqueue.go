package lanes

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Item is one job to enqueue: the lane it joins (Group), its id and its
// payload (at most the store's WithMaxPayload bytes).
type Item struct {
	Group   string
	ID      JobID
	Payload []byte
}

// EnqueueResult says what one Enqueue call did with its items. On success
// (or ErrLaneFull) every item is counted exactly once:
//
//	Added + Duplicates + Refused + Full + Coalesced + Deduped + Moved == len(items)
type EnqueueResult struct {
	// Added items became new jobs (their id joined their lane).
	Added int
	// Duplicates had an id that exists already (pending, in flight,
	// delayed or dead): that job was left exactly as it was.
	Duplicates int
	// Refused items were not enqueued because the Unless stop key existed
	// when their chunk ran (a whole chunk of up to 500 items at a time).
	Refused int
	// Full items were not enqueued because their lane held the queue's
	// QueueConfig.MaxDepth pending jobs (Enqueue then returns ErrLaneFull).
	Full int
	// Coalesced is 1 when, with Coalesce, the item's payload replaced that
	// of the pending job last enqueued under the name (IDs[0] is that
	// job's id, not the item's).
	Coalesced int
	// Moved is len(items) when, with AtCursor, the cursor did not hold its
	// expected value: nothing was enqueued and nothing written (another
	// producer took the step).
	Moved int
	// Deduped is len(items) when, with Dedupe, the dedupe key existed:
	// nothing was enqueued and IDs are the ids stored under the key by the
	// call that set it.
	Deduped int
	// IDs are the ids of the jobs that carry the items, set only with
	// Dedupe (the items' ids in order, or the stored ids when Deduped, which
	// may differ in number from len(items)) and Coalesce (one id). Without
	// these options IDs is nil: each item's job has the item's own id.
	IDs []JobID
}

// EnqueueOption is one option of an Enqueue call: Dedupe, Coalesce,
// Unless, AtCursor or CountDead. Each sets its part of the call's configuration, which Enqueue
// checks as a whole before anything is written. Of one option given twice,
// the last wins.
type EnqueueOption func(*enqueueConfig)

// enqueueConfig is what the options of one Enqueue call set; the zero value
// is a plain enqueue. Enqueue validates it (validEnqueue) and enqueueCall
// turns it into the script's KEYS and ARGV.
type enqueueConfig struct {
	dedupe      bool
	dedupeKey   string
	dedupeTTL   time.Duration
	coalesce    bool
	coalesceKey string // the name, not the key (keyspace.coalesce builds it)
	coalesceTTL time.Duration
	stop        string // the stop key; "" for none (Unless("") is refused)
	unless      bool
	cursor      *Cursor
	dead        *DeadTally // CountDead: stored in each job's field y
}

// Cursor is one step of a producer that walks something in order (a
// broadcast over its audience, a few hundred chats a step): see AtCursor.
// Key and Track are full key names under the store's hash tag.
type Cursor struct {
	// Key is the hash holding the cursor; Field the cursor's field in it.
	Key, Field string
	// From is the value Field must hold for the step to run ("" = the
	// field is absent: the first step); To the value the step sets.
	From, To string
	// Count, when not "", is the field of Key that the number of jobs
	// added is added to (HINCRBY).
	Count string
	// Incr are further HINCRBYs on Key made with the step (field ->
	// amount), e.g. what the step skipped.
	Incr map[string]int64
	// Track, when not "", is a sorted set every added job id joins
	// (score 0, so in mint order), given Key's TTL when Key has one: the
	// ids a producer may later cancel (Store.Cancel).
	Track string
}

// MaxCursorItems is the most items one Enqueue call with AtCursor takes
// (one script call: the step is atomic).
const MaxCursorItems = batchChunk

// AtCursor makes the call one atomic step of a producer: the items are
// enqueued only while field c.Field of hash c.Key holds c.From, and in the
// same call the field is set to c.To, the jobs added are counted into
// c.Count, c.Incr applied and the added ids put in c.Track. A step whose
// cursor moved on (another producer, or a run before a crash, took it)
// writes nothing: EnqueueResult.Moved. So a producer that reads its
// cursor, builds the step's items and enqueues them with AtCursor enqueues
// each step once however often it crashes or races another. The call
// takes 0..MaxCursorItems items (0: a step that only moves the cursor); a
// lane of the queue at its QueueConfig.MaxDepth refuses the whole step
// (EnqueueResult.Full, ErrLaneFull; the cursor stays). It combines with
// Unless (checked first); not with Dedupe or Coalesce.
func AtCursor(c Cursor) EnqueueOption {
	return func(cfg *enqueueConfig) { cfg.cursor = &c }
}

// Dedupe makes the call idempotent under key, for a caller that may run
// again after a crash (and would otherwise enqueue the same messages twice,
// even after the first copies were delivered and acked). In one atomic
// script call Enqueue either enqueues the items and SETs key (NX) to their
// ids, comma-separated, with ttl, or, when key exists, enqueues nothing and
// returns the ids stored under it (EnqueueResult.Deduped, IDs).
//
// key is a full key name under the store's hash tag (it must start with
// "{tag}:", so it shares the scripts' cluster slot); the caller owns its
// layout. ttl is at least 1 ms. A call with Dedupe takes 1..MaxDedupeItems
// items. It combines with Unless (the stop key is checked first); not with
// Coalesce.
func Dedupe(key string, ttl time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.dedupe, c.dedupeKey, c.dedupeTTL = true, key, ttl }
}

// Coalesce enqueues the call's one item under coalesce name so that, while
// the job is still pending, a newer call with the same name replaces it:
// one atomic script (lua/coalesce.lua) either overwrites the payload of the
// pending job last enqueued under name (it keeps its id, so its place in
// the lane: latest wins, one send; EnqueueResult.Coalesced = 1) or, when
// that job was claimed, settled, dead-lettered or never existed, enqueues
// the item fresh and makes name point to it (Added = 1). A job already in
// flight is never touched, so on an ordered queue the newer payload is sent
// after it. IDs[0] is the id of the job that will carry the payload.
//
// Use it for frames of one thing where only the latest matters (an edited
// message's content). The name is a key of the queue
// ("{T}:q:<queue>:co:<name>", a string holding a job id, 1..
// MaxCoalesceKeyBytes bytes); it is renewed to ttl (at least 1 ms) on every
// call and expires ttl after the last one (it is not deleted when its job
// settles: a stale name is overwritten by the next call), so names leak
// nothing beyond ttl. A ttl shorter than a job's wait only costs the
// coalescing of that job (the next call enqueues fresh), never a lost or
// reordered payload. A call with Coalesce takes exactly one item and no
// other option; an item id that exists already is refused by the script
// (an error, not a Duplicate) when a fresh job is needed.
func Coalesce(name string, ttl time.Duration) EnqueueOption {
	return func(c *enqueueConfig) { c.coalesce, c.coalesceKey, c.coalesceTTL = true, name, ttl }
}

// Unless enqueues nothing once key stop exists: each chunk checks it in its
// own atomic call, so a chunk that runs after the key was set adds no job
// (counted in EnqueueResult.Refused), and a caller that sets the key and
// then cancels the jobs it knows of (recorded before they were enqueued)
// leaves none of them on a lane. It is how a fan-out is stopped mid-way
// (notifier.StopBroadcast). stop is a full key name under the store's hash
// tag (it must start with "{tag}:"). It combines with Dedupe; not with
// Coalesce.
func Unless(stop string) EnqueueOption {
	return func(c *enqueueConfig) { c.unless, c.stop = true, stop }
}

// batchChunk is how many jobs go in one script call; chunks of one call are
// sent in one round trip (pipelined).
const batchChunk = 500

// MaxDedupeItems is the most items one Enqueue call with Dedupe takes (one
// atomic script call).
const MaxDedupeItems = batchChunk

// MaxCoalesceKeyBytes is the longest Coalesce name, in bytes.
const MaxCoalesceKeyBytes = 256

// Enqueue puts items on the lanes of queue: each payload is stored once
// and its id joins the sorted set of lane item.Group at score 0, so a lane
// is FIFO by id; a lane that was not in the ring joins its tail (never
// twice). An item whose id exists already is left as it is (a Duplicate;
// of an id repeated within one call the first item is the one written). One
// call takes one item or many (a fan-out): 500 per script call, each
// atomic, all in one pipelined round trip. opts are Dedupe, Coalesce,
// Unless, AtCursor and CountDead; the result counts every item once (see
// EnqueueResult).
//
//	store.Enqueue(ctx, "notify", []lanes.Item{{Group: "42", ID: id, Payload: p}})
//	store.Enqueue(ctx, "notify", items, lanes.Dedupe("{cm}:once:update-7", time.Hour))
//	store.Enqueue(ctx, "notify", []lanes.Item{it}, lanes.Coalesce("board-42", time.Minute))
//	store.Enqueue(ctx, "notify", items, lanes.Unless("{cm}:bc:9:stop"))
//
// Every item and option is checked first: Errors wrap ErrInvalid, with
// nothing written, for a bad queue; any bad item (an empty group or one over
// MaxGroupBytes, a malformed id, a payload over the store's limit); a bad
// option (see each); or options that do not combine. No items is a no-op
// (a zero result), except with Dedupe or Coalesce (ErrInvalid). Otherwise the
// error is the server's (wrapped): without Dedupe or Coalesce a call of
// more than 500 items may then have applied some chunks, counted in the
// result returned with the error; enqueueing the same items again is safe
// (existing ids are skipped).
func (s *Store) Enqueue(ctx context.Context, queue string, items []Item, opts ...EnqueueOption) (EnqueueResult, error) {
	var cfg enqueueConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	if err := s.validEnqueue(queue, items, cfg); err != nil {
		return EnqueueResult{}, err
	}
	var res EnqueueResult
	var err error
	switch {
	case cfg.coalesce:
		return s.enqueueCoalesce(ctx, queue, cfg, items[0])
	case cfg.dedupe, cfg.cursor != nil:
		res, err = s.enqueueDedupe(ctx, queue, cfg, items)
	default:
		res, err = s.enqueueChunks(ctx, queue, cfg, items)
	}
	if res.Moved < 0 { // enqueueDedupe's mark: the cursor moved on
		res.Moved = len(items)
		return res, fmt.Errorf("%w: %s field %s no longer %q", ErrCursorMoved, cfg.cursor.Key, cfg.cursor.Field, cfg.cursor.From)
	}
	if err == nil && res.Full > 0 {
		err = fmt.Errorf("%w: queue %q: %d of %d items refused (at most %d pending per lane)", ErrLaneFull, queue, res.Full, len(items), s.queueConfig(queue).MaxDepth)
	}
	return res, err
}

// validEnqueue checks queue, items and the options of one Enqueue call
// before anything is written.
func (s *core) validEnqueue(queue string, items []Item, cfg enqueueConfig) error {
	if cfg.unless {
		if err := s.validTagged("stop key", cfg.stop); err != nil {
			return err
		}
	}
	if cfg.dedupe {
		if err := s.validTagged("dedupe key", cfg.dedupeKey); err != nil {
			return err
		}
		if cfg.dedupeTTL < time.Millisecond {
			return fmt.Errorf("%w: dedupe ttl %v: want >= 1ms", ErrInvalid, cfg.dedupeTTL)
		}
		if len(items) == 0 || len(items) > MaxDedupeItems {
			return fmt.Errorf("%w: enqueue with dedupe: %d items: want 1..%d", ErrInvalid, len(items), MaxDedupeItems)
		}
	}
	if cfg.cursor != nil {
		if err := s.validCursor(cfg, len(items)); err != nil {
			return err
		}
	}
	if cfg.dead != nil {
		if err := s.validDeadTally(*cfg.dead); err != nil {
			return err
		}
	}
	if cfg.coalesce {
		if cfg.dedupe || cfg.unless || cfg.dead != nil {
			return fmt.Errorf("%w: enqueue: Coalesce combines with no other option", ErrInvalid)
		}
		if cfg.coalesceKey == "" || len(cfg.coalesceKey) > MaxCoalesceKeyBytes {
			return fmt.Errorf("%w: coalesce name of %d bytes: want 1..%d", ErrInvalid, len(cfg.coalesceKey), MaxCoalesceKeyBytes)
		}
		if cfg.coalesceTTL < time.Millisecond {
			return fmt.Errorf("%w: coalesce ttl %v: want >= 1ms", ErrInvalid, cfg.coalesceTTL)
		}
		if len(items) != 1 {
			return fmt.Errorf("%w: enqueue with coalesce: %d items: want 1", ErrInvalid, len(items))
		}
	}
	return s.validItems(queue, items)
}

// enqueueChunks runs enqueue.lua once per chunk of batchChunk items, all
// chunks pipelined, each checking the stop key when there is one.
func (s *Store) enqueueChunks(ctx context.Context, queue string, cfg enqueueConfig, items []Item) (EnqueueResult, error) {
	if len(items) == 0 {
		return EnqueueResult{}, nil
	}
	var calls []valkeyExec
	var sizes []int
	for start := 0; start < len(items); start += batchChunk {
		end := min(start+batchChunk, len(items))
		sizes = append(sizes, end-start)
		calls = append(calls, s.enqueueCall(queue, cfg, items[start:end]))
	}
	var res EnqueueResult
	for i, r := range s.execMulti(ctx, s.scripts.enqueue, calls) {
		v, err := r.AsIntSlice()
		if err != nil || len(v) != 3 {
			return res, fmt.Errorf("lanes: enqueue chunk %d of %d: %w", i+1, len(calls), errors.Join(err, errMalformed(len(v))))
		}
		if v[0] == -2 {
			res.Refused += sizes[i]
			continue
		}
		res.Added += int(v[0])
		res.Duplicates += int(v[1])
		res.Full += int(v[2])
	}
	return res, nil
}

// errMalformed is nil for an enqueue reply of three integers.
func errMalformed(n int) error {
	if n == 3 {
		return nil
	}
	return fmt.Errorf("malformed reply (%d integers)", n)
}

// validTagged checks that key is a full key name under the store's hash
// tag (so it shares the scripts' cluster slot).
func (s *core) validTagged(what, key string) error {
	// "{" + tag + "}:" + a name, read in place: the prefix is built only for
	// the error (this runs for every key of every settle tally).
	tag := s.keys.tag
	n := len(tag) + 3
	if len(key) <= n || key[0] != '{' || key[1:1+len(tag)] != tag || key[1+len(tag)] != '}' || key[2+len(tag)] != ':' {
		return fmt.Errorf("%w: %s %q: want %q + a name", ErrInvalid, what, key, "{"+tag+"}:")
	}
	return nil
}

// validCursor checks an AtCursor option of a call of n items.
func (s *core) validCursor(cfg enqueueConfig, n int) error {
	c := cfg.cursor
	if cfg.dedupe || cfg.coalesce {
		return fmt.Errorf("%w: enqueue: AtCursor combines only with Unless", ErrInvalid)
	}
	if err := s.validTagged("cursor key", c.Key); err != nil {
		return err
	}
	if c.Track != "" {
		if err := s.validTagged("track key", c.Track); err != nil {
			return err
		}
	}
	if c.Field == "" || c.To == c.From {
		return fmt.Errorf("%w: cursor field %q from %q to %q: want a field and a new value", ErrInvalid, c.Field, c.From, c.To)
	}
	if n > MaxCursorItems {
		return fmt.Errorf("%w: enqueue at a cursor: %d items: want 0..%d", ErrInvalid, n, MaxCursorItems)
	}
	return nil
}

// enqueueDedupe is one atomic enqueue.lua call with the dedupe key or the
// cursor (and the stop key, when given).
func (s *Store) enqueueDedupe(ctx context.Context, queue string, cfg enqueueConfig, items []Item) (EnqueueResult, error) {
	c := s.enqueueCall(queue, cfg, items)
	v, err := s.scripts.enqueue.Exec(ctx, s.c, c.keys, c.args).ToArray()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with dedupe: %w", err)
	}
	if len(v) != 3 {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with dedupe: malformed reply")
	}
	code, err := v[0].AsInt64()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with dedupe: malformed reply: %w", err)
	}
	switch code {
	case -4:
		return EnqueueResult{Moved: -1}, nil
	case -2:
		return EnqueueResult{Refused: len(items)}, nil
	case -3:
		return EnqueueResult{Full: len(items)}, nil
	case -1:
		stored, err := v[1].ToString()
		if err != nil {
			return EnqueueResult{}, fmt.Errorf("lanes: enqueue with dedupe: malformed reply: %w", err)
		}
		res := EnqueueResult{Deduped: len(items)}
		for _, id := range strings.Split(stored, ",") {
			res.IDs = append(res.IDs, JobID(id))
		}
		return res, nil
	}
	dups, err := v[1].AsInt64()
	if err != nil {
		return EnqueueResult{}, fmt.Errorf("lanes: enqueue with dedupe: malformed reply: %w", err)
	}
	res := EnqueueResult{Added: int(code), Duplicates: int(dups)}
	if full, err := v[2].AsInt64(); err == nil {
		res.Full = int(full)
	}
	if cfg.dedupe {
		res.IDs = make([]JobID, len(items))
		for i, it := range items {
			res.IDs[i] = it.ID
		}
	}
	return res, nil
}

// enqueueCall is one enqueue.lua call for items (at most batchChunk), with
// the dedupe and stop keys of cfg (KEYS[2], KEYS[3] in that order, each
// only when set; ARGV[7] is the dedupe ttl, "0" without one; ARGV[8] the
// queue's MaxDepth, "0" for none; ARGV[9] the CountDead tally as stored,
// "" for none), then the cursor's keys and ARGV[10..] (see enqueue.lua).
func (s *core) enqueueCall(queue string, cfg enqueueConfig, items []Item) valkeyExec {
	keys, args := s.header(queue, 1+3*len(items))
	var ttl time.Duration
	if cfg.dedupe {
		keys = append(keys, cfg.dedupeKey)
		ttl = cfg.dedupeTTL
	}
	if cfg.unless {
		keys = append(keys, cfg.stop)
	}
	dead := ""
	if cfg.dead != nil {
		dead = cfg.dead.encode()
	}
	args = append(args, ms(ttl), strconv.Itoa(s.queueConfig(queue).MaxDepth), dead)
	if c := cfg.cursor; c != nil {
		keys = append(keys, c.Key)
		tracked := "0"
		if c.Track != "" {
			keys, tracked = append(keys, c.Track), "1"
		}
		args = append(args, "1", c.Field, c.From, c.To, c.Count, tracked, strconv.Itoa(len(c.Incr)))
		for f, n := range c.Incr {
			args = append(args, f, strconv.FormatInt(n, 10))
		}
	} else {
		args = append(args, "0")
	}
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
