package lanes

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// LaneStats describes one lane.
type LaneStats struct {
	Group    string
	Depth    int // pending jobs
	Weight   int
	InFlight int
	Limit    int // glimit
	// ParkedUntil is the end of a park (server clock); zero when not
	// parked; Indefinite when parked until resumed.
	ParkedUntil time.Time
	Indefinite  bool
}

// Stats is a snapshot of one queue.
type Stats struct {
	Ring     int // lanes in the ring (lanes parked while in it count until a claim drops them)
	Pending  int // jobs waiting on lanes
	InFlight int // jobs under a lease
	Delayed  int // jobs waiting for a retry time (unordered queues)
	Dead     int // dead letters
	Parked   int // parked lanes
	// Recovered counts the jobs whose lease expired and were taken back
	// (their claimer died or stalled), since the queue's first: a counter
	// kept in Valkey ({T}:q:Q:recovered), never reset.
	Recovered int64
	// Top are the deepest lanes, deepest first (ties by group).
	Top []LaneStats
}

// statsChunk is how many lanes one stats script call describes.
const statsChunk = 1000

// Stats returns queue's totals (one atomic snapshot) and, for top > 0 (at
// most 1000), its deepest lanes. There is no depth index (it would cost
// every claim O(log lanes)), so finding the deepest lanes reads every lane
// that has work: the ring, the parked set and the lanes in flight, in chunks
// of 1,000 lanes per script call. That is O(lanes) and meant for admin
// commands and dashboards, not hot paths; top 0 costs O(1). Lanes are read
// chunk by chunk, so under load the top list is approximate (each lane's
// row is itself consistent).
func (in *Inspector) Stats(ctx context.Context, queue string, top int) (Stats, error) {
	if err := validQueue(queue); err != nil {
		return Stats{}, err
	}
	if top < 0 || top > 1000 {
		return Stats{}, fmt.Errorf("%w: stats: top %d: want 0..1000", ErrInvalid, top)
	}
	st, _, err := in.StatsScan(ctx, queue, top, 0)
	return st, err
}

// StatsScan is Stats reading at most scan lanes (scan 0: every lane) to
// find the deepest: the lanes of the ring first (in serving order), then
// the parked ones, then those with jobs in flight. It returns whether it
// read every lane with work (complete), so a caller shows the top list as
// "the deepest of the first scan lanes" otherwise. It costs O(scan), not
// O(lanes): for a page or a command that must stay cheap on a queue of a
// million lanes. Errors: ErrInvalid for a bad queue, top outside 0..1000 or
// scan < 0; the server's.
func (in *Inspector) StatsScan(ctx context.Context, queue string, top, scan int) (st Stats, complete bool, err error) {
	if err := validQueue(queue); err != nil {
		return Stats{}, false, err
	}
	if top < 0 || top > 1000 {
		return Stats{}, false, fmt.Errorf("%w: stats: top %d: want 0..1000", ErrInvalid, top)
	}
	if scan < 0 {
		return Stats{}, false, fmt.Errorf("%w: stats: scan %d: want >= 0", ErrInvalid, scan)
	}
	st, _, err = in.describe(ctx, queue, nil)
	if err != nil || top == 0 {
		return st, true, err
	}
	groups, complete, err := in.laneNames(ctx, queue, scan)
	if err != nil {
		return Stats{}, false, err
	}
	var rows []LaneStats
	for start := 0; start < len(groups); start += statsChunk {
		_, chunk, err := in.describe(ctx, queue, groups[start:min(start+statsChunk, len(groups))])
		if err != nil {
			return Stats{}, false, err
		}
		for _, r := range chunk {
			if r.Depth > 0 {
				rows = append(rows, r)
			}
		}
	}
	sort.Slice(rows, func(i, j int) bool {
		if rows[i].Depth != rows[j].Depth {
			return rows[i].Depth > rows[j].Depth
		}
		return rows[i].Group < rows[j].Group
	})
	st.Top = rows[:min(top, len(rows))]
	return st, complete, nil
}

