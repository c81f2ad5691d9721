-- enqueue.lua: add jobs to their lanes (one or many, for fan-out).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring" (declared for cluster routing)
-- KEYS[2]  optional idempotency key (the Dedupe option; a key under the store's
--          tag), present when ARGV[7] is not "0": when it exists, nothing
--          is enqueued and {-1, its value} is returned; else it is SET to
--          the job ids (comma-separated) with a TTL, in this same atomic call
-- KEYS[2 or 3] optional stop key (the Unless option; under the store's
--          tag), after the idempotency key if any: when it exists, nothing
--          is enqueued and {-2, 0} is returned
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  the idempotency key's TTL (ms; "0" without an idempotency key)
-- ARGV[8]  the queue's max pending jobs per lane (QueueConfig.MaxDepth; "0":
--          unbounded): a new job whose lane holds that many pending jobs is
--          refused (counted as full); with an idempotency key a call that
--          would put any lane over it refuses every job and sets no key
-- ARGV[9..] triples: group, job id, payload
-- Each job is written once: its hash "{tag}:q:<queue>:job:<id>" holds the
-- lane (g) and payload (p) (attempts "a" and claim count "c" are absent
-- until they leave 0); its lane
-- "{tag}:q:<queue>:lane:<group>" gets ZADD 0 <id>, so the lane is FIFO by id.
-- A job id that exists already is left as it is (no duplicate); of an id
-- repeated within one call, the first job is the one written.
-- Returns {added, duplicates, full}, or {-1, ids, 0} for an idempotency key
-- that exists, {-2, 0, 0} for a stop key that exists, or {-3, 0, 0} for a
-- call with an idempotency key that a full lane refused.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local once, stop
if ARGV[7] ~= '0' then once, stop = KEYS[2], KEYS[3] else stop = KEYS[2] end
if stop and redis.call('EXISTS', stop) == 1 then return {-2, 0, 0} end
if once then
  local prev = redis.call('GET', once)
  if prev then return {-1, prev, 0} end
end
local depth = tonumber(ARGV[8])
if depth > 0 and once then
  -- Atomic with its key: every lane must take all of the call's jobs.
  local want = {}
  for i = 9, #ARGV, 3 do want[ARGV[i]] = (want[ARGV[i]] or 0) + 1 end
  for g, n in pairs(want) do
    if redis.call('ZCARD', q.p .. 'lane:' .. g) + n > depth then return {-3, 0, 0} end
  end
  depth = 0
end
-- Per job: HSET, ZADD. Per call, not per job: one EXISTS over every job key
-- of the call (a job needs its own EXISTS only when some key exists
-- already: a fresh fan-out skips them), the pending count (one INCRBY), the
-- ring check of the lanes touched (one SMISMEMBER, one SADD) and the tail of
-- the ring (one RPUSH), and, when a lane may join the ring, whether the
-- queue has any parked lane, lane in flight or turn owed at all (one EXISTS
-- each): a lane of a broadcast to new chats then costs no read beyond its
-- own job.
local added, dups, full, joined = 0, 0, 0, 0
local touched, order = {}, {}
local call, jp, lp = redis.call, q.p .. 'job:', q.p .. 'lane:'
local jks = {}
for i = 10, #ARGV, 3 do jks[#jks + 1] = jp .. ARGV[i] end
-- The caller sends at most a few thousand jobs per call (unpack's limit).
local check = #jks > 0 and call('EXISTS', unpack(jks)) > 0
-- first_of(id, i): the ARGV index of the first job with id before index i
-- (built only when a call repeats an id).
local first, upto = nil, 6
local function first_of(id, i)
  first = first or {}
  for j = upto + 3, i - 3, 3 do
    if not first[ARGV[j + 1]] then first[ARGV[j + 1]] = j end
  end
  if i - 3 > upto then upto = i - 3 end
  return first[id]
end
local n = 0
for i = 9, #ARGV, 3 do
  n = n + 1
  local g, id, jk = ARGV[i], ARGV[i + 1], jks[n]
  local new
  if depth > 0 and call('ZCARD', lp .. g) >= depth then
    -- The lane is full: an id that exists is still a duplicate, else
    -- the job is refused.
    if call('EXISTS', jk) == 1 then dups = dups + 1 else full = full + 1 end
  elseif check then
    new = call('EXISTS', jk) == 0
    if new then call('HSET', jk, 'g', g, 'p', ARGV[i + 2]) end
  else
    -- No job key existed when the call began, so only an earlier job of
    -- this call can have written this one (HSET then adds no field): the
    -- first job with the id stays as it was.
    new = call('HSET', jk, 'g', g, 'p', ARGV[i + 2]) == 2
    if not new then
      local j = first_of(id, i)
      call('HSET', jk, 'g', ARGV[j], 'p', ARGV[j + 2])
    end
  end
  if new then
    call('ZADD', lp .. g, '0', id) -- a string score: no number formatting
    added = added + 1
    if not touched[g] then
      touched[g] = true
      order[#order + 1] = g
    end
  elseif new == false then
    dups = dups + 1
  end
end
if added > 0 then add_pending(q, added) end
if #order > 0 then
  -- The same decisions as ensure_ring (common.lua), for all touched lanes
  -- at once; each lane has a job now, so only its park, in-flight count and
  -- turn can keep it out or put it at the head.
  local inring = redis.call('SMISMEMBER', q.p .. 'inring', unpack(order))
  local any_parked, any_inflight, any_turn
  local join, tail = {}, {}
  for n, g in ipairs(order) do
    if inring[n] == 0 then
      if any_parked == nil then -- read once, and only when a lane may join
        any_parked = redis.call('EXISTS', q.p .. 'parked') == 1
        any_inflight = redis.call('EXISTS', q.p .. 'inflight') == 1
        any_turn = redis.call('EXISTS', q.p .. 'turn') == 1
      end
      local ready = not (any_parked and redis.call('ZSCORE', q.p .. 'parked', g))
      if ready and any_inflight then
        local inf = inflight_of(q, g)
        if inf > 0 and (q.ordered or inf >= lane_limit(q, g)) then ready = false end
      end
      if ready then
        join[#join + 1] = g
        if any_turn and redis.call('HEXISTS', q.p .. 'turn', g) == 1 then
          redis.call('LPUSH', q.p .. 'ring', g)
        else
          tail[#tail + 1] = g
        end
      end
    end
  end
  if #join > 0 then
    redis.call('SADD', q.p .. 'inring', unpack(join))
    joined = #join
  end
  if #tail > 0 then redis.call('RPUSH', q.p .. 'ring', unpack(tail)) end
end
if once then
  local ids = {}
  for i = 9, #ARGV, 3 do ids[#ids + 1] = ARGV[i + 1] end
  redis.call('SET', once, table.concat(ids, ','), 'PX', ARGV[7])
end
wake(S, joined)
return {added, dups, full}
