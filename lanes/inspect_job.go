package lanes

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/valkey-io/valkey-go"
)

// JobState is where a job stands in its queue (JobView.State).
type JobState string

// The states of a job.
const (
	// JobPending: on its lane, waiting for a claim (retrying when its
	// Attempts > 0: an ordered queue's Nack puts it back at its lane's head
	// and parks the lane).
	JobPending JobState = "pending"
	// JobInFlight: claimed; its lease ends at LeaseUntil.
	JobInFlight JobState = "in flight"
	// JobRetrying: an unordered queue's Nack: waiting alone in the
	// queue's delayed set until Due.
	JobRetrying JobState = "retrying"
	// JobDead: in the dead-letter set since DeadAt.
	JobDead JobState = "dead"
	// JobMoving: its hash exists but no set holds it (read between two
	// steps of a script's caller, e.g. a dead letter being requeued):
	// read it again.
	JobMoving JobState = "moving"
)

// JobView is one job as Job and the listings read it. Job reads it with
// a few commands, not atomically: a job that moves meanwhile may read as
// JobMoving.
type JobView struct {
	ID    JobID
	Queue string
	// Group is its lane.
	Group   string
	Payload []byte
	// Attempts are its failed claims (Nack, an expired lease, Dead);
	// Claims its claims so far.
	Attempts, Claims int
	// Reason is its last failure's reason (the store keeps only the last).
	Reason string
	State  JobState
	// LeaseUntil (in flight), Due (retrying) and DeadAt (dead): server
	// clock; zero otherwise.
	LeaseUntil, Due, DeadAt time.Time
	// Position is its place in its lane while pending (0: next), -1
	// otherwise.
	Position int
	// Parked: its lane is parked (a 429, its pace, a retry's delay, or by
	// hand) until ParkedUntil (zero: until resumed).
	Parked      bool
	ParkedUntil time.Time
}

// Job reads job id of queue: its hash and where it stands. ok is false
// when the queue holds no such job (never did, or it was acked or
// purged). Errors: ErrInvalid for a bad queue or id; the server's.
func (in *Inspector) Job(ctx context.Context, queue string, id JobID) (v JobView, ok bool, err error) {
	if err := validQueueAndIDs(queue, []JobID{id}); err != nil {
		return JobView{}, false, err
	}
	vs, err := in.loadJobs(ctx, queue, []JobID{id})
	if err != nil || len(vs) == 0 {
		return JobView{}, false, err
	}
	v = vs[0]
	q := func(name string) string { return in.keys.queueKey(queue, name) }
	cmds := valkey.Commands{
		in.c.B().Zscore().Key(q("leases")).Member(string(id)).Build(),
		in.c.B().Zscore().Key(q("delayed")).Member(string(id)).Build(),
		in.c.B().Zscore().Key(q("dead")).Member(string(id)).Build(),
		in.c.B().Zrank().Key(in.keys.lane(queue, v.Group)).Member(string(id)).Build(),
		in.c.B().Zscore().Key(q("parked")).Member(v.Group).Build(),
	}
	res := in.c.DoMulti(ctx, cmds...)
	score := func(i int) (float64, bool, error) {
		var f float64
		var err error
		if i == 3 { // ZRANK: an integer
			var n int64
			n, err = res[i].AsInt64()
			f = float64(n)
		} else {
			f, err = res[i].AsFloat64()
		}
		if isNil(err) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("lanes: job %s: %w", id, err)
		}
		return f, true, nil
	}
	v.State, v.Position = JobMoving, -1
	for i, state := range []JobState{JobInFlight, JobRetrying, JobDead, JobPending} {
		f, found, err := score(i)
		if err != nil {
			return JobView{}, false, err
		}
		if !found {
			continue
		}
		switch v.State = state; state {
		case JobInFlight:
			v.LeaseUntil = time.UnixMilli(int64(f))
		case JobRetrying:
			v.Due = time.UnixMilli(int64(f))
		case JobDead:
			v.DeadAt = time.UnixMilli(int64(f))
		case JobPending:
			v.Position = int(f)
		}
		break
	}
	f, parked, err := score(4)
	if err != nil {
		return JobView{}, false, err
	}
	v.Parked = parked
	if parked && !math.IsInf(f, 1) {
		v.ParkedUntil = time.UnixMilli(int64(f))
	}
	return v, true, nil
}

