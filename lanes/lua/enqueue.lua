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
-- ARGV[9]  the jobs' dead tally (the CountDead option, "" for none), as
--          stored in each new job's field y and read by common.lua
--          stored_tally: "<ttl ms>\n<field prefix>\n<hash>\n<once>\n<untrack>"
--          (a set named after the hash as "+<suffix>")
-- KEYS[next] optional cursor hash, then optional track sorted set (the
--          AtCursor option; under the store's tag), after the stop key if
--          any, present when ARGV[10] is "1"
-- ARGV[10] "1" with a cursor, else "0"; with one, ARGV[11..16]: the cursor
--          field, the value it must hold ("" = absent), the value it is set
--          to, the field of the cursor hash that counts the jobs added (""
--          for none), "1" when a track set follows the cursor hash in KEYS,
--          and the count N of extra increments; then N pairs field, amount
--          (HINCRBY on the cursor hash); then the triples
-- ARGV[F..] triples: group, job id, payload (F = 11 without a cursor)
-- Each job is written once: its hash "{tag}:q:<queue>:job:<id>" holds the
-- lane (g) and payload (p), and its dead tally (y) when the call has one
-- (attempts "a" and claim count "c" are absent until they leave 0); its lane
-- "{tag}:q:<queue>:lane:<group>" gets ZADD 0 <id>, so the lane is FIFO by id.
-- A job id that exists already is left as it is (no duplicate); of an id
-- repeated within one call, the first job is the one written.
-- With a cursor, the jobs are enqueued only while the cursor field holds
-- its expected value, and in the same call the field is set to its next
-- value, the added jobs counted, the extra increments applied and the added
-- ids put in the track set (score 0; given the cursor hash's TTL when it
-- has one): one step of a producer that walks something in order (a
-- broadcast over its audience) happens exactly once, even with no job.
-- Returns {added, duplicates, full}, or {-1, ids, 0} for an idempotency key
-- that exists, {-2, 0, 0} for a stop key that exists, {-3, 0, 0} for a
-- call with an idempotency key or a cursor that a full lane refused, or
-- {-4, 0, 0} for a cursor that does not hold its expected value.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local once, stop, cur, track, cargs
local nk = 2
if ARGV[7] ~= '0' then once = KEYS[nk]; nk = nk + 1 end
local F = 11
if ARGV[10] == '1' then
  local tracked = ARGV[15] == '1'
  -- KEYS after the idempotency key: [stop,] cursor[, track].
  if #KEYS - nk + 1 == (tracked and 3 or 2) then stop = KEYS[nk]; nk = nk + 1 end
  cur = KEYS[nk]
  if tracked then track = KEYS[nk + 1] end
  local extra = tonumber(ARGV[16])
  cargs = {field = ARGV[11], from = ARGV[12], to = ARGV[13], count = ARGV[14], first = 17, n = extra}
  F = 17 + 2 * extra
else
  stop = KEYS[nk]
end
if stop and redis.call('EXISTS', stop) == 1 then return {-2, 0, 0} end
if cur and (redis.call('HGET', cur, cargs.field) or '') ~= cargs.from then return {-4, 0, 0} end
if once then
  local prev = redis.call('GET', once)
  if prev then return {-1, prev, 0} end
end
local depth = tonumber(ARGV[8])
if depth > 0 and (once or cur) then
  -- Atomic with its key or cursor: every lane must take all of the
  -- call's jobs.
  local want = {}
  for i = F, #ARGV, 3 do want[ARGV[i]] = (want[ARGV[i]] or 0) + 1 end
  for g, n in pairs(want) do
    if redis.call('ZCARD', q.p .. 'lane:' .. g) + n > depth then return {-3, 0, 0} end
  end
  depth = 0
end
-- Per job: HSET, ZADD. Per call, not per job: one EXISTS over every job key
-- of the call (a job needs its own EXISTS only when some key exists
-- already: a fresh fan-out skips them), the track set (one ZADD of every
-- added id, with a cursor), the pending count (one INCRBY), the
-- ring check of the lanes touched (one SMISMEMBER, one SADD) and the tail of
-- the ring (one RPUSH), and, when a lane may join the ring, whether the
-- queue has any parked lane, lane in flight or turn owed at all (one EXISTS
-- each): a lane of a broadcast to new chats then costs no read beyond its
-- own job.
local added, dups, full, joined = 0, 0, 0, 0
local touched, order = {}, {}
-- The added ids as score/member pairs for the track set: one ZADD per call.
local ontrack = {}
local call, jp, lp = redis.call, q.p .. 'job:', q.p .. 'lane:'
local jks = {}
for i = F + 1, #ARGV, 3 do jks[#jks + 1] = jp .. ARGV[i] end
-- The caller sends at most a few thousand jobs per call (unpack's limit).
local check = #jks > 0 and call('EXISTS', unpack(jks)) > 0
-- first_of(id, i): the ARGV index of the first job with id before index i
-- (built only when a call repeats an id).
local first, upto = nil, F - 3
local function first_of(id, i)
  first = first or {}
  for j = upto + 3, i - 3, 3 do
    if not first[ARGV[j + 1]] then first[ARGV[j + 1]] = j end
  end
  if i - 3 > upto then upto = i - 3 end
  return first[id]
end
-- The dead tally (nil: none), written with each new job in its one HSET:
-- nf is the fields a new job's HSET adds.
local dead = ARGV[9] ~= '' and ARGV[9] or nil
local nf = dead and 3 or 2
local function write(jk, g, p)
  if dead then return call('HSET', jk, 'g', g, 'p', p, 'y', dead) end
  return call('HSET', jk, 'g', g, 'p', p)
end
local n = 0
for i = F, #ARGV, 3 do
  n = n + 1
  local g, id, jk = ARGV[i], ARGV[i + 1], jks[n]
  local new
  if depth > 0 and call('ZCARD', lp .. g) >= depth then
    -- The lane is full: an id that exists is still a duplicate, else
    -- the job is refused.
    if call('EXISTS', jk) == 1 then dups = dups + 1 else full = full + 1 end
  elseif check then
    new = call('EXISTS', jk) == 0
    if new then write(jk, g, ARGV[i + 2]) end
  else
    -- No job key existed when the call began, so only an earlier job of
    -- this call can have written this one (HSET then adds no field): the
    -- first job with the id stays as it was.
    new = write(jk, g, ARGV[i + 2]) == nf
    if not new then
      local j = first_of(id, i)
      call('HSET', jk, 'g', ARGV[j], 'p', ARGV[j + 2])
    end
  end
  if new then
    call('ZADD', lp .. g, '0', id) -- a string score: no number formatting
    if track then
      ontrack[#ontrack + 1] = '0'
      ontrack[#ontrack + 1] = id
    end
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
  for i = F, #ARGV, 3 do ids[#ids + 1] = ARGV[i + 1] end
  redis.call('SET', once, table.concat(ids, ','), 'PX', ARGV[7])
end
if cur then
  redis.call('HSET', cur, cargs.field, cargs.to)
  if cargs.count ~= '' and added > 0 then redis.call('HINCRBY', cur, cargs.count, added) end
  for i = cargs.first, cargs.first + 2 * cargs.n - 1, 2 do
    redis.call('HINCRBY', cur, ARGV[i], ARGV[i + 1])
  end
  if track and added > 0 then
    redis.call('ZADD', track, unpack(ontrack))
    local ttl = redis.call('PTTL', cur)
    if ttl > 0 then redis.call('PEXPIRE', track, ttl) end
  end
end
wake(S, joined)
return {added, dups, full}
