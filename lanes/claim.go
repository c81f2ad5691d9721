package lanes

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/valkey-io/valkey-go"
)

// ClaimRequest asks for jobs.
type ClaimRequest struct {
	// Queues are tried in order: a later queue is served only when no lane
	// of an earlier one could be (strict priority; e.g. replies before
	// broadcasts), except that a later queue with a QueueConfig.MinShare
	// and ready lanes keeps that share of the global budget. 1..8 queues.
	Queues []string
	// Lease is how long the claimer holds each job (server clock) before it
	// may be reclaimed; >= 1ms.
	Lease time.Duration
	// Max is the most jobs to hand out per lane served (the caller's batch
	// cap), 1..1000: a lane gets K = min(weight, depth, glimit headroom,
	// Max, global budget, lane pace budget).
	Max int
	// Lanes is the most lanes one call serves, 0..MaxClaim (0 and 1: one,
	// the lane the ring's rotation reaches first). With more, the call
	// rotates the same queue's ring on after a served lane and serves the
	// next, each lane exactly as a call of its own would (one rotation per
	// lane visited, its K under the budgets the lanes before it left),
	// until Lanes lanes are served, a budget is spent, no servable lane is
	// found within the visit budget, or a lane keeps the rest of its turn
	// (it stays at the ring's head for the next call). One queue per call:
	// a later queue is served only by a call that served no lane of an
	// earlier one. So a claimer with many free senders gets a batch per
	// lane in one round trip (a broadcast's lanes hold one copy each).
	Lanes int
	// Ack, when not empty, acks these leases of delivered jobs in the same
	// atomic call, before claiming (each exactly as Store.Ack): a claimer
	// that finished its jobs settles them and gets its next batch in one
	// round trip. Each lease's Queue must be one of Queues; at most
	// MaxClaim leases. When Claim returns an error, the acks may or may not
	// have been applied: settle them again (Ack), which answers ErrNoJob
	// for one already acked.
	Ack []Lease
	// Claimer, when not "", names the process claiming (at most
	// MaxClaimerBytes of [A-Za-z0-9._:/-]): each job claimed records it,
	// so that once the claimer's heartbeat stops (Store.Heartbeat) its
	// leases are recovered within a few seconds (Store.RecoverDead) instead
	// of when they expire.
	Claimer string
}

// Lease is a claimer's hold on one job. Token fences it: once the lease has
// expired and the job was reclaimed, the token no longer matches and every
// call with it returns ErrStaleLease.
type Lease struct {
	Queue string
	ID    JobID
	Token string
	// Deadline is the lease's end on the server clock (ms precision).
	Deadline time.Time
	// Floor is the claimer's round-trip floor for the send made under this
	// lease: the shortest time (whole ms; 0..MaxFloor) it recently saw
	// between writing a request to the receiver and reading its answer.
	// The claimer sets it before settling a lease whose send was answered
	// (Ack, Release, Nack, Dead, ClaimRequest.Ack); Claim hands out 0. A
	// settled send then counts against its budgets (global rate, the
	// queue's own, the lane's pace) until max(claim, settle - Floor) +
	// window, its latest possible arrival plus one window, instead of
	// settle + window; so with a steady round trip a send holds its budget
	// for about one window, not one window plus the round trip. Safe when
	// each leg of a round trip (request out, answer back) takes at least
	// half the floor; see "Delivery control" in the package doc. Claimers
	// at different distances from the receiver should pass the smallest
	// floor of all of them (Store.ShareFloor). 0 (no answer, nothing
	// known) counts from the settle, with no assumption.
	Floor time.Duration
}

// MaxFloor is the highest Lease.Floor.
const MaxFloor = time.Minute

// Job is a claimed job.
type Job struct {
	Lease
	Group   string
	Payload []byte
	// Attempts is how many failed attempts (Nack or expired lease) it had
	// (a dead letter's also counts Dead's, see DeadLetter).
	Attempts int
}

// Claimed is what a claim handed out.
type Claimed struct {
	// Jobs are the heads of the lanes served (one lane unless
	// ClaimRequest.Lanes > 1), all of one queue: each lane's jobs together
	// and in mint order, lanes in the order served (empty when nothing was
	// claimable). A lane's jobs are one batch: Batches splits them.
	Jobs []Job
	// RetryIn, when Jobs is empty, is how long until something may become
	// claimable by time alone (a lease expiring, a parked lane or retry
	// falling due, the global budget refilling, a pause ending); 0 means try
	// again at once, and -1 means nothing is scheduled: wait for a wake-up
	// (see Waiter).
	RetryIn time.Duration
	// Acked has one entry per ClaimRequest.Ack, in order: nil when the job
	// was acked, else the error Store.Ack would return (ErrStaleLease,
	// ErrNoJob).
	Acked []error
}