// PendingJobs lists up to n pending jobs of lane group of queue in the
// order they will be sent, after job id after (exclusive; "" from the
// head): a page costs O(log n + n) however deep the lane, and the last
// id read is the next page's after. Their State is JobPending and
// Position -1 (not counted). Errors: ErrInvalid for a bad queue, group or
// after, or n < 1; the server's.
func (in *Inspector) PendingJobs(ctx context.Context, queue, group string, after JobID, n int) ([]JobView, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	if err := validGroup(group); err != nil {
		return nil, err
	}
	if n < 1 {
		return nil, fmt.Errorf("%w: pending jobs: n %d: want >= 1", ErrInvalid, n)
	}
	from := "-"
	if after != "" {
		if err := after.Validate(); err != nil {
			return nil, err
		}
		from = "(" + string(after)
	}
	// Every member scores 0: by lex is by id, the lane's order.
	ids, err := in.c.Do(ctx, in.c.B().Zrange().Key(in.keys.lane(queue, group)).Min(from).Max("+").Bylex().
		Limit(0, int64(n)).Build()).AsStrSlice()
	if err != nil {
		return nil, fmt.Errorf("lanes: pending jobs: %w", err)
	}
	out, err := in.loadJobs(ctx, queue, toJobIDs(ids))
	for i := range out {
		out[i].State, out[i].Position = JobPending, -1
	}
	return out, err
}

// RetryingJobs lists up to n of queue's jobs waiting to be retried in
// its delayed set (an unordered queue's Nack), soonest due first, after
// the skip soonest: O(log n + n). Errors: ErrInvalid for a bad queue, n <
// 1 or skip < 0; the server's.
func (in *Inspector) RetryingJobs(ctx context.Context, queue string, skip, n int) ([]JobView, error) {
	if err := validQueue(queue); err != nil {
		return nil, err
	}
	if n < 1 || skip < 0 {
		return nil, fmt.Errorf("%w: retrying jobs: skip %d, n %d: want skip >= 0 and n >= 1", ErrInvalid, skip, n)
	}
	zs, err := in.c.Do(ctx, in.c.B().Zrange().Key(in.keys.queueKey(queue, "delayed")).Min(strconv.Itoa(skip)).
		Max(strconv.Itoa(skip+n-1)).Withscores().Build()).AsZScores()
	if err != nil {
		return nil, fmt.Errorf("lanes: retrying jobs: %w", err)
	}
	ids := make([]string, len(zs))
	due := make(map[JobID]time.Time, len(zs))
	for i, z := range zs {
		ids[i] = z.Member
		due[JobID(z.Member)] = time.UnixMilli(int64(z.Score))
	}
	out, err := in.loadJobs(ctx, queue, toJobIDs(ids))
	for i := range out {
		out[i].State, out[i].Position, out[i].Due = JobRetrying, -1, due[out[i].ID]
	}
	return out, err
}

func toJobIDs(ids []string) []JobID {
	out := make([]JobID, len(ids))
	for i, id := range ids {
		out[i] = JobID(id)
	}
	return out
}

// loadJobs reads the hashes of jobs ids of queue in one round trip, in
// the order given; a job gone meanwhile is left out. State is left empty.
func (s *core) loadJobs(ctx context.Context, queue string, ids []JobID) ([]JobView, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	cmds := make(valkey.Commands, 0, len(ids))
	for _, id := range ids {
		cmds = append(cmds, s.c.B().Hmget().Key(s.keys.job(queue, id)).Field("g", "p", "a", "c", "r").Build())
	}
	out := make([]JobView, 0, len(ids))
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		v, err := r.ToArray()
		if err != nil {
			return out, fmt.Errorf("lanes: jobs: %w", err)
		}
		if v[0].IsNil() {
			continue
		}
		str := func(j int) string { s, _ := v[j].ToString(); return s }
		att, _ := strconv.Atoi(str(2))
		claims, _ := strconv.Atoi(str(3))
		out = append(out, JobView{ID: ids[i], Queue: queue, Group: str(0), Payload: []byte(str(1)),
			Attempts: att, Claims: claims, Reason: str(4), Position: -1})
	}
	return out, nil
}
