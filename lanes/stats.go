package lanes

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"
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

// Stats is a consistent snapshot of one queue.
type Stats struct {
	Ring     int // lanes in the ring
	Pending  int // jobs waiting on lanes
	InFlight int // jobs under a lease
	Delayed  int // jobs waiting for a retry time (unordered queues)
	Dead     int // dead letters
	Parked   int // parked lanes
	// Top are the deepest lanes, deepest first.
	Top []LaneStats
}

// Stats returns a snapshot of queue with its top deepest lanes (top 0..1000).
func (s *Store) Stats(ctx context.Context, queue string, top int) (Stats, error) {
	if err := validQueue(queue); err != nil {
		return Stats{}, err
	}
	if top < 0 || top > 1000 {
		return Stats{}, fmt.Errorf("%w: stats: top %d: want 0..1000", ErrInvalid, top)
	}
	keys, args := s.header(queue, 1)
	args = append(args, strconv.Itoa(top))
	arr, err := s.scripts.stats.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return Stats{}, fmt.Errorf("lanes: stats: %w", err)
	}
	if len(arr) < 6 || (len(arr)-6)%6 != 0 {
		return Stats{}, fmt.Errorf("lanes: stats: malformed reply")
	}
	n := func(i int) int { v, _ := arr[i].AsInt64(); return int(v) }
	st := Stats{Ring: n(0), Pending: n(1), InFlight: n(2), Delayed: n(3), Dead: n(4), Parked: n(5)}
	for i := 6; i < len(arr); i += 6 {
		g, _ := arr[i].ToString()
		ls := LaneStats{Group: g, Depth: n(i + 1), Weight: n(i + 2), InFlight: n(i + 3), Limit: n(i + 4)}
		if p, _ := arr[i+5].ToString(); p != "" {
			f, err := strconv.ParseFloat(p, 64)
			if err == nil && math.IsInf(f, 1) {
				ls.Indefinite = true
			} else if err == nil {
				ls.ParkedUntil = time.UnixMilli(int64(f))
			}
		}
		st.Top = append(st.Top, ls)
	}
	return st, nil
}
