-- common.lua: helpers shared by every lanes script. The Go loader
-- (lanes/scriptsrc.go) prepends to each script this header and the helpers
-- it calls, directly or through other helpers (a helper is built on every
-- call, used or not), so every script runs as one atomic unit with them in
-- scope. At the top level this file holds only "local function" helpers,
-- each with the comment above it (the loader refuses anything else). It
-- names no keys of its own:
-- every key it touches is built from the queue prefix (ARGV) of the script
-- that calls it, and every prefix starts with the store's hash tag.
--
-- A queue config "q" is read from five ARGV fields:
--   prefix  "{tag}:q:<queue>:"   (every key of the queue starts with it)
--   ordered "1" when a lane with jobs in flight is not served again until they settle
--   glimit  default max jobs of one lane in flight
--   maxatt  attempts after which a failed job is dead-lettered (0 = never)
--   logttl  how long a settled send must stay in the send logs (ms): the
--           longest of the global window and the configured pace periods
--
-- Send logs ("{tag}:s:rate", "{tag}:s:pace:<g>" and a queue's own
-- "<queue prefix>rate") are sorted sets of "<id>:<claim>" members. A claim
-- writes its members at +inf (in flight: counted against every window until
-- settled) and the claim time into the job's "t" field; settling (ack,
-- release, nack, dead, lease expiry) rescores them to the send's latest
-- possible arrival
--
--   a = max(c, r - F)
--
-- with c the claim time, r the settle time (both server TIME, ms) and F the
-- claimer's round-trip floor (ms, passed with the settle: the shortest time
-- it, or the nearest claimer of the store, recently saw between writing a
-- request and reading its answer, see floor.lua; 0 when nothing is known,
-- always for a lease expiry). A budget of limit L per
-- window W then blocks a later claim at t while t < a + W.
--
-- Why that bounds arrivals in any window of the receiver's: the receiver
-- counts a request when it arrives. This send arrived no later than r minus
-- its answer's return leg; a send claimed at t arrives no earlier than t
-- plus its forward leg. With each leg at least F/2 (F the shortest round
-- trip), the two arrivals are at least (t + F/2) - (r - F/2) = t - (r - F)
-- >= W apart whenever the claim at t was allowed, and the claim time caps a
-- at c (a request never arrives before its claim). F = 0 gives a = r: the
-- arrival lies between claim and settle, so counting in-flight sends plus
-- sends settled within the window bounds arrivals in any window however
-- long the network or the claimer took, with no assumption at all. With
-- F > 0 the assumption is that legs are at least half the floor: true of
-- the in-repo emulator while its latency holds or rises (it holds half its
-- latency before it counts a request, half after), assumed of a real server.
-- A sudden drop of the latency (sends settled with the old, higher floor
-- count early by up to the drop: at 1 s -> 0 ms a chat's next message can
-- arrive half a second after the previous one, one 429 at a 1/s chat pace),
-- or an asymmetric route, breaks it: the receiver then answers a rate
-- error, which the claimer must honour. With a steady round trip a send holds the budget for about
-- one window from its claim, however long the round trip, where counting
-- from r held it for window + round trip (throughput ceiling
-- W / (W + round trip)).

