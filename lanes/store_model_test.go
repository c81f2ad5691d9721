package lanes_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/valkey-io/valkey-go"

	"github.com/codemojex/codemojex/lanes"
)

// Model-based test: seeded random sequences of enqueue (to 10 lanes, with
// duplicate ids now and then), coalescing enqueues (Enqueue with Coalesce under 3
// names: the pending job of a name gets the new payload in place, else a
// fresh job is enqueued), claim (Max 1..4), ack (a third of them in the
// same call as a claim, now and then with a stale lease too; of the rest,
// half in one AckAll of up to 4 held leases, now and then with a lease
// twice and a stale one), nack (delay 0),
// release, lease expiry, weight changes, stale-token calls, dead-letter
// requeues and cancels (of waiting, in-flight, dead and acked ids: an
// in-flight one is dropped, counted in the cancel tally, when its lease
// ends without an ack, and acked as usual otherwise) run
// against the real server and against an in-memory model of
// the documented semantics. After every step the whole queue state is read
// in one atomic snapshot script and compared with the model:
//
//   - no job is lost or duplicated: every live id is in exactly one of a
//     lane, the lease set (in flight) or the dead set; acked ids are gone;
//   - in-flight per lane (HGETALL inflight) equals the leases grouped by the
//     job's lane (ZRANGE leases + HGET job g);
//   - the ring equals, in order, the model's ring, which holds every lane
//     with claimable work (pending > 0, headroom, nothing in flight for an
//     ordered queue), with no duplicates, and the inring set matches it; a
//     lane a cancel emptied keeps its place until a claim visits it and
//     drops it (the model's claim does the same), otherwise the ring holds
//     nothing else;
//   - each lane's pending ids (and so per-lane order) match the model, and
//     every claim hands out exactly the ids, tokens and attempts the model
//     predicts: a lane's heads in id order, reclaimed, nacked and released
//     jobs back at their place, and with the payload the model predicts
//     (the latest coalesced one for a job replaced while pending).
//
// Expiring a lease without sleeping: the test moves the lease's score in
// the leases sorted set into the past (ZADD XX <seq>, seq = 1, 2, 3... ms
// after the epoch, so the model also knows the reclaim order). That is the
// exact state a lease reaches when its deadline passes on the server clock;
// every other lease is an hour long and never expires during the run. The
// store's maintenance budget is raised so one claim reclaims every expired
// lease, which makes the model deterministic.
func TestStoreMatchesReferenceModel(t *testing.T) {
	t.Parallel()
	const steps = 3_500
	for _, ordered := range []bool{false, true} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("ordered=%v/seed=%d", ordered, seed), func(t *testing.T) {
				t.Parallel()
				runModel(t, ordered, seed, steps)
			})
		}
	}
}

const (
	modelLanes    = 10
	modelLimit    = 3 // queue LaneLimit
	modelAttempts = 4 // queue MaxAttempts
	modelVisits   = 64
)

type mJob struct {
	id    lanes.JobID
	g     string
	a, c  int
	p     string // payload
	state string // "pending", "inflight", "dead", "acked", "cancelled"
	exp   int    // expiry seq when its lease was moved to the past (0: live)
	// marked: a cancel named it in flight; its lease ending without an
	// ack drops it (state "cancelled", counted in the cancel's tally).
	marked bool
}

type model struct {
	ordered   bool
	jobs      map[lanes.JobID]*mJob
	lane      map[string][]lanes.JobID
	inflight  map[string]int
	ring      []string
	weight    map[string]int
	turn      map[string]int // jobs still owed in a turn cut short
	limit     map[string]int
	dead      map[lanes.JobID]bool
	expired   map[lanes.JobID]*mJob // leases moved to the past, not yet reclaimed
	recovered int                   // expired leases reclaimed (Stats.Recovered)
	acked     int
	co        map[string]lanes.JobID // coalesce name -> job last enqueued under it
	cancels   int                    // jobs cancelled (gone, like acked ones)
	tallied   int                    // the cancel tally: jobs cancelled waiting, and marked ones dropped
	drops     map[string]int         // marked jobs dropped, by how their lease ended
	// emptied marks lanes a cancel emptied while in the ring: they may stay
	// there, not ready, until a claim visits them.
	emptied map[string]bool
}

func (m *model) lim(g string) int {
	if l, ok := m.limit[g]; ok {
		return l
	}
	return modelLimit
}

func (m *model) w(g string) int {
	if w, ok := m.weight[g]; ok {
		return w
	}
	return 1
}

