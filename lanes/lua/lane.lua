-- lane.lua: per-lane control: weight, glimit, pace, park, resume.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  op: "weight" | "glimit" | "pace" | "park" | "resume"
-- ARGV[8]  group (lane)
-- ARGV[9]  value: weight 1..1000 (1 = default: the field of the store-wide
--          "{tag}:s:weight" is removed, and the hash with its last field);
--          glimit >= 1 or 0 (queue default: the field is removed);
--          pace "limit:period_ms" or "" (the default: the field is removed);
--          park duration (ms from server TIME; -1 = until resumed)
-- ARGV[10..] weight only: the prefix "{tag}:q:<queue>:" of every queue the
--          store is configured with, whose turn in progress for the lane ends
-- Returns 1 for weight/glimit/pace/resume; for park, the end of the park in
-- force (ms, server clock; -1 for an indefinite park): a later, shorter park
-- never shortens an earlier one. A park that becomes the queue's earliest
-- publishes a wake-up, so idle claimers learn its due time (see common.lua).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local op, g, val = ARGV[7], ARGV[8], ARGV[9]
if op == 'weight' then
  -- A weight is the lane's in every queue (one store-wide hash); a new
  -- weight starts a new turn in every queue.
  for i = 10, #ARGV do redis.call('HDEL', ARGV[i] .. 'turn', g) end
  if val == '1' then redis.call('HDEL', S .. 'weight', g)
  else redis.call('HSET', S .. 'weight', g, val) end
  return 1
elseif op == 'glimit' then
  if val == '0' then redis.call('HDEL', q.p .. 'glimit', g)
  else redis.call('HSET', q.p .. 'glimit', g, val) end
elseif op == 'pace' then
  if val == '' then redis.call('HDEL', S .. 'pacecfg', g)
  else redis.call('HSET', S .. 'pacecfg', g, val) end
elseif op == 'park' then
  local ms = tonumber(val)
  if ms < 0 then
    redis.call('ZADD', q.p .. 'parked', 'inf', g)
    return -1
  end
  local until_new = now_ms() + ms
  redis.call('ZADD', q.p .. 'parked', 'GT', until_new, g)
  lower_due(q, until_new)
  -- A lane in the ring stays there until a claim visits it and drops it (O(1)).
  wake_if_first(S, q.p .. 'parked', g)
  -- The park in force: a longer (or indefinite) park is never shortened.
  local until_ms = redis.call('ZSCORE', q.p .. 'parked', g)
  if until_ms == 'inf' then return -1 end
  return tonumber(until_ms)
elseif op == 'resume' then
  if redis.call('ZREM', q.p .. 'parked', g) == 1 then tidy_due(q) end
else
  return redis.error_reply('lanes: unknown lane op ' .. op)
end
wake(S, ensure_ring(q, g))
return 1