-- An integer as a command argument. Given a Lua number, the server formats
-- it with "%.17g" (printf's costly floating-point path); "%d" is cheap.
local function int(n) return string.format('%d', n) end

-- A decimal string known to hold a number (an argument the store built, a
-- value a script wrote) as a number: Lua's arithmetic converts it with one
-- strtod, where tonumber runs two (it checks, then converts).
local function num(s) return s + 0 end

-- A count from ARGV: "0" and "1" (the usual counts of queues and acks)
-- without a parse.
local function count(s)
  if s == '1' then return 1 elseif s == '0' then return 0 end
  return num(s)
end

-- The server's TIME in ms: the seconds followed by the first 3 of the 6
-- microsecond digits, parsed once.
local function now_ms()
  local t = redis.call('TIME')
  return num(t[1] .. string.sub('00000' .. t[2], -6, -4))
end

-- A budget's learned rate (learn.lua writes it in "{tag}:s:learned", field
-- "global" or "q:<queue>"): v is the field's value, "r at hit step every hold"
-- (integers; at, every and hold in ms), or nil when nothing was learned; c is
-- the configured rate (the ceiling). At time at Telegram pushed back while
-- the budget ran at hit, and the budget went down to r. Since then it climbs
-- back step per every ms (additive increase), never above c, and for hold ms
-- after at never above three quarters of hit (nor below r): the rate that
-- brought the 429s is not tried again at once. A probed budget (s, its
-- start, given: see probe_rate) is written "p r ..." instead and claims at r
-- (never above c) until a probe raises it or a 429 lowers it; with nothing
-- learned it claims at s. Returns the rate to claim at now (s or c when
-- nothing was learned) and when it last went down (nil: never).
local function learned_rate(v, c, now, s)
  if not v then return s or c end
  if string.byte(v, 1) == 112 then -- "p": a probed budget
    local r, low = string.match(v, '^p (%d+) %d+ %d+ %d+ %d+ %d+ (%d+) %d+ [%d:,]+$')
    if not r then return s or c end
    r, low = num(r), num(low)
    if r > c then r = c end
    return r, low > 0 and low or nil
  end
  local r, at, hit, step, every, hold = string.match(v, '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
  if not hold then return c end
  r, at = num(r), num(at)
  local since = now - at
  local rate = r
  if since > 0 then rate = r + num(step) * math.floor(since / num(every)) end
  if since < num(hold) then
    local cap = math.max(r, math.floor(num(hit) * 3 / 4))
    if rate > cap then rate = cap end
  end
  if rate > c then rate = c end
  return rate, at
end

-- A probed budget's state (v, "p r at next cap hold hit low fails h",
-- integers but h, times in ms) as a table; nil for another format or none.
-- r: the rate it claims at; at: its last change (a raise or a decrease);
-- next: the next raise's step; cap: the most it may reach before hold
-- ends; hit: the rate a 429 last pushed back; low: when it last went down
-- (0: never); fails: the raises answered by a 429 in a row; h: its last
-- changes, oldest first, as "t:r" pairs joined by commas (from time t it
-- claimed at r; at most probe_keep), parsed into p.h = {{t, r}, ...}: what
-- a 429 is judged by (learn.lua revert: the rate its send was claimed at).
local function probe_state(v)
  if not v then return nil end
  local r, at, nx, cap, hold, hit, low, fails, h =
    string.match(v, '^p (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+) ([%d:,]+)$')
  if not h then return nil end
  local p = {r = num(r), at = num(at), next = num(nx), cap = num(cap),
    hold = num(hold), hit = num(hit), low = num(low), fails = num(fails), h = {}}
  for t, x in string.gmatch(h, '(%d+):(%d+)') do p.h[#p.h + 1] = {num(t), num(x)} end
  return p
end

-- Writes a probed budget's state p (see probe_state) to field b of
-- "{tag}:s:learned" (S the shared prefix), with its rate from now on
-- appended to its changes (the last 8 kept).
local function probe_write(S, b, p, now)
  p.h[#p.h + 1] = {now, p.r}
  local from, parts = math.max(1, #p.h - 7), {}
  for k = from, #p.h do parts[#parts + 1] = int(p.h[k][1]) .. ':' .. int(p.h[k][2]) end
  redis.call('HSET', S .. 'learned', b, 'p ' .. int(p.r) .. ' ' .. int(p.at) .. ' ' .. int(p.next) .. ' ' ..
    int(p.cap) .. ' ' .. int(p.hold) .. ' ' .. int(p.hit) .. ' ' .. int(p.low) .. ' ' .. int(p.fails) .. ' ' ..
    table.concat(parts, ','))
end

-- Probes the store's global budget upward (a start below its configured
-- rate c: WithGlobalRateStart): called by a claim that found it spent at
-- rate (what claims use now) while a queue it holds had ready lanes, so
-- demand is above it. v is its learned value (false: none: its start,
-- spent, is raised at once). At most once per every ms since its last
-- change (a raise or a decrease), and only while below c (and below its
-- cap until its hold ends), it goes up by its step, which doubles at each
-- raise (1, 2, 4...: a probe starts gently where the limit may be right
-- above, and reaches a far ceiling in a few periods). A raise right after
-- a raise clears the failed probes' count (the last one held: no 429 to a
-- send claimed at it took it back). Returns the rate to claim at now.
local function probe_rate(S, v, c, rate, every, now)
  local p = probe_state(v or nil) or {r = rate, at = 0, next = 1, cap = c, hold = 0, hit = 0, low = 0, fails = 0, h = {{0, rate}}}
  if now - p.at < every or p.r >= c then return rate end
  local top = c
  if now < p.hold then top = math.min(c, p.cap) end
  if p.r >= top then return rate end
  local n = #p.h
  if n >= 2 and p.h[n][2] > p.h[n - 1][2] then p.fails = 0 end
  p.r, p.at = math.min(top, p.r + p.next), now
  p.next = p.next * 2
  probe_write(S, 'global', p, now)
  return p.r
end

-- A budget's proof (field "<budget>:ok" of "{tag}:s:learned"): how many
-- sends one window of it held with no 429 burst, which LowerBudget does
-- not go below (learn.lua lower). v is the field's value
-- "E M D C T X" (integers) or nil: E the current proof epoch (now ÷ ep),
-- M the most sends one window held at a claim in epoch E (in flight
-- included; claim.lua), D 1 once a 429 burst came in epoch E (learn.lua
-- lower and revert), C the proof: the most M of the epochs that ended with
-- no burst since the last binding one (learn.lua lower and revert spend
-- it; 0: none), T when the last binding burst came (ms), and X the proof
-- that burst spent (the rest of one burst, within the cooldown after T, is
-- weighed against it). ep is the epoch's length
-- (ms; lanes LearnConfig.Epoch, 10 s). Returns it as a table rolled to
-- now's epoch: an epoch that ended clean adds its M to C; with no claim
-- for six epochs (E six or more behind) C is dropped, a stale proof of a
-- rate the budget no longer ran. p.dirty says whether it changed (to be
-- written back by proof_write).
local function proof_read(v, now, ep)
  local e = math.floor(now / ep)
  local p = {e = e, m = 0, d = 0, c = 0, t = 0, x = 0, dirty = true}
  if not v then return p end
  local E, M, D, C, T, X = string.match(v, '^(%d+) (%d+) (%d) (%d+) (%d+) (%d+)$')
  if not X then return p end
  E, p.m, p.d, p.c, p.t, p.x = num(E), num(M), num(D), num(C), num(T), num(X)
  if E == e then
    p.dirty = false
    return p
  end
  if e - E >= 6 then
    p.c = 0
  elseif p.d == 0 and p.m > p.c then
    p.c = p.m
  end
  p.m, p.d = 0, 0
  return p
end

-- Writes budget b's proof p (see proof_read) to "{tag}:s:learned", S the
-- shared prefix.
local function proof_write(S, b, p)
  redis.call('HSET', S .. 'learned', b .. ':ok', int(p.e) .. ' ' .. int(p.m) .. ' ' .. int(p.d) .. ' ' .. int(p.c) .. ' ' ..
    int(p.t) .. ' ' .. int(p.x))
end

-- Notes n sends in a window of budget b (its field in "{tag}:s:learned",
-- S the shared prefix) at a claim: v is its proof's value as read (see
-- proof_read; ep its epoch), top the budget's rate now. Writes only when
-- the epoch rolled or n is a new most by at least a sixteenth (or reaches
-- top): a window well below its budget rises one send at a time, and a
-- write per claim would double the claim's writes for a proof a
-- sixteenth short at most.
local function proof_note(S, b, v, n, now, ep, top)
  local p = proof_read(v, now, ep)
  if n > p.m and (n >= top or n - p.m > p.m / 16) then p.m, p.dirty = n, true end
  if p.dirty then proof_write(S, b, p) end