func (m *model) ready(g string) bool {
	inf := m.inflight[g]
	return len(m.lane[g]) > 0 && !(m.ordered && inf > 0) && inf < m.lim(g)
}

func (m *model) ensureRing(g string) {
	if m.ready(g) && !slices.Contains(m.ring, g) {
		if _, owed := m.turn[g]; owed {
			m.ring = append([]string{g}, m.ring...) // finishes its turn first
		} else {
			m.ring = append(m.ring, g)
		}
	}
}

func (m *model) toLane(j *mJob) {
	j.state = "pending"
	l := m.lane[j.g]
	i := sort.Search(len(l), func(i int) bool { return l[i] >= j.id })
	m.lane[j.g] = slices.Insert(l, i, j.id)
}

func (m *model) endLease(j *mJob) {
	m.inflight[j.g]--
	if m.inflight[j.g] == 0 {
		delete(m.inflight, j.g)
	}
	j.exp = 0
	delete(m.expired, j.id)
}

// drop ends marked job j (its lease already ended how): gone, counted in
// the cancel tally.
func (m *model) drop(j *mJob, how string) lanes.Outcome {
	j.state = "cancelled"
	m.cancels++
	m.tallied++
	m.drops[how]++
	return lanes.Cancelled
}

func (m *model) fail(j *mJob, how string) lanes.Outcome {
	if j.marked {
		return m.drop(j, how)
	}
	j.a++
	if j.a >= modelAttempts {
		j.state = "dead"
		m.dead[j.id] = true
		return lanes.DeadLettered
	}
	m.toLane(j)
	return lanes.Queued
}

// claim returns the jobs the model expects (nil: none) after reclaiming the
// expired leases in expiry order: those of up to lanes lanes (a claim with
// ClaimRequest.Lanes), each served as a claim of one lane would, until a
// lane keeps the rest of its turn at the ring's head or no lane is
// servable within the visits (modelVisits, one more per lane served).
func (m *model) claim(most, lanes int) []*mJob {
	m.reclaim()
	var out []*mJob
	visits := 0
	for served := 0; served < max(lanes, 1); served++ {
		jobs, head, used := m.serveOne(most, modelVisits+served-visits)
		visits += used
		out = append(out, jobs...)
		if len(jobs) == 0 || head {
			break
		}
	}
	return out
}

// reclaim ends the expired leases, in expiry order.
func (m *model) reclaim() {
	var expired []*mJob
	for _, j := range m.expired {
		expired = append(expired, j)
	}
	sort.Slice(expired, func(a, b int) bool { return expired[a].exp < expired[b].exp })
	for _, j := range expired {
		m.endLease(j)
		m.fail(j, "expired")
		m.ensureRing(j.g)
		m.recovered++
	}
}

// serveOne serves the first servable lane of the ring within visits: its
// jobs (nil: none), whether it stays at the ring's head (the rest of its
// turn) and the visits it took.
func (m *model) serveOne(max, visits int) (jobs []*mJob, head bool, used int) {
	// Lanes not servable (only a lane emptied by a cancel can be in the
	// ring so) leave it from the tail as the claim rotates past them.
	var g string
	for ; ; used++ {
		if len(m.ring) == 0 || used >= visits {
			return nil, false, used
		}
		g = m.ring[0]
		m.ring = append(m.ring[1:], g)
		delete(m.emptied, g)
		if m.ready(g) {
			break
		}
		m.ring = m.ring[:len(m.ring)-1]
	}
	used++
	inf := m.inflight[g]
	credit := m.w(g)
	if owed, ok := m.turn[g]; ok && owed < credit {
		credit = owed
	}
	k := min(credit, len(m.lane[g]), m.lim(g)-inf, max)
	if k <= 0 {
		panic(fmt.Sprintf("model: lane %s in the ring but not servable (k=%d)", g, k))
	}
	var out []*mJob
	for _, id := range m.lane[g][:k] {
		j := m.jobs[id]
		j.state, j.c = "inflight", j.c+1
		out = append(out, j)
	}
	m.lane[g] = m.lane[g][k:]
	if len(m.lane[g]) == 0 {
		delete(m.lane, g)
	}
	m.inflight[g] = inf + k
	owed := credit - k
	if owed > 0 && len(m.lane[g]) > 0 {
		m.turn[g] = owed
	} else {
		delete(m.turn, g)
	}
	switch {
	case len(m.lane[g]) == 0 || m.ordered || inf+k >= m.lim(g):
		m.ring = m.ring[:len(m.ring)-1]
	case owed > 0: // the rest of its turn comes next: tail back to head
		m.ring = append([]string{g}, m.ring[:len(m.ring)-1]...)
		head = true
	}
	return out, head, used
}

