package lanes

// Every key of a store starts with its hash tag "{tag}", so all keys one
// script touches hash to one slot and the scripts run on Valkey Cluster.
// Group ids and job ids only ever follow the tag, so a group containing '{',
// '}' or ':' cannot change the slot.
//
// Layout (T = tag, Q = queue, g = group, id = job id):
//
//	{T}:s:rate          sorted set  global send log: "<id>:<claim>" -> claim time (ms); expires after the window
//	{T}:s:pause         string      global pause, with a PX expiry (none = until resumed)
//	{T}:s:pauseend      string      when the last timed pause ends (ms); PX its end + the longest budget window
//	                                (pause.lua; read by learn.lua: whether a budget binds)
//	{T}:s:pace:<g>      sorted set  lane g's send log, shared by every queue; expires after its period
//	{T}:s:pacecfg       hash        g -> "limit:period_ms" per-lane pace override
//	{T}:s:weight        hash        g -> weight (only non-default), read by every queue's claim
//	{T}:s:wake          channel     Pub/Sub wake-ups (not a key)
//	{T}:s:floor:<e>     sorted set  claimer -> round-trip floor (ms) published in epoch e (server ms / epoch);
//	                                expires at the end of epoch e+1 (ShareFloor, floor.lua appends e)
//	{T}:s:learned       hash        budget ("global", "q:<queue>") -> its learned rate "r at hit step every hold",
//	                                budget:why, budget:n, budget:ok (its proof "E M D C T", common.lua
//	                                proof_read; noted by claims), budget:forgiven (LowerBudget, learn.lua;
//	                                read by every claim)
//	{T}:s:qpause        hash        Q -> why it was paused (PauseQueue, qpause.lua; read by every claim)
//	{T}:q:Q:ring        list        lanes ready to be served, each at most once
//	{T}:q:Q:inring      set         the lanes in the ring (O(1) membership)
//	{T}:q:Q:lane:<g>    sorted set  pending job ids at score 0 (FIFO by id)
//	{T}:q:Q:job:<id>    hash        g (lane), p (payload), a (failed attempts: Nack, expired lease, Dead), c (claims: the lease token), r (reason), d (dead at, ms),
//	                                o (the claimer of its last claim, ClaimRequest.Claimer), y (its dead tally, CountDead:
//	                                "<ttl ms>\n<prefix>\n<hash>\n<once>\n<untrack>", a set named <hash>+s as "+s"),
//	                                x (cancelled while in flight, Cancel: "<tally hash>\n<field>", "" for none),
//	                                v (delivered under an earlier lease since lost, AckLost: its tally
//	                                "<ttl ms>\n<hash>\n<once>\n<untrack>[\n<field>]..."), w (the claim count when
//	                                Coalesce replaced its payload); a and c absent while 0
//	{T}:q:Q:leases      sorted set  id -> lease deadline (ms, server clock)
//	{T}:q:Q:inflight    hash        g -> jobs in flight (field removed at 0)
//	{T}:q:Q:pending     string      pending jobs in the queue (removed at 0)
//	{T}:q:Q:delayed     sorted set  id -> due time (ms), unordered queues' retries
//	{T}:q:Q:parked      sorted set  g -> parked until (ms; +inf = until resumed)
//	{T}:q:Q:due         string      ms at or before the earliest timed entry of leases, delayed and parked
//	                                (absent when the three are empty): a claim scans them only once it passed
//	{T}:q:Q:dead        sorted set  id -> dead-lettered at (ms)
//	{T}:q:Q:recovered   string      jobs whose expired lease a claim took back, ever (Stats.Recovered; never reset)
//	{T}:q:Q:claimers    sorted set  claimer -> its last heartbeat (ms, server clock) (Heartbeat, RecoverDead: liveness.go)
//	{T}:q:Q:glimit      hash        g -> max in flight (only overrides)
//	{T}:q:Q:turn        hash        g -> jobs still owed in a turn cut short (weight > 1 only)
//	{T}:q:Q:co:<name>   string      id of the job last enqueued under coalesce key name; PX ttl (Coalesce, coalesce.go)
type keyspace struct {
	tag string
}

func (k keyspace) shared() string        { return "{" + k.tag + "}:s:" }
func (k keyspace) rate() string          { return k.shared() + "rate" }
func (k keyspace) pause() string         { return k.shared() + "pause" }
func (k keyspace) wake() string          { return k.shared() + "wake" }
func (k keyspace) weight() string        { return k.shared() + "weight" }
func (k keyspace) learned() string       { return k.shared() + "learned" }
func (k keyspace) qpause() string        { return k.shared() + "qpause" }
func (k keyspace) queue(q string) string { return "{" + k.tag + "}:q:" + q + ":" }
func (k keyspace) ring(q string) string  { return k.queue(q) + "ring" }
func (k keyspace) job(q string, id JobID) string {
	return k.queue(q) + "job:" + string(id)
}
func (k keyspace) queueKey(q, name string) string { return k.queue(q) + name }

// coalesce is coalesce key name of queue q (Enqueue with Coalesce).
func (k keyspace) coalesce(q, name string) string { return k.queue(q) + "co:" + name }

// pace and lane spell keys the scripts build (common.lua's pace_ok and
// lane helpers); Go reads them only in tests.
func (k keyspace) pace(g string) string    { return k.shared() + "pace:" + g }
func (k keyspace) lane(q, g string) string { return k.queueKey(q, "lane:"+g) }

// floor is the prefix of the shared floor's epoch sets: floor.lua appends
// the epoch number (ShareFloor).
func (k keyspace) floor() string { return k.shared() + "floor:" }