end

-- maxatt and logttl are parsed on first use (maxatt(q), logttl(q)): most
-- calls read neither.
local function read_queue(argv, i)
  local q = {
    p = argv[i],
    ordered = argv[i + 1] == '1',
    glimit = num(argv[i + 2]),
    maxatt_s = argv[i + 3],
    logttl_s = argv[i + 4],
  }
  return q, i + 5
end

local function maxatt(q)
  if not q.maxatt then q.maxatt = tonumber(q.maxatt_s) end
  return q.maxatt
end

local function logttl(q)
  if not q.logttl then q.logttl = tonumber(q.logttl_s) end
  return q.logttl
end

-- Sets key's expiry to at least ms from now: never shortens it, and gives
-- none to a key without one (PEXPIRE GT treats that as an infinite TTL;
-- a missing key is left missing). One command (Redis 7+), not PTTL then
-- PEXPIRE.
local function touch(key, ms)
  if ms > 0 then redis.call('PEXPIRE', key, int(ms), 'GT') end
end

-- touch, or in a batch of settles (batch: a table, see acks.lua; nil:
-- none) noted in batch.touch (key -> the longest ms asked) for touch_all
-- at the batch's end: a key several settles of the batch touch (a budget's
-- send log) is touched once.
local function touch_later(batch, key, ms)
  if not batch then return touch(key, ms) end
  local t = batch.touch[key]
  if not t or t < ms then batch.touch[key] = ms end
