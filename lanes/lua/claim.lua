-- claim.lua: wclaim, the weighted rotation over the ring of ready lanes.
-- KEYS[1]  "{tag}:s:rate"   global send log: sorted set, member "<id>:<claim>" -> +inf while
--          in flight, then its latest possible arrival (ms); see common.lua
-- KEYS[2]  "{tag}:s:pause"  global pause: string with a PX expiry ("{tag}:s:nopause", a key
--          nobody writes, for a store WithoutSendLimits)
-- (also read: "{tag}:s:learned", the learned rates, see learn.lua, and
-- written there: each budget's proof, field "<budget>:ok", the most sends
-- its window held, see common.lua proof_read; and
-- "{tag}:s:qpause", the paused queues, see qpause.lua; "{tag}:s:pacecfg"
-- and "{tag}:s:weight", the lanes' pace overrides and weights, each looked
-- up per lane only when it exists; written:
-- "{tag}:s:budgetwait", a flag with a PX expiry of one window, set when the
-- global budget or a queue's own is spent by sends all in flight; the next settle of a logged
-- send deletes it and publishes a wake-up, see common.lua end_lease)
-- KEYS[3..] each claimed queue's ring "{tag}:q:<queue>:ring", in priority order
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2]  the call's numbers: one string of 13 decimal integers separated by single spaces
--          (one argument, not nine: the server handles each argument of a call at about
--          the cost of building a Lua helper), in order:
--            lease length (ms)
--            max jobs to hand out per lane served (the caller's batch cap, >= 1)
--            global rate: max jobs claimed per window (0 = no limit)
--            global window (ms)
--            maintenance budget per queue per call (expired leases, due delayed jobs, due parked lanes)
--            lane visit budget per queue per call
--            default lane pace: max jobs per lane per period (0 = no pacing; -1 = none at all,
--              not even a lane's override: a store WithoutSendLimits)
--            default lane pace period (ms)
--            number R of pace rules
--            max lanes to serve (>= 1): the call serves up to this many lanes of one
--              queue, each exactly as a call serving one lane would (see "Several lanes")
--            the global rate's start (0 = not probed: it claims at the global rate as
--              learned; see "Probing" and common.lua probe_rate)
--            the probe period (ms)
--            the proof epoch (ms; see common.lua proof_read)
-- ARGV[3..] R triples: group prefix, limit, period (ms)
-- then the number N of queues, then N queue configs (5 fields each, see common.lua), each
-- followed by the queue's own budget: max jobs of the queue claimed per window (0 = no
-- budget of its own) and its window (ms); its send log is "<queue prefix>rate"; then its
-- minimum share of the global budget in percent (0 = none; see "Minimum shares"),
-- then 1 when the queue is outside the global budget (its jobs neither counted in
-- nor held by it), else 0
-- then the number A of leases to ack first, then A quadruples: queue index (1..N),
-- job id, lease token, the claimer's round-trip floor for its send (ms, 0 = none;
-- see common.lua: the send counts from max(claim, ack - floor))
-- then the claimer's id ("" for none): written to each claimed job's hash (field o),
-- so that the leases of a claimer whose heartbeat stopped can be recovered early
-- (recover.lua)
--
-- A turn: a lane of weight w is owed up to w jobs per turn of the ring. When
-- the claimer's max, the global budget or the lane's own in-flight limit
-- (an ordered lane serves again only once its batch settles) cuts a turn
-- short, the rest is kept in "{tag}:q:<queue>:turn" (g -> jobs owed) and the
-- lane is served again before the ring moves on (it stays at, or rejoins,
-- the ring's head) until the turn is complete. So while the global rate
-- binds (budget refilling one job at a time), a lane of weight w still gets
-- about w times the share of a lane of weight 1. A turn ends when its jobs
-- are served or the lane empties; a lane whose pace budget runs out keeps
-- the rest of its turn (parked until its next pace token, it rejoins the
-- ring's head), so a weight raises a paced lane's share too, never beyond
-- its pace.
--
-- Per call: ack the given leases (a claimer that finished its jobs settles
-- them and gets its next batch in the same round trip; each ack is exactly
-- ack.lua's), read the pause and every queue's due time (one MGET; see
-- common.lua), and only for a queue whose due time has passed reclaim
-- expired leases (one past max attempts is dead-lettered and counted in
-- the dead tally its enqueue stored, common.lua stored_tally; one
-- cancelled while in flight, cancel.lua's field x, is dropped and counted
-- in its cancel's tally; one marked delivered, acklost.lua's field v, is
-- dropped and counted in the tally the mark stored, before either), promote due delayed jobs and due parked lanes (each at
-- most budget); then check the global budget, then for each queue
-- in order rotate its ring (LMOVE ring ring LEFT RIGHT) and serve the first
-- lane with work K = min(weight, depth, glimit headroom, max, global budget,
-- lane pace budget) heads (ZPOPMIN), each under a lease whose deadline is the
-- server's TIME plus the lease length. Budgets count sends in flight and
-- sends settled within their window (see common.lua), so the limits bound
-- when requests can arrive, not only when they are claimed. A lane that cannot be served, or has
-- nothing more to give now, leaves the ring from its tail in O(1) (parked
-- until its next pace token when its pace budget is spent). At most
-- visit-budget lanes are visited per queue. Cost: O((A + budget + visits + K) log n),
-- independent of the number of lanes (A acks, each O(log n); the budget only
-- for a queue whose due time has passed).
--
-- Several lanes: with a lane count L > 1 the call goes on after a lane is
-- served, rotating the same queue's ring again (one LMOVE per lane visited,
-- as L calls in a row would), until L lanes are served, the global or the
-- queue's budget is spent, the ring runs out of servable lanes, or a served
-- lane keeps the rest of its turn at the ring's head (the next call serves
-- it first, as it would have). Each served lane gets its own K under the
-- budgets left by the lanes before it. The visit budget grows by one per
-- lane served, so serving lanes never eats the search for the next one.
-- A later queue is not served in a call that served a lane (strict
-- priority, as before). The global and queue send logs' expiries, the
-- queue's pending count, the served lanes' in-flight counts (one HSET) and
-- the ring's member set ("inring": one SREM of the lanes that left the
-- ring) are written once per call.
--
-- Minimum shares: a queue with a share p > 0 (percent) and a global rate
-- keeps ceil(rate x p / 100) jobs of each window (the rate as learned)
-- while it has lanes in its ring: an earlier queue of the call is served
-- only from the budget left after the part of that share the queue has
-- not used yet in the last window, counted in "<queue prefix>share" (a
-- sorted set of the queue's claims, "<id>:<claim>" -> claim time, kept one
-- window). An earlier queue the reserve leaves nothing is
-- skipped as if its own budget were spent, so the later queue is served
-- in the same call. Strict priority otherwise: a queue with no ready lane,
-- a paused one, or one whose share is used reserves nothing.
--
-- Probing: with a start (WithGlobalRateStart) the global budget claims at
-- its start until it learns more. A call that finds it spent while a queue
-- it holds has ready lanes (demand above the budget) may raise it, at most
-- once per probe period and never above the configured rate (probe_rate in
-- common.lua); a 429 answered to a send above the rate before the raise
-- takes it back (learn.lua revert). A queue outside the global budget is
-- served while the budget is spent.
--
-- Returns {1, queue index, lease deadline ms, L', then L' lanes each as
-- group, K, then K times id, token, attempts, payload} or {0, hint}: hint is the ms until something may become claimable
-- (0 = try again now, -1 = nothing scheduled: wait for a wake-up); either
-- followed by the A ack codes, in order (1 acked, -1 stale token, -2 no such job).
-- (A number is parsed only when it is used: most calls skip the limits
-- that are off, and the maintenance budget is a command argument.)
local S = ARGV[1]
local lease_ms, max, rate, window, budget, visits_max, pace_limit, pace_period, nrules, lanes_max, gstart, gprobe, epoch =
  string.match(ARGV[2], '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%-?%d+) (%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
if not epoch then return redis.error_reply('claim: malformed numbers ' .. ARGV[2]) end
lease_ms, max, lanes_max, epoch = num(lease_ms), count(max), count(lanes_max), num(epoch)
if rate ~= '0' then rate, window = num(rate), num(window) else rate, window = 0, 0 end
-- A probed global rate's start (nil: not probed) and its configured rate.
local gconf = rate
if gstart ~= '0' and rate > 0 and num(gstart) < rate then gstart = num(gstart) else gstart = nil end
visits_max = num(visits_max)
if pace_limit ~= '0' then
  pace_limit, pace_period = num(pace_limit), num(pace_period)
else
  pace_limit, pace_period = 0, 0
end
local rules = {}
local i = 3
if nrules ~= '0' then
  for r = 1, tonumber(nrules) do
    rules[r] = {ARGV[i], tonumber(ARGV[i + 1]), tonumber(ARGV[i + 2])}
    i = i + 3
  end
end
local nq = count(ARGV[i])
i = i + 1
local queues = {}
for n = 1, nq do
  queues[n], i = read_queue(ARGV, i)
  if ARGV[i] ~= '0' then
    queues[n].rate, queues[n].window = num(ARGV[i]), num(ARGV[i + 1])
  else
    queues[n].rate = 0
  end
  queues[n].share = ARGV[i + 2] ~= '0' and num(ARGV[i + 2]) or 0
  -- In the global budget: counted in it and held by it.
  queues[n].g = rate > 0 and ARGV[i + 3] ~= '1'
  i = i + 4
end
local nacks = count(ARGV[i])
i = i + 1
local claimer = ARGV[i + 4 * nacks] or ''

local now = now_ms()

-- Acks first: they settle what the claimer knows, whatever the claim finds.
-- Their queues' due times are tidied by reply, once the claim is decided.
local codes, acked, tidy = {}, 0, {}
for a = 1, nacks do
  local n = count(ARGV[i])
  local code, joined = ack_job(S, queues[n], ARGV[i + 1], ARGV[i + 2], now, true, num(ARGV[i + 3]))
  codes[a] = code
  if code == 1 then tidy[n] = true end
  acked = acked + joined
  i = i + 4
end
wake(S, acked)

-- Appends the ack codes; tidies the due time of every queue that had an
-- ack, except served (the queue whose lane got a lease from this call: its
-- due time stands, at or before that lease's deadline).
local function reply(out, served)
  for n in pairs(tidy) do
    if n ~= served then tidy_due(queues[n]) end
  end
  for a = 1, nacks do out[#out + 1] = codes[a] end
  return out
end

-- The pause and every queue's due time, in one command.
local mkeys = {KEYS[2]}
for n = 1, nq do mkeys[n + 1] = queues[n].p .. 'due' end
local dues = redis.call('MGET', unpack(mkeys))
if dues[1] then
  local pause = redis.call('PTTL', KEYS[2])
  if pause > 0 then return reply({0, pause}) end
  if pause == -1 then return reply({0, -1}) end
end

-- Maintenance, bounded per queue, only for a queue with something due.
for n = 1, nq do
  local q = queues[n]
  local joined = 0
  -- Parsed once: a number from here on.
  local due = dues[n + 1] and num(dues[n + 1])
  dues[n + 1] = due or false
  if due and due <= now then
    local nows = int(now)
    local expired = redis.call('ZRANGEBYSCORE', q.p .. 'leases', '-inf', nows, 'LIMIT', '0', budget)
    local recovered = 0
    for _, id in ipairs(expired) do
      local jk = q.p .. 'job:' .. id
      local v = redis.call('HMGET', jk, 'g', 'c', 's', 'k', 'x', 'v')
      local g = v[1]
      redis.call('ZREM', q.p .. 'leases', id)
      if g then
        -- Nothing is known of the send's round trip: counted from now;
        -- unless this lease's claimer was found dead (recover.lua, field
        -- k "<token>:<ms>"): counted from when it stopped.
        local at = now
        if v[4] then
          local tok, t = string.match(v[4], '^(%d+):(%d+)$')
          if tok == (v[2] or '0') and num(t) < now then at = num(t) end
          redis.call('HDEL', jk, 'k')
        end
        local inf = end_lease(S, q, id, g, v[2] or '0', at, v[3], 0)
        local depth -- > 0 once the job is back on its lane
        if v[6] then
          -- Marked delivered (acklost.lua, field v "<ttl>\n<hash>\n<once>\n<untrack>[\n<field>]..."):
          -- its work was done under an earlier lease: dropped, counted in
          -- the mark's tally, never as cancelled nor dead. (common.lua
          -- known_tally, inline: a helper would be built on every claim.)
          redis.call('DEL', jk)
          local p = {}
          for s in string.gmatch(v[6] .. '\n', '([^\n]*)\n') do p[#p + 1] = s end
          local fields = {}
          for j = 5, #p do fields[#fields + 1] = p[j] end
          count_in(id, p[2] ~= '' and p[2] or nil, fields, p[3] ~= '' and p[3] or nil, p[4] ~= '' and p[4] or nil, num(p[1]))
        elseif v[5] then
          -- Cancelled while in flight (cancel.lua, field x "<tally
          -- hash>\n<field>" or ""): dropped, counted in that tally.
          -- (Inline: a helper would be built on every claim.)
          redis.call('DEL', jk)
          local h, f = string.match(v[5], '^([^\n]*)\n(.*)$')
          if h then count_in(id, h, {f}, nil, nil, 0) end
        else
          local a = redis.call('HINCRBY', jk, 'a', '1')
          if maxatt(q) > 0 and a >= maxatt(q) then
            to_dead(q, id, 'lease expired', now)
            -- Counted in its enqueue's dead tally (lanes CountDead) here:
            -- no caller settles it.
            stored_tally(q, id, 'lease expired')
          else
            redis.call('HSET', jk, 'r', 'lease expired')
            to_lane(q, id, g)
            depth = 1
          end
        end
        joined = joined + ensure_ring(q, g, depth, inf)
        recovered = recovered + 1
      end
    end
    -- Counted for monitoring (Stats.Recovered): never reset.
    if recovered > 0 then redis.call('INCRBY', q.p .. 'recovered', recovered) end
    local ready = redis.call('ZRANGEBYSCORE', q.p .. 'delayed', '-inf', nows, 'LIMIT', '0', budget)
    for _, id in ipairs(ready) do
      redis.call('ZREM', q.p .. 'delayed', id)
      local g = redis.call('HGET', q.p .. 'job:' .. id, 'g')
      if g then
        to_lane(q, id, g)
        joined = joined + ensure_ring(q, g, 1)
      end
    end
    local unpark = redis.call('ZRANGEBYSCORE', q.p .. 'parked', '-inf', nows, 'LIMIT', '0', budget)
    for _, g in ipairs(unpark) do
      redis.call('ZREM', q.p .. 'parked', g)
      joined = joined + ensure_ring(q, g)
    end
    dues[n + 1] = reset_due(q, due) or false
  end
  -- Other idle claimers may serve what this one will not.
  if joined > 1 then wake(S, joined - 1) end
end

local gvalue -- a probed global budget's learned value (false: none), for probe_rate
-- The global budget's proof as read (common.lua proof_read; false: none),
-- each queue's own in its q.ok: noted with the sends its window holds
-- (proof_note) when this call finds the budget spent or claims under it.
local gok = false
-- Learned rates (learn.lua, common.lua learned_rate): each budget of this
-- call claims at min(configured, learned), read with its proof in one
-- HMGET of "{tag}:s:learned" (fields "global", "global:ok", "q:<queue>" and
-- "q:<queue>:ok"; a queue's prefix "{tag}:q:<queue>:" is as long as S up to
-- its name).
do
  local fields, of = {}, {}
  if rate > 0 then fields[1], fields[2], of[1] = 'global', 'global:ok', 0 end
  for n = 1, nq do
    if queues[n].rate > 0 then
      local f = 'q:' .. string.sub(queues[n].p, #S + 1, -2)
      queues[n].field = f
      fields[#fields + 1] = f
      of[#fields] = n
      fields[#fields + 1] = f .. ':ok'
    end
  end
  if #fields > 0 then
    local vals = redis.call('HMGET', S .. 'learned', unpack(fields))
    if gstart then
      gvalue = vals[1] or false
      if not vals[1] then rate = gstart end
    end
    for f = 1, #fields, 2 do
      local n = of[f]
      if n == 0 then
        gok = vals[f + 1]
        if vals[f] then rate = learned_rate(vals[f], rate, now, gstart) end
      else
        queues[n].ok = vals[f + 1]
        if vals[f] then queues[n].rate = learned_rate(vals[f], queues[n].rate, now) end
      end
    end
  end
end

-- Paused queues (qpause.lua: an operator's pause, "{tag}:s:qpause" queue ->
-- why): not served by this call (their maintenance above still ran), read
-- in one HMGET of every queue of the call.
local paused = {}
do
  local names = {}
  for n = 1, nq do names[n] = string.sub(queues[n].p, #S + 1, -2) end
  local vals = redis.call('HMGET', S .. 'qpause', unpack(names))
  for n = 1, nq do paused[n] = vals[n] and true or false end
end

-- Global budget: a sliding window of claim times. (avail: what the call
-- may still hand out, max per lane over up to lanes_max lanes; a queue in
-- the global budget gets at most left of it.) Spent, gspent is when it
-- refills (ms): a call with no queue outside it returns at once.
local avail, left = max * lanes_max, 0 -- left: the global budget's headroom
local gspent
if rate > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', int(now - window))
  local used = redis.call('ZCARD', KEYS[1])
  if used >= rate and gstart then
    -- Spent: a probe while a queue it holds has lanes waiting (see "Probing").
    for n = 1, nq do
      if queues[n].g and not paused[n] and redis.call('LLEN', queues[n].p .. 'ring') > 0 then
        rate = probe_rate(S, gvalue, gconf, rate, num(gprobe), now)
        break
      end
    end
  end
  if used >= rate then
    local outside = false
    for n = 1, nq do
      if not queues[n].g then outside = true end
    end
    local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
    if oldest[2] == 'inf' then
      -- Every counted send is still in flight: the budget refills when the
      -- first of them settles (its arrival may already be a window ago),
      -- at a time nobody knows; the settle wakes claimers (budgetwait,
      -- see end_lease), the hint is the latest it can be.
      redis.call('SET', S .. 'budgetwait', '1', 'PX', int(window))
      gspent = window
    else
      gspent = math.max(1, tonumber(oldest[2]) + window - now)
    end
    proof_note(S, 'global', gok, used, now, epoch, rate)
    if not outside then return reply({0, gspent}) end
  else
    left = rate - used
  end
  gok = {used = used, v = gok} -- noted with the call's claims below
end

-- Lane g's pace: its override, else the first rule matching its name,
-- else the default; overrides says whether any lane has an override (the
-- hash "{tag}:s:pacecfg" exists: read once per call, not per lane). (It
-- and park_for_pace take what they read as arguments: a function that
-- reads a local of the script's top level allocates a cell per such
-- local, on every call.)
local function pace_of(S, g, pace_limit, pace_period, rules, overrides)
  if pace_limit < 0 then return 0, 0 end
  local v = overrides and redis.call('HGET', S .. 'pacecfg', g)
  if v then
    local l, p = string.match(v, '^(%d+):(%d+)$')
    return tonumber(l), tonumber(p)
  end
  for _, r in ipairs(rules) do
    if string.sub(g, 1, #r[1]) == r[1] then return r[2], r[3] end
  end
  return pace_limit, pace_period
end

-- When lane g's pace budget refills: its oldest entry leaving the window;
-- for an entry still in flight, one period from now at the earliest (the
-- claim that promotes the lane checks again).
local function park_for_pace(pk, period, now)
  local oldest = redis.call('ZRANGE', pk, 0, 0, 'WITHSCORES')
  if oldest[2] and oldest[2] ~= 'inf' then return tonumber(oldest[2]) + period end
  return now + period
end

-- The global budget the queues after n keep for their minimum shares (see
-- "Minimum shares"): the unused part of each one's share, for those with
-- ready lanes; keep caches each one's part for the call. (Arguments, not
-- the top level's locals: see pace_of.)
local function reserved(queues, paused, n, nq, rate, window, now, keep)
  local r = 0
  for m = n + 1, nq do
    local qm = queues[m]
    if qm.share > 0 and not paused[m] then
      local k = keep[m]
      if not k then
        k = 0
        if redis.call('LLEN', qm.p .. 'ring') > 0 then
          local sk = qm.p .. 'share'
          redis.call('ZREMRANGEBYSCORE', sk, '-inf', int(now - window))
          k = math.max(0, math.ceil(rate * qm.share / 100) - redis.call('ZCARD', sk))
        end
        keep[m] = k
      end
      r = r + k
    end
  end
  return r
end

-- Per call, not per lane served (nil until a served lane needs it):
-- whether any lane has a pace override ("{tag}:s:pacecfg") or a weight
-- ("{tag}:s:weight"); neither hash is written by a claim. Without one, a
-- lane's pace is its rule's or the default and its weight is 1, with no
-- read of its own. (A queue's parked set: q.anyparked, below.)
local overrides, weights
-- A queue's own budget (its send log "<prefix>rate"): how many it may still
-- hand out now (qavail), or, spent, when it refills (blocked[n], ms).
local blocked, keep = {}, {}
for n = 1, nq do
  local q = queues[n]
  local ring = q.p .. 'ring'
  local visits = 0
  local qavail = avail
  if q.g and gspent then
    -- The global budget is spent (a queue outside it is served instead).
    blocked[n], qavail, visits = now + gspent, 0, visits_max
  elseif q.g then
    if left < qavail then qavail = left end
    -- (Only for a queue with lanes to serve: a broadcast alone pays nothing.)
    if n < nq and redis.call('LLEN', ring) > 0 then
      local r = left - reserved(queues, paused, n, nq, rate, window, now, keep)
      if r < qavail then qavail = r end
      if qavail <= 0 then visits = visits_max end -- the later queues' shares: serve them
    end
  end
  if q.rate > 0 then
    local qk = q.p .. 'rate'
    redis.call('ZREMRANGEBYSCORE', qk, '-inf', int(now - q.window))
    local used = redis.call('ZCARD', qk)
    q.used = used
    if used >= q.rate then
      proof_note(S, q.field, q.ok, used, now, epoch, q.rate)
      local oldest = redis.call('ZRANGE', qk, 0, 0, 'WITHSCORES')
      local b
      if oldest[2] == 'inf' then
        b = now + q.window
        redis.call('SET', S .. 'budgetwait', '1', 'PX', int(q.window))
      else
        b = math.max(now + 1, tonumber(oldest[2]) + q.window)
      end
      if not blocked[n] or b > blocked[n] then blocked[n] = b end
      visits = visits_max -- skip this queue: the next one may be served
    elseif q.rate - used < qavail then
      qavail = q.rate - used
    end
  end
  if paused[n] then visits = visits_max end -- paused: the next queue may be served
  -- What this queue's lanes served by the call hand out (see "Several
  -- lanes"): the reply, the leases and send-log entries written once.
  local out, served, got_all = nil, 0, 0
  local leases, sends = {}, {}
  -- Written once when the queue's serving ends: the lanes that left the
  -- ring (common.lua leave_ring_tail, given left), and the served lanes'
  -- in-flight counts (one HSET of field/value pairs: the count read plus
  -- the jobs handed out; infl holds each one's, read again by a lane
  -- served twice).
  local left, infl, inflset = {}, {}, {}
  local deadline = now + lease_ms
  local dls, nows = int(deadline), int(now)
  while visits < visits_max + served do
    local g = redis.call('LMOVE', ring, ring, 'LEFT', 'RIGHT')
    if not g then break end
    visits = visits + 1
    local lane = q.p .. 'lane:' .. g
    local depth = redis.call('ZCARD', lane)
    -- Reads only what decides: an empty lane needs no in-flight count; an
    -- ordered lane with none in flight needs its glimit (>= 1) only to cap
    -- a K above 1.
    local inf, lim = 0, nil
    local servable = depth > 0
    if servable then
      inf = infl[g] or inflight_of(q, g)
      if q.ordered then
        servable = inf == 0
      else
        lim = lane_limit(q, g)
        servable = inf < lim
      end
    end
    -- A lane in the ring may have been parked since it joined (a 429's
    -- park); with the queue's parked set empty (read once per call: a
    -- lane this call parks leaves the ring first, and q.anyparked is set
    -- then) no lane is, and none is looked up.
    if servable and q.anyparked == nil then q.anyparked = redis.call('EXISTS', q.p .. 'parked') == 1 end
    if not servable or (q.anyparked and redis.call('ZSCORE', q.p .. 'parked', g)) then
      -- Not servable now: it rejoins when an enqueue, a settle or an unpark makes it ready.
      leave_ring_tail(q, g, left)
    else
      if overrides == nil then overrides = pace_limit >= 0 and redis.call('EXISTS', S .. 'pacecfg') == 1 end
      local plim, pper = pace_of(S, g, pace_limit, pace_period, rules, overrides)
      local pk -- the lane's send log, named only when it is paced
      local lavail = qavail
      local fresh -- the lane's send log did not exist (so it has no expiry)
      if plim > 0 then
        pk = S .. 'pace:' .. g
        -- Counted, then trimmed of the sends past its period only when it
        -- has any (what ZREMRANGEBYSCORE answers is what it removed): a
        -- lane's first send (a broadcast's copy) reads its log once.
        local used = redis.call('ZCARD', pk)
        if used > 0 then used = used - redis.call('ZREMRANGEBYSCORE', pk, '-inf', int(now - pper)) end
        fresh = used == 0 -- an empty sorted set does not exist
        lavail = plim - used
      end
      if lavail <= 0 then
        leave_ring_tail(q, g, left)
        local t = park_for_pace(pk, pper, now)
        redis.call('ZADD', q.p .. 'parked', 'GT', int(t), g)
        q.anyparked = true
        -- Kept: a lane served later in this call must not set the due
        -- time past this park's end.
        dues[n + 1] = lower_due(q, t)
      else
        if weights == nil then weights = redis.call('EXISTS', S .. 'weight') == 1 end
        local w = weights and weight_of(S, g) or 1
        local credit = w
        if w > 1 then
          -- The rest of a turn cut short (see above); never more than w.
          local owed = tonumber(redis.call('HGET', q.p .. 'turn', g) or w)
          if owed < credit then credit = owed end
        end
        local k = credit
        if depth < k then k = depth end
        if k > 1 and not lim then lim = lane_limit(q, g) end
        if lim and lim - inf < k then k = lim - inf end
        if qavail < k then k = qavail end
        if lavail < k then k = lavail end
        if max < k then k = max end
        local heads = redis.call('ZPOPMIN', lane, k)
        if not out then out = {1, n, deadline, 0} end
        out[#out + 1] = g
        local kat = #out + 1 -- where this lane's K goes
        out[kat] = 0
        local got = 0
        -- Which send logs get this claim's entries: the job's "s" field
        -- (see mark_settled), so its settle touches only those; with any,
        -- the claim time goes in its "t" field (see arrival).
        -- A digit of flags: 1 the global log, 2 the lane's pace log, 4 the
        -- queue's own log.
        local flags = 0
        if q.g then flags = 1 end
        if plim > 0 then flags = flags + 2 end
        if q.rate > 0 then flags = flags + 4 end
        local logged = int(flags)
        -- A paced lane's log lives at least pexp ms from now once this
        -- claim is done (below): the longest window a settle keeps it for
        -- (common.lua mark_settled: the store's log TTL, or the lane's
        -- override period when longer) plus the lease, so that a settle
        -- within the lease finds it long enough. Written in each job's
        -- field "e" (the server's clock for an expiry is the call's start,
        -- at most 1 ms before now), so that its ack skips a touch that
        -- would not extend it (mark_settled).
        local pexp, kept
        if plim > 0 then
          pexp = logttl(q)
          if pper > pexp then pexp = pper end
          pexp = pexp + lease_ms
          kept = int(now + pexp - 1)
        end
        -- One ZADD per set for all the call's jobs (the lane's pace log:
        -- per lane): score/member pairs.
        local lsends = {}
        for j = 1, #heads, 2 do
          local id = heads[j]
          local jk = q.p .. 'job:' .. id
          -- The claim count (the lease token) goes up by one; read with
          -- the attempts and payload, written with the log flag.
          local v = redis.call('HMGET', jk, 'a', 'p', 'c')
          local c = (v[3] and num(v[3]) or 0) + 1
          local tok = int(c)
          if kept then
            redis.call('HSET', jk, 'c', tok, 's', logged, 't', nows, 'o', claimer, 'e', kept)
          elseif logged ~= '0' then
            redis.call('HSET', jk, 'c', tok, 's', logged, 't', nows, 'o', claimer)
          else
            redis.call('HSET', jk, 'c', tok, 's', logged, 'o', claimer)
          end
          leases[#leases + 1] = dls
          leases[#leases + 1] = id
          if logged ~= '0' then
            local m = id .. ':' .. tok
            if plim > 0 then
              lsends[#lsends + 1] = 'inf'
              lsends[#lsends + 1] = m
            end
            sends[#sends + 1] = 'inf'
            sends[#sends + 1] = m
          end
          out[#out + 1] = id
          out[#out + 1] = c
          out[#out + 1] = v[1] and num(v[1]) or 0
          out[#out + 1] = v[2] or ''
          got = got + 1
        end
        out[kat] = got
        if plim > 0 and got > 0 then
          redis.call('ZADD', pk, unpack(lsends))
          -- In-flight entries must outlive the lease; settling extends
          -- further. (A log made by this ZADD has no expiry yet.)
          if fresh or redis.call('PTTL', pk) < pexp then redis.call('PEXPIRE', pk, int(pexp)) end
        end
        infl[g] = inf + got
        inflset[#inflset + 1] = g
        inflset[#inflset + 1] = int(inf + got)
        got_all = got_all + got
        qavail, avail = qavail - got, avail - got
        served = served + 1
        inf = inf + got
        depth = depth - got
        local paced_out = plim > 0 and lavail - got <= 0
        local owed = credit - got
        if owed > 0 and depth > 0 then
          -- Also when paced out: the lane takes the rest of its turn first
          -- when its pace allows again, so a weight counts for a paced lane
          -- too (up to its pace).
          redis.call('HSET', q.p .. 'turn', g, owed)
        elseif w > 1 and credit < w then
          redis.call('HDEL', q.p .. 'turn', g)
        end
        local more = served < lanes_max and qavail > 0
        if depth == 0 or q.ordered or inf >= lim or paced_out then
          leave_ring_tail(q, g, left)
        elseif owed > 0 then
          -- The rest of its turn comes next: back from the tail to the
          -- head, for the next call (this one serves no further lane).
          redis.call('RPOP', ring)
          redis.call('LPUSH', ring, g)
          more = false
        end
        if depth > 0 and paced_out then
          local t = park_for_pace(pk, pper, now)
          redis.call('ZADD', q.p .. 'parked', 'GT', int(t), g)
          q.anyparked = true
          dues[n + 1] = lower_due(q, t)
        end
        if not more then break end
      end
    end
  end
  if #inflset > 0 then redis.call('HSET', q.p .. 'inflight', unpack(inflset)) end
  if #left > 0 then redis.call('SREM', q.p .. 'inring', unpack(left)) end
  if out then
    -- The call's writes for every lane it served.
    if got_all > 0 then
      redis.call('ZADD', q.p .. 'leases', unpack(leases))
      local d = dues[n + 1]
      if not d or deadline < d then redis.call('SET', q.p .. 'due', dls) end
      if q.g then
        redis.call('ZADD', KEYS[1], unpack(sends))
        if q.share > 0 then
          -- Its share log: the same members at their claim time.
          local sk, shares = q.p .. 'share', {}
          for j = 2, #sends, 2 do
            shares[j - 1], shares[j] = nows, sends[j]
          end
          redis.call('ZADD', sk, unpack(shares))
          redis.call('PEXPIRE', sk, int(window))
        end
      end
      if q.rate > 0 then redis.call('ZADD', q.p .. 'rate', unpack(sends)) end
    end
    -- In-flight entries must outlive the lease; settling extends further.
    if q.g then
      if redis.call('PTTL', KEYS[1]) < window + lease_ms then redis.call('PEXPIRE', KEYS[1], int(window + lease_ms)) end
    end
    if q.rate > 0 then
      local qk = q.p .. 'rate'
      if redis.call('PTTL', qk) < q.window + lease_ms then redis.call('PEXPIRE', qk, int(q.window + lease_ms)) end
    end
    -- The proofs of the budgets this call claimed under (common.lua
    -- proof_note: written only on a new most or an epoch's roll).
    if got_all > 0 then
      if q.g and type(gok) == 'table' then proof_note(S, 'global', gok.v, gok.used + got_all, now, epoch, rate) end
      if q.rate > 0 then proof_note(S, q.field, q.ok, q.used + got_all, now, epoch, q.rate) end
    end
    add_pending(q, -got_all)
    out[4] = served
    return reply(out, got_all > 0 and n or nil)
  end
end

-- Nothing claimable: say when to look again.
local hint = -1
local function consider(t)
  if t == nil then return end
  local d = t - now
  if d < 0 then d = 0 end
  if hint < 0 or d < hint then hint = d end
end
for n = 1, nq do
  local q = queues[n]
  if paused[n] then
    -- Its lanes wait for the resume (which wakes claimers); its leases
    -- and schedules still fall due.
    consider(reset_due(q, dues[n + 1]))
  elseif blocked[n] and redis.call('LLEN', q.p .. 'ring') > 0 then
    -- Lanes ready, the queue's own budget spent: when it refills.
    consider(blocked[n])
  elseif redis.call('LLEN', q.p .. 'ring') > 0 then
    hint = 0
  else
    -- Exact (the due time may lie before the earliest entry), and kept.
    consider(reset_due(q, dues[n + 1]))
  end
end
return reply({0, hint})