// modelSnapshot reads the whole state of one queue atomically.
var modelSnapshot = valkey.NewLuaScript(`
local p = ARGV[1]
local function hgetall(k) return redis.call('HGETALL', k) end
local leases = redis.call('ZRANGE', p .. 'leases', 0, -1, 'WITHSCORES')
local lg = {}
for i = 1, #leases, 2 do
  lg[#lg + 1] = leases[i]
  lg[#lg + 1] = leases[i + 1]
  lg[#lg + 1] = redis.call('HGET', p .. 'job:' .. leases[i], 'g') or ''
end
local lanes = {}
for i = 3, #ARGV do
  lanes[#lanes + 1] = redis.call('ZRANGE', p .. 'lane:' .. ARGV[i], 0, -1)
end
return {
  redis.call('LRANGE', KEYS[1], 0, -1),
  redis.call('SMEMBERS', p .. 'inring'),
  hgetall(p .. 'inflight'),
  lg,
  redis.call('ZRANGE', p .. 'dead', 0, -1),
  {}, -- (was a depth index; Stats reads lanes instead, checked below)
  redis.call('GET', p .. 'pending') or '0',
  redis.call('ZCARD', p .. 'delayed'),
  redis.call('ZCARD', p .. 'parked'),
  lanes,
  redis.call('EXISTS', p .. 'job:' .. ARGV[2]),
  hgetall(p .. 'turn'),
}`)