end

-- Rescores member of send log key to at (ms, a string) when it is there
-- (ZADD XX CH) and, when that changed it, keeps the log ttl ms from now
-- (touch). In a batch of settles (batch, see touch_later) the member is
-- noted in batch.rescore instead, for touch_all: one ZADD of every member
-- of the batch for a log and ttl, the log touched when any of them changed
-- (the same members rescored and the same expiry as a ZADD each: no settle
-- of the batch reads a budget's log).
local function rescore(batch, key, ttl, at, member)
  if not batch then
    if redis.call('ZADD', key, 'XX', 'CH', at, member) == 1 then touch(key, ttl) end
    return
  end
  local byttl = batch.rescore[key]
  if not byttl then
    byttl = {}
    batch.rescore[key] = byttl
  end
  local args = byttl[ttl]
  if not args then
    args = {'XX', 'CH'}
    byttl[ttl] = args
  end
  args[#args + 1] = at
  args[#args + 1] = member
end

-- Writes a batch's rescored members (rescore: key -> ttl -> ZADD
-- arguments), then touches each key the batch noted (touch_later).
local function touch_all(batch)
  for key, byttl in pairs(batch.rescore) do
    for ttl, args in pairs(byttl) do
      if redis.call('ZADD', key, unpack(args)) > 0 then touch_later(batch, key, ttl) end
    end
  end
  for key, ms in pairs(batch.touch) do touch(key, ms) end
end

-- The period of lane g's pace override, if any (ms), else 0. In a batch
-- of settles (batch, see touch_later) whether any lane has an override
-- (the hash exists) is read once, in batch.overrides.
local function override_period(S, g, batch)
  if batch then
    if batch.overrides == nil then batch.overrides = redis.call('EXISTS', S .. 'pacecfg') == 1 end
    if not batch.overrides then return 0 end
  end
  local v = redis.call('HGET', S .. 'pacecfg', g)
  if not v then return 0 end
  local _, p = string.match(v, '^(%d+):(%d+)$')
  return tonumber(p) or 0
end

-- The score a settled send gets in its send logs (ms): its latest possible
-- arrival max(claimed, now - floor) (see the header); now when floor is 0
-- or the claim time is unknown (false: a job claimed before the "t" field
-- existed).
local function arrival(now, floor, claimed)
  if floor <= 0 or not claimed then return now end
  local a = now - floor
  local c = num(claimed)
  if a < c then return c end
  return a
end

-- A send settled: rescore its send-log entries from +inf (in flight) to at
-- (ms, see arrival) and keep the logs alive for the longest window they
-- serve (from the settle: at is never later).
-- logged is the job's "s" field, written by the claim that handed the send
-- out: a digit of flags, 1 the global log, 2 the lane's pace log, 4 the
-- queue's own log ("<queue prefix>rate"), so "0" nothing logged, "3" the
-- global and pace logs; a log the claim did not write is not touched.
-- (false, a job claimed before the field existed: the global and pace logs
-- are tried; a log without the member is left untouched.) batch: see
-- rescore (the budgets' logs are written at the batch's end; the lane's
-- own pace log is written and touched at once). room (ms, nil: unknown)
-- is how long from now the lane's pace log is known to live already: the
-- claim that logged the send gave it at least its period plus the lease
-- from the claim's time (the job's field "e", claim.lua, an expiry no
-- command shortens); a touch that would not reach past it (PEXPIRE GT, a
-- no-op) is not sent.
local function mark_settled(S, q, g, member, at, logged, batch, room)
  if logged == '0' then return end
  local flags = 3
  if logged then flags = num(logged) end
  at = int(at)
  if flags >= 4 then
    flags = flags - 4
    rescore(batch, q.p .. 'rate', logttl(q), at, member)
    if flags == 0 then return end
  end
  -- No window configured (logttl 0) means no global rate: no global log.
  if flags ~= 2 and logttl(q) > 0 then rescore(batch, S .. 'rate', logttl(q), at, member) end
  if flags == 1 then return end
  local pk = S .. 'pace:' .. g
  if redis.call('ZADD', pk, 'XX', 'CH', at, member) == 1 then
    local ttl = logttl(q)
    local op = override_period(S, g, batch)
    if op > ttl then ttl = op end
    if not room or ttl > room then touch(pk, ttl) end
  end
end

local function lane_limit(q, g)
  local v = redis.call('HGET', q.p .. 'glimit', g)
  if v then return num(v) end
  return q.glimit
end

-- A weight is the lane's (the group's) in every queue: one hash per store.
local function weight_of(S, g)
  local v = redis.call('HGET', S .. 'weight', g)
  if v then return num(v) end
  return 1