// laneNames returns the lanes that may have pending jobs, once each: those
// in the ring, parked, or with jobs in flight (a lane with work is always in
// one of these), at most limit of them (0: all); complete is false when it
// stopped at limit with lanes left unread.
func (s *core) laneNames(ctx context.Context, queue string, limit int) ([]string, bool, error) {
	if limit == 0 {
		out, _, err := s.collectLanes(ctx, queue, 0)
		return out, err == nil, err
	}
	// One more than the limit: whether any lane is left unread.
	out, _, err := s.collectLanes(ctx, queue, limit+1)
	if err != nil || len(out) <= limit {
		return out, err == nil, err
	}
	return out[:limit], false, nil
}

// collectLanes is laneNames reading up to limit lanes (0: all).
func (s *core) collectLanes(ctx context.Context, queue string, limit int) (out []string, complete bool, err error) {
	seen := map[string]bool{}
	full := func() bool { return limit > 0 && len(out) >= limit }
	add := func(gs []string) {
		for _, g := range gs {
			if full() {
				return
			}
			if !seen[g] {
				seen[g] = true
				out = append(out, g)
			}
		}
	}
	// chunk is how many names to ask for next: statsChunk, or what is left
	// to the limit.
	chunk := func() int64 {
		if limit > 0 {
			return int64(min(statsChunk, limit-len(out)))
		}
		return statsChunk
	}
	// byIndex adds the names of a list or sorted set read by index range
	// (what names it in errors), chunk by chunk: false when it stopped
	// full.
	byIndex := func(what string, read func(start, stop int64) valkey.Completed) (bool, error) {
		for start := int64(0); ; {
			if full() {
				return false, nil
			}
			n := chunk()
			gs, err := s.c.Do(ctx, read(start, start+n-1)).AsStrSlice()
			if err != nil {
				return false, fmt.Errorf("lanes: stats: %s: %w", what, err)
			}
			add(gs)
			if int64(len(gs)) < n {
				return true, nil
			}
			start += n
		}
	}
	ring, parked := s.keys.ring(queue), s.keys.queueKey(queue, "parked")
	for _, src := range []struct {
		what string
		read func(start, stop int64) valkey.Completed
	}{
		{"ring", func(start, stop int64) valkey.Completed {
			return s.c.B().Lrange().Key(ring).Start(start).Stop(stop).Build()
		}},
		{"parked", func(start, stop int64) valkey.Completed {
			return s.c.B().Zrange().Key(parked).Min(strconv.FormatInt(start, 10)).Max(strconv.FormatInt(stop, 10)).Build()
		}},
	} {
		whole, err := byIndex(src.what, src.read)
		if err != nil {
			return nil, false, err
		}
		if !whole {
			return out, false, nil
		}
	}
	inflight := s.keys.queueKey(queue, "inflight")
	var cursor uint64
	for {
		if full() {
			return out, false, nil
		}
		e, err := s.c.Do(ctx, s.c.B().Hscan().Key(inflight).Cursor(cursor).Count(chunk()).Build()).AsScanEntry()
		if err != nil {
			return nil, false, fmt.Errorf("lanes: stats: in flight: %w", err)
		}
		for i := 0; i+1 < len(e.Elements); i += 2 {
			add(e.Elements[i : i+1])
		}
		if cursor = e.Cursor; cursor == 0 {
			break
		}
	}
	return out, true, nil
}

// Lanes describes the lanes groups of queue (depth, weight, in flight,
// limit, park), one row each in the order given, from one snapshot: O(len
// groups), for a page showing given chats. Errors: ErrInvalid for a bad
// queue or group; the server's.
func (in *Inspector) Lanes(ctx context.Context, queue string, groups ...string) ([]LaneStats, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := validGroup(g); err != nil {
			return nil, err
		}
	}
	_, rows, err := in.describe(ctx, queue, groups)
	return rows, err
}