// Claim runs wclaim, the weighted rotation, as one atomic script: it rotates
// a queue's ring once (LMOVE ring ring LEFT RIGHT) and serves that lane K
// heads (ZPOPMIN), each under a lease whose deadline is the server's TIME
// plus req.Lease. Lanes that cannot be served are dropped from the ring's
// tail in O(1) and the next is tried, at most a bounded number per call. The
// same call first reclaims expired leases (jobs back on their lanes at their
// place), and promotes due retries and due parked lanes, also bounded. Cost
// per call: O(K log n), independent of the number of lanes; the
// maintenance scans run only for a queue whose earliest lease deadline,
// retry or park end has passed (its due time, read with the pause in one
// command). With req.Ack the call first acks those leases (see
// ClaimRequest.Ack), O(log n) each. Errors: ErrInvalid for a bad request;
// the server's error.
func (s *Store) Claim(ctx context.Context, req ClaimRequest) (Claimed, error) {
	if err := checkClaim(req); err != nil {
		return Claimed{}, err
	}
	pause := s.keys.pause()
	if s.opt.unpaced {
		// A key nobody writes, in the same slot: never paused.
		pause = s.keys.shared() + "nopause"
	}
	keys := []string{s.keys.rate(), pause}
	for _, q := range req.Queues {
		if err := validQueue(q); err != nil {
			return Claimed{}, err
		}
		keys = append(keys, s.keys.ring(q))
	}
	o := s.opt
	lc := o.learn.withDefaults()
	paceLimit := strconv.Itoa(o.pace.Limit)
	if o.unpaced {
		paceLimit = "-1" // claim.lua: no pace at all, not even a lane's override
	}
	// claim.lua's ARGV[2]: thirteen numbers in one argument.
	args := []string{
		s.keys.shared(),
		strings.Join([]string{
			ms(req.Lease),
			strconv.Itoa(req.Max),
			strconv.Itoa(o.rate),
			ms(o.window),
			strconv.Itoa(o.maintenance),
			strconv.Itoa(o.visits),
			paceLimit,
			ms(o.pace.Period),
			strconv.Itoa(len(o.paceRules)),
			strconv.Itoa(max(req.Lanes, 1)),
			strconv.Itoa(o.rateStart),
			ms(lc.Probe),
			ms(lc.Epoch),
		}, " "),
	}
	for _, r := range o.paceRules {
		args = append(args, r.Prefix, strconv.Itoa(r.Pace.Limit), ms(r.Pace.Period))
	}
	args = append(args, strconv.Itoa(len(req.Queues)))
	for _, q := range req.Queues {
		args = append(args, s.queueArgs(q)...)
		// The queue's own budget (claim.lua only): rate and window (ms),
		// then its minimum share of the global budget (percent), then
		// whether it is outside the global budget.
		qc := s.opt.queues[q]
		outside := "0"
		if qc.OutsideGlobal {
			outside = "1"
		}
		args = append(args, strconv.Itoa(qc.Rate), ms(qc.Window), strconv.Itoa(qc.MinShare), outside)
	}
	if len(req.Ack) > MaxClaim {
		return Claimed{}, fmt.Errorf("%w: claim: %d acks: want at most %d", ErrInvalid, len(req.Ack), MaxClaim)
	}
	args = append(args, strconv.Itoa(len(req.Ack)))
	for _, l := range req.Ack {
		if err := s.checkLease(l); err != nil {
			return Claimed{}, err
		}
		qi := slices.Index(req.Queues, l.Queue)
		if qi < 0 {
			return Claimed{}, fmt.Errorf("%w: claim: ack of %s: queue %q is not claimed", ErrInvalid, l.ID, l.Queue)
		}
		args = append(args, strconv.Itoa(qi+1), string(l.ID), l.Token, ms(l.Floor))
	}
	args = append(args, req.Claimer)
	arr, err := s.scripts.claim.Exec(ctx, s.c, keys, args).ToArray()
	if err != nil {
		return Claimed{}, fmt.Errorf("lanes: claim: %w", err)
	}
	if len(arr) < len(req.Ack) {
		return Claimed{}, fmt.Errorf("lanes: claim: malformed reply (acks)")
	}
	acks := arr[len(arr)-len(req.Ack):]
	c, err := parseClaim(req.Queues, arr[:len(arr)-len(req.Ack)])
	if err != nil {
		return Claimed{}, err
	}
	if len(req.Ack) > 0 {
		c.Acked = make([]error, len(req.Ack))
		for i, a := range acks {
			code, err := a.AsInt64()
			if err != nil {
				return Claimed{}, fmt.Errorf("lanes: claim: malformed reply (ack %d)", i)
			}
			if code != 1 {
				c.Acked[i] = leaseErr("ack", req.Ack[i], code)
			}
		}
	}
	return c, nil
}