end

-- (No parse for a lane with none in flight.)
local function inflight_of(q, g)
  local v = redis.call('HGET', q.p .. 'inflight', g)
  if not v then return 0 end
  return num(v)
end

-- A lane is ready (belongs in the ring) when it has pending jobs, is not
-- parked, and has concurrency headroom (none in flight, for an ordered queue).
--
-- ensure_ring puts a ready lane at the ring's tail unless it is there already
-- (the "inring" set makes the check O(1) and keeps the ring free of
-- duplicates). Returns 1 when the lane joined the ring, else 0. A caller that
-- knows the lane is non-empty (it just added a job) passes depth > 0, and one
-- that knows the lane's jobs in flight passes inf, saving those reads. A lane
-- in the ring already costs one SADD (answered 0); a lane that joins SADD
-- then RPUSH; one that turns out not ready is taken back out (SREM).
local function ensure_ring(q, g, depth, inf)
  if not depth then depth = redis.call('ZCARD', q.p .. 'lane:' .. g) end
  if depth == 0 then return 0 end
  if redis.call('SADD', q.p .. 'inring', g) == 0 then return 0 end
  local ready = not redis.call('ZSCORE', q.p .. 'parked', g)
  if ready then
    if not inf then inf = inflight_of(q, g) end
    if inf > 0 and (q.ordered or inf >= lane_limit(q, g)) then ready = false end
  end
  if not ready then
    redis.call('SREM', q.p .. 'inring', g)
    return 0
  end
  -- A lane with the rest of a turn to take (see claim.lua) rejoins at the
  -- head, to finish its turn before the ring moves on; any other at the tail.
  if redis.call('HEXISTS', q.p .. 'turn', g) == 1 then
    redis.call('LPUSH', q.p .. 'ring', g)
  else
    redis.call('RPUSH', q.p .. 'ring', g)
  end
  return 1
end