// describe runs the stats script: the queue's totals and a row per group.
func (s *core) describe(ctx context.Context, queue string, groups []string) (Stats, []LaneStats, error) {
	keys, args := s.header(queue, len(groups))
	args = append(args, groups...)
	arr, err := s.scripts.stats.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return Stats{}, nil, fmt.Errorf("lanes: stats: %w", err)
	}
	const totals = 7
	if len(arr) != totals+6*len(groups) {
		return Stats{}, nil, fmt.Errorf("lanes: stats: malformed reply")
	}
	n := func(m valkey.ValkeyMessage) int { v, _ := m.AsInt64(); return int(v) }
	st := Stats{Ring: n(arr[0]), Pending: n(arr[1]), InFlight: n(arr[2]), Delayed: n(arr[3]), Dead: n(arr[4]), Parked: n(arr[5])}
	st.Recovered, _ = arr[6].AsInt64()
	rows := make([]LaneStats, 0, len(groups))
	for i := totals; i < len(arr); i += 6 {
		g, _ := arr[i].ToString()
		ls := LaneStats{Group: g, Depth: n(arr[i+1]), Weight: n(arr[i+2]), InFlight: n(arr[i+3]), Limit: n(arr[i+4])}
		if p, _ := arr[i+5].ToString(); p != "" {
			f, err := strconv.ParseFloat(p, 64)
			if err == nil && math.IsInf(f, 1) {
				ls.Indefinite = true
			} else if err == nil {
				ls.ParkedUntil = time.UnixMilli(int64(f))
			}
		}
		rows = append(rows, ls)
	}
	return st, rows, nil
}

// Budget is how much of a send budget is in use now (BudgetUse).
type Budget struct {
	// Used counts the sends the budget holds now: in flight, or settled
	// within the last Window (the sliding window a claim checks).
	Used int
	// Limit is the budget: at most Limit sends per Window (0: none), the
	// configured rate (a ceiling: see LearnConfig).
	Limit  int
	Window time.Duration
	// Rate is what claims use now: the budget's learned rate
	// (Inspector.Learned), at most Limit. Used ÷ Rate is how full the
	// budget is for the claims (1: they wait for it).
	Rate int
}

// BudgetUse reports queue's send budget, shared by every claimer: the
// queue's own (QueueConfig.Rate) when it has one, else the store's global
// rate (WithGlobalRate) unless the queue is OutsideGlobal, else a zero
// Budget; queue "" is the store's global rate itself. Used ÷ Rate is how full the budget is for the claims (1:
// they wait for it). Three round trips (the server's TIME, a ZCOUNT, the
// learned rates); errors: ErrInvalid for a bad queue name, the server's.
func (in *Inspector) BudgetUse(ctx context.Context, queue string) (Budget, error) {
	if queue != "" {
		if err := validQueue(queue); err != nil {
			return Budget{}, err
		}
	}
	key, b, own := in.keys.rate(), Budget{Limit: in.opt.rate, Window: in.opt.window}, ""
	qc := in.opt.queues[queue]
	switch {
	case queue != "" && qc.Rate > 0:
		key, b, own = in.keys.queueKey(queue, "rate"), Budget{Limit: qc.Rate, Window: qc.Window}, queue
	case qc.OutsideGlobal:
		return Budget{}, nil // held by no budget
	}
	if b.Limit <= 0 {
		return Budget{}, nil
	}
	t, err := in.c.Do(ctx, in.c.B().Time().Build()).AsStrSlice()
	if err != nil || len(t) != 2 {
		return Budget{}, fmt.Errorf("lanes: budget use: time: %w", errors.Join(err, errTimeReply(len(t))))
	}
	sec, err1 := strconv.ParseInt(t[0], 10, 64)
	usec, err2 := strconv.ParseInt(t[1], 10, 64)
	if err1 != nil || err2 != nil {
		return Budget{}, fmt.Errorf("lanes: budget use: time %q: %w", t, errors.Join(err1, err2))
	}
	from := sec*1000 + usec/1000 - b.Window.Milliseconds()
	n, err := in.c.Do(ctx, in.c.B().Zcount().Key(key).Min("("+strconv.FormatInt(from, 10)).Max("+inf").Build()).AsInt64()
	if err != nil {
		return Budget{}, fmt.Errorf("lanes: budget use: %w", err)
	}
	b.Used = int(n)
	ls, err := in.Learned(ctx)
	if err != nil {
		return Budget{}, fmt.Errorf("lanes: budget use: %w", err)
	}
	b.Rate = b.Limit
	for _, l := range ls {
		if l.Queue == own {
			b.Rate = l.Rate
		}
	}
	return b, nil
}

// errTimeReply is nil for a TIME reply of 2 fields, else an error saying so.
func errTimeReply(n int) error {
	if n == 2 {
		return nil
	}
	return fmt.Errorf("TIME answered %d fields, want 2", n)
}