func runModel(t *testing.T, ordered bool, seed uint64, steps int) {
	ctx := context.Background()
	s := newStore(t,
		lanes.WithQueue("q", lanes.QueueConfig{Ordered: ordered, LaneLimit: modelLimit, MaxAttempts: modelAttempts}),
		lanes.WithBudgets(10_000, modelVisits))
	k := s.Keys()
	// Every cancel's tally: the jobs it removed waiting, and those it
	// marked in flight as each is dropped (model.tallied).
	tally := lanes.Tally{Key: k.Tag() + ":model:cancelled", Field: "c"}
	rng := rand.New(rand.NewPCG(seed, 0x1a2e5))
	minter := lanes.NewMinter()
	m := &model{
		ordered: ordered, jobs: map[lanes.JobID]*mJob{}, lane: map[string][]lanes.JobID{},
		inflight: map[string]int{}, weight: map[string]int{}, turn: map[string]int{}, limit: map[string]int{}, dead: map[lanes.JobID]bool{},
		expired: map[lanes.JobID]*mJob{}, co: map[string]lanes.JobID{}, emptied: map[string]bool{}, drops: map[string]int{},
	}
	groups := make([]string, modelLanes)
	for i := range groups {
		groups[i] = "g" + strconv.Itoa(i)
	}
	// Per-lane limit overrides, set once (a lower limit set later would
	// leave a lane in the ring lazily, which this model does not track).
	for g, l := range map[string]int{"g0": 1, "g1": 2, "g2": 5} {
		require.NoError(t, s.Inspector().SetLaneLimit(ctx, "q", g, l))
		m.limit[g] = l
	}

	held := map[lanes.JobID]lanes.Job{} // live leases we hold, by job
	var stale []lanes.Lease             // leases that no longer hold their job
	expSeq := 0
	lastAcked := lanes.JobID("none")
	counts := map[string]int{}
	heldIDs := func() []lanes.JobID {
		ids := make([]lanes.JobID, 0, len(held))
		for id := range held {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		return ids
	}
	pickHeld := func() (lanes.Job, bool) {
		ids := heldIDs()
		if len(ids) == 0 {
			return lanes.Job{}, false
		}
		return held[ids[rng.IntN(len(ids))]], true
	}
	// retire moves a held lease to the stale list when its job was reclaimed.
	retire := func() {
		for id, j := range held {
			if mj := m.jobs[id]; mj.state != "inflight" || strconv.Itoa(mj.c) != j.Token {
				stale = append(stale, j.Lease)
				delete(held, id)
			}
		}
	}

	check := func(step int, op string) {
		args := []string{k.Queue("q", ""), string(lastAcked)}
		args = append(args, groups...)
		arr, err := modelSnapshot.Exec(ctx, s.Client(), []string{k.Queue("q", "ring")}, args).ToArray()
		require.NoError(t, err)
		where := fmt.Sprintf("step %d (%s)", step, op)
		strs := func(i int) []string { v, err := arr[i].AsStrSlice(); require.NoError(t, err); return v }

		ringGot := strs(0)
		require.Equal(t, nilIfEmpty(m.ring), nilIfEmpty(ringGot), "%s: ring", where)
		inring := strs(1)
		sort.Strings(inring)
		ringSorted := slices.Clone(ringGot)
		sort.Strings(ringSorted)
		require.Equal(t, nilIfEmpty(ringSorted), nilIfEmpty(inring), "%s: inring set vs ring", where)
		require.Equal(t, len(slices.Compact(ringSorted)), len(ringGot), "%s: duplicate in ring", where)
		for _, g := range groups {
			if m.ready(g) && !slices.Contains(ringGot, g) {
				t.Fatalf("%s: lane %s ready but not in the ring", where, g)
			}
			if !m.ready(g) && slices.Contains(ringGot, g) && !m.emptied[g] {
				t.Fatalf("%s: lane %s in the ring but not ready (and not emptied by a cancel)", where, g)
			}
		}

		inf := strs(2)
		gotInf := map[string]int{}
		for i := 0; i < len(inf); i += 2 {
			n, _ := strconv.Atoi(inf[i+1])
			gotInf[inf[i]] = n
		}
		require.Equal(t, m.inflight, gotInf, "%s: inflight hash", where)

		seen := map[lanes.JobID]string{}
		place := func(id lanes.JobID, where2 string) {
			prev, dup := seen[id]
			if dup {
				t.Fatalf("%s: job %s both in %s and %s", where, id, prev, where2)
			}
			seen[id] = where2
		}
		ls := strs(3)
		liveAfter := time.Now().Add(30 * time.Minute).UnixMilli()
		byLane := map[string]int{}
		for i := 0; i < len(ls); i += 3 {
			id := lanes.JobID(ls[i])
			place(id, "leases")
			mj := m.jobs[id]
			if mj == nil || mj.state != "inflight" || mj.g != ls[i+2] {
				t.Fatalf("%s: leased job %s (lane %s) is %+v in the model", where, id, ls[i+2], mj)
			}
			byLane[ls[i+2]]++
			score, _ := strconv.ParseInt(ls[i+1], 10, 64)
			if (mj.exp > 0 && score != int64(mj.exp)) || (mj.exp == 0 && score < liveAfter) {
				t.Fatalf("%s: lease %s score %d, model expiry seq %d", where, id, score, mj.exp)
			}
		}
		require.Equal(t, m.inflight, byLane, "%s: in-flight vs leases grouped by lane", where)
		for _, id := range strs(4) {
			place(lanes.JobID(id), "dead")
			if !m.dead[lanes.JobID(id)] {
				t.Fatalf("%s: unexpected dead %s", where, id)
			}
		}
		wantDepth := map[string]int{}
		total := 0
		for g, l := range m.lane {
			if len(l) > 0 {
				wantDepth[g] = len(l)
			}
			total += len(l)
		}
		gotDepth := map[string]int{}
		if step%25 == 0 { // Stats reads every lane: O(lanes); check it now and then
			st, err := s.Inspector().Stats(ctx, "q", 1000)
			require.NoError(t, err)
			for _, ls := range st.Top {
				gotDepth[ls.Group] = ls.Depth
			}
			require.Equal(t, int64(m.recovered), st.Recovered, "%s: Stats recovered leases", where)
		} else {
			gotDepth = wantDepth
		}
		require.Equal(t, wantDepth, gotDepth, "%s: Stats top lanes (depths)", where)
		pending, _ := arr[6].ToString()
		require.Equal(t, strconv.Itoa(total), pending, "%s: pending count", where)
		n7, _ := arr[7].AsInt64()
		n8, _ := arr[8].AsInt64()
		require.Zero(t, n7+n8, "%s: nothing delayed or parked with delay 0", where)
		laneArr, err := arr[9].ToArray()
		require.NoError(t, err)
		onLanes := 0
		for i, g := range groups {
			got, err := laneArr[i].AsStrSlice()
			require.NoError(t, err)
			want := m.lane[g]
			same := len(got) == len(want)
			for j := 0; same && j < len(got); j++ {
				same = got[j] == string(want[j])
			}
			if !same {
				require.Equal(t, strIDs(want), got, "%s: lane %s", where, g)
			}
			onLanes += len(got)
		}
		// Each id was matched to its one model state (a lane's pending ids
		// exactly; a lease to an in-flight job; a dead letter to a dead
		// one) and leases and dead letters were checked for repeats, so an
		// id in two places would have failed above; equal counts mean no
		// live job is missing either.
		if got, live := onLanes+len(seen), len(m.jobs)-m.acked-m.cancels; got != live {
			t.Fatalf("%s: %d jobs on the server, %d live in the model", where, got, live)
		}
		ex, _ := arr[10].AsInt64()
		require.Zero(t, ex, "%s: acked or cancelled job %s still has its hash", where, lastAcked)
		turn, err := arr[11].AsIntMap()
		require.NoError(t, err)
		gotTurn := map[string]int{}
		for g, n := range turn {
			gotTurn[g] = int(n)
		}
		require.Equal(t, m.turn, gotTurn, "%s: turns owed", where)
		require.Equal(t, m.tallied, rint(t, s, "HGET", tally.Key, tally.Field), "%s: the cancel tally", where)
	}

	// expectClaim checks that claim c (of up to max jobs) handed out exactly
	// what the model's claim predicts, and holds the jobs' leases.
	expectClaim := func(step int, c lanes.Claimed, max, nl int, when string) {
		want := m.claim(max, nl)
		if len(want) == 0 {
			require.Empty(t, c.Jobs, "step %d: claim%s", step, when)
			if len(m.inflight) > 0 {
				require.Greater(t, c.RetryIn, 30*time.Minute)
			} else {
				require.Equal(t, time.Duration(-1), c.RetryIn)
			}
		} else {
			require.Len(t, c.Jobs, len(want), "step %d: claim of %d lanes%s", step, nl, when)
			for i, j := range c.Jobs {
				require.Equal(t, want[i].id, j.ID, "step %d: claim order", step)
				require.Equal(t, want[i].g, j.Group)
				require.Equal(t, strconv.Itoa(want[i].c), j.Token)
				require.Equal(t, want[i].a, j.Attempts)
				require.Equal(t, want[i].p, string(j.Payload), "step %d: payload", step)
				held[j.ID] = j
			}
			counts["jobs claimed"] += len(c.Jobs)
		}
		retire()
	}
	// ackInClaim acks held job j in the same call as a claim (Max 1..4),
	// now and then with a stale lease after it: the acks run first, in
	// order, each exactly as Ack (the model applies them so), then the claim
	// hands out exactly what the model's claim predicts.
	ride := rand.New(rand.NewPCG(seed, 0xac4))     // its own draws: the main sequence of ops is unchanged
	several := rand.New(rand.NewPCG(seed, 0x1a9e)) // lanes per claim (ClaimRequest.Lanes), its own draws too
	mark := rand.New(rand.NewPCG(seed, 0xca9))     // a held job added to a cancel, its own draws too
	ackInClaim := func(step int, j lanes.Job) {
		max := 1 + ride.IntN(4)
		acks := []lanes.Lease{j.Lease}
		if len(stale) > 0 && ride.IntN(3) == 0 {
			acks = append(acks, stale[ride.IntN(len(stale))])
		}
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: max, Ack: acks})
		require.NoError(t, err)
		require.Len(t, c.Acked, len(acks), "step %d: one result per ack", step)
		require.NoError(t, c.Acked[0], "step %d: the ack riding on the claim", step)
		mj := m.jobs[j.ID]
		m.endLease(mj)
		mj.state = "acked"
		m.acked++
		lastAcked = j.ID
		delete(held, j.ID)
		stale = append(stale, j.Lease)
		m.ensureRing(mj.g)
		counts["acks riding on claims"]++
		if len(acks) > 1 {
			if st := m.jobs[acks[1].ID].state; st == "acked" || st == "cancelled" {
				require.ErrorIs(t, c.Acked[1], lanes.ErrNoJob)
			} else {
				require.ErrorIs(t, c.Acked[1], lanes.ErrStaleLease)
			}
			counts["stale calls"]++
		}
		expectClaim(step, c, max, 1, " after the ack")
	}
	// ackAll acks held job j with up to 3 more held jobs in one AckAll,
	// now and then with j's lease twice and a stale lease among them, in
	// a shuffled order: each ack is decided on what the acks before it
	// left, exactly as one Ack each in turn (the model applies them so).
	batchr := rand.New(rand.NewPCG(seed, 0xba7c)) // its own draws too
	ackAll := func(step int, j lanes.Job) {
		acks := []lanes.Acking{{Lease: j.Lease}}
		ids := heldIDs()
		for n := batchr.IntN(4); n > 0 && len(ids) > 0; n-- {
			id := ids[batchr.IntN(len(ids))]
			if id != j.ID && !slices.ContainsFunc(acks, func(a lanes.Acking) bool { return a.Lease.ID == id }) {
				acks = append(acks, lanes.Acking{Lease: held[id].Lease})
			}
		}
		if batchr.IntN(3) == 0 {
			acks = append(acks, lanes.Acking{Lease: j.Lease})
		}
		if len(stale) > 0 && batchr.IntN(3) == 0 {
			acks = append(acks, lanes.Acking{Lease: stale[batchr.IntN(len(stale))]})
		}
		batchr.Shuffle(len(acks), func(a, b int) { acks[a], acks[b] = acks[b], acks[a] })
		errs, err := s.AckAll(ctx, acks)
		require.NoError(t, err)
		require.Len(t, errs, len(acks), "step %d: one result per ack", step)
		for i, a := range acks {
			mj := m.jobs[a.Lease.ID]
			if h, ok := held[a.Lease.ID]; ok && h.Token == a.Lease.Token {
				require.NoError(t, errs[i], "step %d: ack %d of the batch", step, i)
				m.endLease(mj)
				mj.state = "acked"
				m.acked++
				lastAcked = a.Lease.ID
				delete(held, a.Lease.ID)
				stale = append(stale, a.Lease)
				m.ensureRing(mj.g)
				counts["acks in batches"]++
				continue
			}
			if mj.state == "acked" || mj.state == "cancelled" {
				require.ErrorIs(t, errs[i], lanes.ErrNoJob, "step %d: ack %d of the batch", step, i)
			} else {
				require.ErrorIs(t, errs[i], lanes.ErrStaleLease, "step %d: ack %d of the batch", step, i)
			}
			counts["stale acks in batches"]++
		}
	}

	// steps counts operations that ran (a pick with nothing to act on,
	// e.g. an ack with no lease held, draws again).
	for step := 0; step < steps; {
		r := rng.IntN(100)
		var op string
		switch {
		case r < 15 && rng.IntN(3) == 0: // coalescing enqueue under one of 3 names
			op = "coalesce"
			name := "c" + strconv.Itoa(rng.IntN(3))
			g := groups[rng.IntN(len(groups))]
			id := minter.New()
			payload := fmt.Sprintf("co:%d", step)
			res, err := s.Enqueue(ctx, "q", []lanes.Item{{Group: g, ID: id, Payload: []byte(payload)}}, lanes.Coalesce(name, time.Hour))
			require.NoError(t, err)
			got, replaced := res.IDs[0], res.Coalesced == 1
			if prev, ok := m.co[name]; ok && m.jobs[prev].state == "pending" {
				require.True(t, replaced, "step %d: pending job %s of %s replaced", step, prev, name)
				require.Equal(t, prev, got)
				m.jobs[prev].p = payload
				counts["coalesce replaced"]++
				break
			}
			require.False(t, replaced, "step %d: fresh job under %s", step, name)
			require.Equal(t, id, got)
			j := &mJob{id: id, g: g, p: payload}
			m.jobs[id] = j
			m.co[name] = id
			m.toLane(j)
			m.ensureRing(g)
		case r < 15: // enqueue 1..2 jobs, sometimes with a duplicate id
			op = "enqueue"
			g := groups[rng.IntN(len(groups))]
			var items []lanes.Item
			var fresh []*mJob
			for n := 1 + rng.IntN(2); n > 0; n-- {
				id := minter.New()
				items = append(items, lanes.Item{Group: g, ID: id, Payload: []byte(id)})
				fresh = append(fresh, &mJob{id: id, g: g, p: string(id)})
			}
			dups := 0
			if rng.IntN(5) == 0 {
				for _, j := range m.jobs {
					if j.state != "acked" && j.state != "cancelled" {
						items = append(items, lanes.Item{Group: groups[rng.IntN(len(groups))], ID: j.id, Payload: []byte("dup")})
						dups++
						break
					}
				}
			}
			res, err := s.Enqueue(ctx, "q", items)
			require.NoError(t, err)
			require.Equal(t, lanes.EnqueueResult{Added: len(fresh), Duplicates: dups}, res)
			for _, j := range fresh {
				m.jobs[j.id] = j
				m.toLane(j)
			}
			m.ensureRing(g)
		case r < 47: // claim
			op = "claim"
			max := 1 + rng.IntN(4)
			nl := 1 + several.IntN(4)
			c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: max, Lanes: nl})
			require.NoError(t, err)
			expectClaim(step, c, max, nl, "")
		case r < 69: // ack (a third of them riding on a claim, see below)
			op = "ack"
			j, ok := pickHeld()
			if !ok {
				continue
			}
			if ride.IntN(3) == 0 {
				op = "ack riding on a claim"
				ackInClaim(step, j)
				break
			}
			if batchr.IntN(2) == 0 {
				op = "acks in one call"
				ackAll(step, j)
				break
			}
			require.NoError(t, s.Ack(ctx, j.Lease))
			mj := m.jobs[j.ID]
			m.endLease(mj)
			mj.state = "acked"
			m.acked++
			lastAcked = j.ID
			delete(held, j.ID)
			stale = append(stale, j.Lease)
			m.ensureRing(mj.g)
		case r < 75: // nack, no delay
			op = "nack"
			j, ok := pickHeld()
			if !ok {
				continue
			}
			out, err := s.Nack(ctx, j.Lease, 0, "model")
			require.NoError(t, err)
			mj := m.jobs[j.ID]
			m.endLease(mj)
			require.Equal(t, m.fail(mj, "nack"), out)
			if out == lanes.Cancelled {
				lastAcked = j.ID
			}
			delete(held, j.ID)
			stale = append(stale, j.Lease)
			m.ensureRing(mj.g)
		case r < 80: // release
			op = "release"
			j, ok := pickHeld()
			if !ok {
				continue
			}
			require.NoError(t, s.Release(ctx, j.Lease))
			mj := m.jobs[j.ID]
			m.endLease(mj)
			if mj.marked {
				m.drop(mj, "release")
				lastAcked = j.ID
			} else {
				m.toLane(mj)
			}
			delete(held, j.ID)
			stale = append(stale, j.Lease)
			m.ensureRing(mj.g)
		case r < 88: // expire one or more held leases
			op = "expire"
			for n := 1 + rng.IntN(3); n > 0; n-- {
				j, ok := pickHeld()
				if !ok || m.jobs[j.ID].exp > 0 {
					continue
				}
				expSeq++
				rescore(t, s, "q", "leases", string(j.ID), int64(expSeq))
				m.jobs[j.ID].exp = expSeq
				m.expired[j.ID] = m.jobs[j.ID]
			}
		case r < 92: // weight change
			op = "weight"
			g := groups[rng.IntN(len(groups))]
			w := 1 + rng.IntN(5)
			require.NoError(t, s.Inspector().SetWeight(ctx, g, w))
			delete(m.turn, g) // a new weight starts a new turn
			if w == 1 {
				delete(m.weight, g)
			} else {
				m.weight[g] = w
			}
			got, err := s.Inspector().Weights(ctx)
			require.NoError(t, err)
			require.Equal(t, m.weight, got)
		case r < 95: // a call with a stale token changes nothing
			op = "stale"
			if len(stale) == 0 {
				continue
			}
			l := stale[rng.IntN(len(stale))]
			var err error
			switch rng.IntN(4) {
			case 0:
				err = s.Ack(ctx, l)
			case 1:
				err = s.Release(ctx, l)
			case 2:
				_, err = s.Nack(ctx, l, 0, "stale")
			default:
				_, err = s.Extend(ctx, l, time.Hour)
			}
			if st := m.jobs[l.ID].state; st == "acked" || st == "cancelled" {
				require.ErrorIs(t, err, lanes.ErrNoJob)
			} else {
				require.ErrorIs(t, err, lanes.ErrStaleLease)
			}
			counts["stale calls"]++
		case r < 97: // cancel a few jobs in any state, and an id never enqueued
			op = "cancel"
			ids := []lanes.JobID{minter.New()}
			if rng.IntN(2) == 0 { // a whole lane's waiting jobs: the lane empties
				ids = append(ids, m.lane[groups[rng.IntN(len(groups))]]...)
			} else {
				for id := range m.jobs {
					ids = append(ids, id)
				}
				slices.Sort(ids)
				rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
				ids = ids[:min(len(ids), 1+rng.IntN(4))]
			}
			// Now and then a job in flight too (its own draws: the main
			// sequence of ops is unchanged).
			if hids := heldIDs(); len(hids) > 0 && mark.IntN(2) == 0 {
				ids = append(ids, hids[mark.IntN(len(hids))])
			}
			var want lanes.CancelResult
			for _, id := range ids {
				mj := m.jobs[id]
				switch {
				case mj != nil && mj.state == "pending":
					want.Cancelled++
					mj.state = "cancelled"
					m.cancels++
					lastAcked = id
					l := slices.DeleteFunc(m.lane[mj.g], func(x lanes.JobID) bool { return x == id })
					if len(l) == 0 {
						delete(m.lane, mj.g)
						delete(m.turn, mj.g)
						if slices.Contains(m.ring, mj.g) {
							m.emptied[mj.g] = true
							counts["lanes emptied in the ring"]++
						}
					} else {
						m.lane[mj.g] = l
					}
				case mj != nil && mj.state == "inflight":
					want.InFlight++
					mj.marked = true
				default:
					want.Gone++
				}
			}
			got, err := s.Cancel(ctx, "q", ids, tally)
			require.NoError(t, err)
			require.Equal(t, want, got, "step %d: cancel %v", step, ids)
			m.tallied += got.Cancelled
			counts["cancelled"] += got.Cancelled
			counts["in flight marked"] += got.InFlight
		default: // requeue some dead letters
			op = "requeue"
			var ids []lanes.JobID
			for id := range m.dead {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			if len(ids) > 2 {
				ids = ids[:2]
			}
			n, err := s.Inspector().RequeueDead(ctx, "q", ids...)
			require.NoError(t, err)
			require.Equal(t, len(ids), n)
			counts["requeued"] += n
			for _, id := range ids {
				mj := m.jobs[id]
				delete(m.dead, id)
				mj.a = 0
				m.toLane(mj)
				m.ensureRing(mj.g)
			}
		}
		counts[op]++
		check(step, op)
		step++
	}

	// Drain: reclaim and settle everything; the keyspace returns to its
	// baseline (only the weight and glimit hashes stay).
	for id, j := range held {
		require.NoError(t, s.Ack(ctx, j.Lease))
		mj := m.jobs[id]
		m.endLease(mj)
		mj.state = "acked"
		m.ensureRing(mj.g)
	}
	held = map[lanes.JobID]lanes.Job{}
	for {
		c, err := s.Claim(ctx, lanes.ClaimRequest{Queues: []string{"q"}, Lease: time.Hour, Max: 4})
		require.NoError(t, err)
		if len(c.Jobs) == 0 {
			break
		}
		for _, j := range c.Jobs {
			require.NoError(t, s.Ack(ctx, j.Lease))
		}
	}
	n, err := s.Inspector().PurgeDead(ctx, "q", -time.Hour, 100_000)
	require.NoError(t, err)
	require.Equal(t, len(m.dead), n)
	require.Equal(t, m.tallied, rint(t, s, "HGET", tally.Key, tally.Field), "the cancel tally")
	rdo(t, s, "DEL", tally.Key)
	want := []string{k.Queue("q", "glimit")}
	if len(m.weight) > 0 {
		want = append(want, k.Shared("weight"))
	}
	if m.recovered > 0 {
		want = append(want, k.Queue("q", "recovered"))
	}
	// Coalesce names outlive their jobs until their TTL (they are not
	// deleted on settle): each one used is there, with its expiry set.
	for name := range m.co {
		want = append(want, k.Coalesce("q", name))
		require.Positive(t, rint(t, s, "PTTL", k.Coalesce("q", name)), "coalesce name %s expires", name)
	}
	sort.Strings(want)
	require.Equal(t, want, tagKeys(t, s))
	t.Logf("ops: %v; live jobs at the end %d, dead %d", counts, len(m.jobs)-m.acked, len(m.dead))
	require.Greater(t, counts["jobs claimed"], steps/3, "the run exercises claims")
	require.Positive(t, counts["expire"])
	require.Positive(t, counts["requeued"])
	require.Positive(t, counts["cancelled"])
	require.Positive(t, counts["in flight marked"])
	t.Logf("marked jobs dropped: %v", m.drops)
	for _, how := range []string{"nack", "release", "expired"} {
		require.Positive(t, m.drops[how], "marked jobs dropped by a %s", how)
	}
	require.Positive(t, counts["lanes emptied in the ring"])
	require.Positive(t, counts["stale calls"])
	require.Positive(t, counts["coalesce replaced"], "the run replaces pending jobs")
	require.Greater(t, counts["coalesce"], counts["coalesce replaced"], "the run also enqueues coalesced jobs fresh")
	require.Positive(t, counts["acks riding on claims"])
	require.Greater(t, counts["acks in batches"], counts["acks in one call"], "batches of several acks")
	require.Positive(t, counts["stale acks in batches"])
}