-- Removes lane g from the ring when it sits at the tail (right after LMOVE),
-- and from the ring's member set ("inring") now, or, given a table left,
-- notes it there for the caller's one SREM of every lane that left (a
-- claim serving a queue: serving reads no "inring", only ensure_ring does).
local function leave_ring_tail(q, g, left)
  local tail = redis.call('RPOP', q.p .. 'ring')
  if tail ~= g then
    -- Cannot happen inside one atomic script; keep the ring intact if it does.
    redis.call('RPUSH', q.p .. 'ring', tail)
    return
  end
  if left then
    left[#left + 1] = g -- the caller's one SREM for all (claim.lua)
    return
  end
  redis.call('SREM', q.p .. 'inring', g)
end

local function wake(S, joined)
  if joined > 0 then redis.call('PUBLISH', S .. 'wake', joined) end
end

-- Wakes idle claimers when member is now the earliest entry of a schedule
-- (a queue's parked or delayed set): a claimer that waits for a wake-up only
-- (RetryIn -1), or until a later time, must claim again to learn the new,
-- earlier due time. A later entry changes no claimer's timer. O(log n).
local function wake_if_first(S, key, member)
  local first = redis.call('ZRANGE', key, 0, 0)
  if first[1] == member then redis.call('PUBLISH', S .. 'wake', 0) end
end

-- Returns the lane's jobs in flight after the decrement.
local function dec_inflight(q, g)
  local n = redis.call('HINCRBY', q.p .. 'inflight', g, '-1')
  if n <= 0 then
    redis.call('HDEL', q.p .. 'inflight', g)
    return 0
  end
  return n
end

-- Adds n (may be negative) to the queue's pending count. (There is no
-- per-lane depth index: keeping one sorted by depth would cost O(log lanes)
-- on every claim; Stats finds the deepest lanes by reading them instead.)
local function add_pending(q, n)
  if redis.call('INCRBY', q.p .. 'pending', int(n)) <= 0 then
    redis.call('DEL', q.p .. 'pending')
  end
end

-- Puts job id back on its lane; its id sorts it where it was (mint order).
local function to_lane(q, id, g)
  if redis.call('ZADD', q.p .. 'lane:' .. g, 0, id) == 1 then
    add_pending(q, 1)
  end
end

local function to_dead(q, id, reason, now)
  redis.call('HSET', q.p .. 'job:' .. id, 'r', reason, 'd', now)
  redis.call('ZADD', q.p .. 'dead', now, id)
end

-- The due time "{tag}:q:<queue>:due" (string, ms, server clock) is at or
-- before the earliest timed entry of the queue's leases, delayed and parked
-- sets (an indefinite park has none), and absent once the three are empty.
-- A claim reads it with one command (MGET, beside the pause) and scans the
-- sets only once it has passed, so a claim with nothing due pays no scan.
-- Every script that adds a timed entry lowers it (lower_due, or the claim
-- for its leases); every one that removes entries drops it when the three
-- sets are empty (tidy_due); the claim that scans sets it back to the exact
-- earliest entry (reset_due).
-- lower_due returns the queue's due time afterwards (ms, a number), for a
-- caller that keeps it (the claim compares its leases against it).
local function lower_due(q, t)
  local d = redis.call('GET', q.p .. 'due')
  if not d or t < num(d) then
    redis.call('SET', q.p .. 'due', int(t))
    return t
  end
  return num(d)
end

local function tidy_due(q)
  if redis.call('EXISTS', q.p .. 'leases', q.p .. 'delayed', q.p .. 'parked') == 0 then
    redis.call('DEL', q.p .. 'due')
  end
end

-- Reads the earliest timed entry of the three sets (nil when none) and
-- stores it as the due time unless cur (the due time read before, a string
-- or false) says so already. O(log n).
local function reset_due(q, cur)
  local due
  for _, key in ipairs({'leases', 'delayed', 'parked'}) do
    local first = redis.call('ZRANGE', q.p .. key, 0, 0, 'WITHSCORES')
    if first[2] and first[2] ~= 'inf' then
      local t = tonumber(first[2])
      if not due or t < due then due = t end
    end
  end
  if due then
    if not cur or tonumber(cur) ~= due then redis.call('SET', q.p .. 'due', int(due)) end
  elseif cur then
    redis.call('DEL', q.p .. 'due')
  end
  return due
end

-- Checks a lease: returns the job's lane and 0, or nil and a code:
-- -2 no such job, -1 stale token (the lease expired and was reclaimed or
-- re-claimed by someone else).
local function check_lease(q, id, tok)
  local v = redis.call('HMGET', q.p .. 'job:' .. id, 'g', 'c')
  if not v[1] then return nil, -2 end
  if v[2] ~= tok then return nil, -1 end
  if not redis.call('ZSCORE', q.p .. 'leases', id) then return nil, -1 end
  return v[1], 0
end

-- check_lease, and on success also drops the lease from the lease set (its
-- ZREM is the liveness check; on an error nothing changed). The caller must
-- then end_lease with the third to fifth values (the job's send-log flag,
-- see mark_settled, its claim time, see arrival, and the expiry its claim
-- gave the lane's pace log, field "e", or false: see mark_settled).
local function take_lease(q, id, tok)
  local v = redis.call('HMGET', q.p .. 'job:' .. id, 'g', 'c', 's', 't', 'e')
  if not v[1] then return nil, -2 end
  if v[2] ~= tok then return nil, -1 end
  if redis.call('ZREM', q.p .. 'leases', id) == 0 then return nil, -1 end
  return v[1], 0, v[3], v[4], v[5]
end

-- Ends a lease already removed from the lease set (take_lease, or a
-- reclaimed expiry): drops it from the lane's in-flight count and settles its
-- send-log entries at the send's latest possible arrival (logged: see
-- mark_settled; floor and claimed: see arrival; kept: the pace log's
-- expiry the claim gave it, ms, or nil/false: see mark_settled). Returns
-- the lane's jobs in flight afterwards. (acks.lua does the same for a
-- batch of acks, with what they share done once.)
local function end_lease(S, q, id, g, tok, now, logged, floor, claimed, kept)
  local inf = dec_inflight(q, g)
  -- (The member is not even built when the claim logged nothing.)
  if logged ~= '0' then
    mark_settled(S, q, g, id .. ':' .. tok, arrival(now, floor, claimed), logged, nil, kept and num(kept) - now)
    -- A claimer found a budget spent by sends all in flight: this settle
    -- may refill it at once (counted from its arrival), so wake claimers.
    if redis.call('DEL', S .. 'budgetwait') == 1 then
      redis.call('PUBLISH', S .. 'wake', 0)
    end
  end
  return inf