// checkClaim checks a claim's numbers and claimer (ErrInvalid).
func checkClaim(req ClaimRequest) error {
	if len(req.Queues) == 0 || len(req.Queues) > 8 {
		return fmt.Errorf("%w: claim: want 1..8 queues, got %d", ErrInvalid, len(req.Queues))
	}
	if req.Lease < time.Millisecond {
		return fmt.Errorf("%w: claim: lease %v: want >= 1ms", ErrInvalid, req.Lease)
	}
	if req.Max < 1 || req.Max > MaxClaim {
		return fmt.Errorf("%w: claim: max %d: want 1..%d", ErrInvalid, req.Max, MaxClaim)
	}
	if req.Lanes < 0 || req.Lanes > MaxClaim {
		return fmt.Errorf("%w: claim: lanes %d: want 0..%d", ErrInvalid, req.Lanes, MaxClaim)
	}
	if req.Claimer != "" && !validClaimer(req.Claimer) {
		return fmt.Errorf("%w: claim: claimer %q: want 1..%d of [A-Za-z0-9._:/-]", ErrInvalid, req.Claimer, MaxClaimerBytes)
	}
	return nil
}

func parseClaim(queues []string, arr []valkey.ValkeyMessage) (Claimed, error) {
	bad := func(what string) (Claimed, error) {
		return Claimed{}, fmt.Errorf("lanes: claim: malformed reply (%s)", what)
	}
	if len(arr) < 2 {
		return bad("short")
	}
	status, err := arr[0].AsInt64()
	if err != nil {
		return bad("status")
	}
	if status == 0 {
		hint, err := arr[1].AsInt64()
		if err != nil {
			return bad("hint")
		}
		if hint < 0 {
			return Claimed{RetryIn: -1}, nil
		}
		return Claimed{RetryIn: time.Duration(hint) * time.Millisecond}, nil
	}
	if len(arr) < 4 {
		return bad("short claim")
	}
	qi, err1 := arr[1].AsInt64()
	deadline, err2 := arr[2].AsInt64()
	nl, err3 := arr[3].AsInt64()
	if err1 != nil || err2 != nil || err3 != nil || qi < 1 || int(qi) > len(queues) || nl < 0 {
		return bad("header")
	}
	dl := time.UnixMilli(deadline)
	jobs := make([]Job, 0, len(arr)/4)
	at := 4
	for range nl {
		if at+2 > len(arr) {
			return bad("lane")
		}
		group, e1 := arr[at].ToString()
		n, e2 := arr[at+1].AsInt64()
		at += 2
		if e1 != nil || e2 != nil || n < 0 || at+4*int(n) > len(arr) {
			return bad("lane")
		}
		for range n {
			j, ok := parseJob(arr[at:at+4], queues[qi-1], group, dl)
			if !ok {
				return bad("job")
			}
			jobs = append(jobs, j)
			at += 4
		}
	}
	if at != len(arr) {
		return bad("trailing")
	}
	return Claimed{Jobs: jobs}, nil
}

// parseJob reads one job of a claim's reply (id, token, attempts,
// payload); ok is false for a malformed one.
func parseJob(f []valkey.ValkeyMessage, queue, group string, dl time.Time) (Job, bool) {
	id, e1 := f[0].ToString()
	tok, e2 := f[1].AsInt64()
	att, e3 := f[2].AsInt64()
	payload, e4 := f[3].ToString()
	if e1 != nil || e2 != nil || e3 != nil || e4 != nil {
		return Job{}, false
	}
	return Job{
		Lease:    Lease{Queue: queue, ID: JobID(id), Token: strconv.FormatInt(tok, 10), Deadline: dl},
		Group:    group,
		Payload:  []byte(payload),
		Attempts: int(att),
	}, true
}

// Batches splits c.Jobs into one batch per lane served, in order: each a
// run of jobs of one group (two lanes served one after the other with the
// same group are one batch, still in mint order). The batches share
// c.Jobs' backing array.
func (c Claimed) Batches() [][]Job {
	var out [][]Job
	for i := 0; i < len(c.Jobs); {
		j := i + 1
		for j < len(c.Jobs) && c.Jobs[j].Group == c.Jobs[i].Group {
			j++
		}
		out = append(out, c.Jobs[i:j:j])
		i = j
	}
	return out
}

func ms(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
