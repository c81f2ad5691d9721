-- settle.lua: end a lease without delivery: release, nack (retry) or dead-letter.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  job id
-- ARGV[8]  lease token
-- ARGV[9]  mode: "release" (back to its lane now, no attempt used),
--          "nack" (attempts + 1, back after the delay, dead past max attempts),
--          "dead" (attempts + 1, to the dead-letter set at once),
--          "dead-untried" (the same, attempts unchanged: the claim was never tried),
--          "postpone" (no attempt used, back after the delay: the job could
--          not go on for a reason outside it)
-- ARGV[10]  delay (ms, nack and postpone): on an ordered queue the whole lane is
--          parked until then, so later jobs cannot overtake this one; on an
--          unordered queue the job waits in the delayed set
-- ARGV[11] reason (nack, dead)
-- ARGV[12] the claimer's round-trip floor for the job's send (ms, 0 = none: no send
--          was answered): its send-log entries count from max(claim, now - floor),
--          see common.lua
-- ARGV[13..] the caller's tally (see common.lua apply_tally; keys from
--          KEYS[2]), applied only when the job is dead-lettered here
-- A retry that becomes the queue's earliest delayed job (or parked lane)
-- publishes a wake-up, so idle claimers learn its due time.
-- A job cancelled while in flight (field x, "<tally hash>\n<field>" or "":
-- cancel.lua) is dropped whatever the mode: its hash deleted, neither
-- queued again nor dead-lettered, counted 1 in that tally (while the hash
-- exists; common.lua count_in) instead of the caller's (ARGV[13..]).
-- A job marked delivered (field v: acklost.lua, its work was done under an
-- earlier lease since lost) is dropped the same way whatever the mode, even
-- one also cancelled in flight: counted in the tally the mark stored
-- (common.lua known_tally), never in the cancel's nor the caller's.
-- Returns {1, outcome, attempts}: outcome "queued", "delayed", "dead",
-- "cancelled" or "delivered" (dropped, see above); or {-1} stale token,
-- {-2} no such job (nothing changed).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local id, tok, mode = ARGV[7], ARGV[8], ARGV[9]
local delay, reason = tonumber(ARGV[10]), ARGV[11]
local g, code, logged, claimed = take_lease(q, id, tok)
if not g then return {code} end
local now = now_ms()
local jk = q.p .. 'job:' .. id
local inf = end_lease(S, q, id, g, tok, now, logged, num(ARGV[12]), claimed)
local v = redis.call('HMGET', jk, 'a', 'x', 'v')
local a = tonumber(v[1] or '0')
if v[3] then
  redis.call('DEL', jk)
  known_tally(id, v[3])
  tidy_due(q)
  wake(S, ensure_ring(q, g, nil, inf))
  return {1, 'delivered', a}
end
if v[2] then
  redis.call('DEL', jk)
  local h, f = string.match(v[2], '^([^\n]*)\n(.*)$')
  if h then count_in(id, h, {f}, nil, nil, 0) end
  tidy_due(q)
  wake(S, ensure_ring(q, g, nil, inf))
  return {1, 'cancelled', a}
end
local depth -- > 0 once the job is back on its lane
local outcome = 'queued'
if mode == 'dead' or mode == 'dead-untried' then
  if mode == 'dead' then
    a = redis.call('HINCRBY', jk, 'a', 1) -- the claim that failed for good is an attempt too
  end
  to_dead(q, id, reason, now)
  outcome = 'dead'
elseif mode == 'nack' or mode == 'postpone' then
  local dead = false
  if mode == 'nack' then
    a = redis.call('HINCRBY', jk, 'a', 1)
    redis.call('HSET', jk, 'r', reason)
    dead = maxatt(q) > 0 and a >= maxatt(q)
  end
  if dead then
    to_dead(q, id, reason, now)
    outcome = 'dead'
  elseif delay > 0 and not q.ordered then
    redis.call('ZADD', q.p .. 'delayed', now + delay, id)
    lower_due(q, now + delay)
    wake_if_first(S, q.p .. 'delayed', id)
    outcome = 'delayed'
  else
    to_lane(q, id, g)
    depth = 1
    if delay > 0 then
      redis.call('ZADD', q.p .. 'parked', 'GT', now + delay, g)
      lower_due(q, now + delay)
      wake_if_first(S, q.p .. 'parked', g)
      outcome = 'delayed'
    end
  end
else
  to_lane(q, id, g)
  depth = 1
end
if outcome == 'dead' then apply_tally(id, 13, 2) end
if outcome ~= 'delayed' then tidy_due(q) end
wake(S, ensure_ring(q, g, depth, inf))
return {1, outcome, a}