end

-- An ack left lane g with inf jobs in flight: it changes neither the
-- lane's depth nor its park, so it can make the lane ready only by freeing
-- in-flight room: an ordered lane with none left in flight, or an
-- unordered one that was at its glimit (ensure_ring). Otherwise the lane's
-- place in (or out of) the ring is already right and is not read. Returns
-- how many lanes joined the ring (0 or 1).
local function ring_after_ack(q, g, inf)
  if q.ordered then
    if inf > 0 then return 0 end
  elseif inf + 1 < lane_limit(q, g) then
    return 0
  end
  return ensure_ring(q, g, nil, inf)
end

-- Acks a delivered job: ends its lease (floor: the claimer's round-trip
-- floor, ms, see arrival) and deletes the job. Returns 1, or
-- -1 (stale token) / -2 (no such job) with nothing changed; and how many
-- lanes joined the ring (0 or 1; the caller wakes claimers for them).
-- keep_due (the claim's acks) leaves the queue's due time for the caller to
-- tidy (tidy_due) once it knows whether it added a lease itself: a due time
-- earlier than needed is allowed (see above), and a claim that hands out a
-- lease would otherwise delete it only to set it again (so do the acks of
-- acks.lua, tidying each queue once). The ring: see ring_after_ack.
local function ack_job(S, q, id, tok, now, keep_due, floor)
  local g, code, logged, claimed, kept = take_lease(q, id, tok)
  if not g then return code, 0 end
  local inf = end_lease(S, q, id, g, tok, now, logged, floor, claimed, kept)
  redis.call('DEL', q.p .. 'job:' .. id)
  if not keep_due then tidy_due(q) end
  return 1, ring_after_ack(q, g, inf)
end

-- count_in counts job id in a tally: h the hash (nil: none) whose fields
-- (a table) are each incremented by 1 while it exists (an expired one is
-- not brought back); once a set the id joins (nil: none), the id counted
-- only when it was not a member yet; untrack a sorted set the id leaves
-- (nil: none), whether or not it is counted; ttl (ms, 0: none) the expiry
-- the hash and the once set are renewed to by a count.
local function count_in(id, h, fields, once, untrack, ttl)
  if untrack then redis.call('ZREM', untrack, id) end
  if not h or redis.call('EXISTS', h) == 0 then return end
  if once then
    if redis.call('SADD', once, id) == 0 then return end
    if ttl > 0 then redis.call('PEXPIRE', once, ttl) end
  end
  for _, f in ipairs(fields) do redis.call('HINCRBY', h, f, 1) end
  if ttl > 0 then redis.call('PEXPIRE', h, ttl) end
end

-- apply_tally counts a settled job in its caller's tally (lanes
-- SettleTally), in the settling call itself. From ARGV[i]:
--   ARGV[i]    "1": KEYS[k] is the tally hash (a key under the store's tag)
--   ARGV[i+1]  "1": the next key is a set the job id joins; the job is
--              counted only when it was not a member yet (once per id)
--   ARGV[i+2]  "1": the next key is a sorted set the job id leaves (ZREM)
--   ARGV[i+3]  TTL (ms) the hash and the once set are renewed to (0: none)
--   ARGV[i+4..] hash fields, each incremented by 1
-- (See count_in.)
local function apply_tally(id, i, k)
  local h, once, untrack
  if ARGV[i] == '1' then h = KEYS[k]; k = k + 1 end
  if ARGV[i + 1] == '1' then once = KEYS[k]; k = k + 1 end
  if ARGV[i + 2] == '1' then untrack = KEYS[k] end
  local fields = {}
  for j = i + 4, #ARGV do fields[#fields + 1] = ARGV[j] end
  count_in(id, h, fields, once, untrack, num(ARGV[i + 3]))
end

-- stored_tally counts job id of queue q, just dead-lettered by the store
-- itself (an expired lease past max attempts, claim.lua) or by a sweep
-- (drain.lua), in the tally its enqueue stored in its field y (lanes
-- CountDead, enqueue.lua: "<ttl ms>\n<field prefix>\n<hash>\n<once>\n<untrack>",
-- an empty once or untrack for none, "+<suffix>" for the hash's name +
-- suffix), under field prefix .. code (see count_in). A job without the
-- field counts nothing. One HGET, plus the tally's own commands when it
-- has one.
local function stored_tally(q, id, code)
  local v = redis.call('HGET', q.p .. 'job:' .. id, 'y')
  if not v then return end
  local ttl, prefix, h, once, untrack = string.match(v, '^(%d+)\n([^\n]*)\n([^\n]*)\n([^\n]*)\n([^\n]*)$')
  if not ttl then return end
  local function key(k)
    if k == '' then return nil end
    if string.byte(k, 1) == 43 then return h .. string.sub(k, 2) end -- "+"
    return k
  end
  count_in(id, h, {prefix .. code}, key(once), key(untrack), num(ttl))
end

-- known_tally counts job id, found marked delivered (field v, written by
-- acklost.lua: "<ttl ms>\n<hash>\n<once set>\n<untrack set>[\n<field>]...",
-- a key "" for none) as its lease ends without an ack, in the tally the
-- mark stored (see count_in). claim.lua inlines it (a helper is built on
-- every call).
local function known_tally(id, v)
  local p = {}
  for s in string.gmatch(v .. '\n', '([^\n]*)\n') do p[#p + 1] = s end
  local fields = {}
  for j = 5, #p do fields[#fields + 1] = p[j] end
  local function key(k) if k == '' then return nil end return k end
  count_in(id, key(p[2]), fields, key(p[3]), key(p[4]), num(p[1]))
end
