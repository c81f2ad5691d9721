-- stats.lua: a consistent snapshot of one queue (read-only).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  number of top lanes (by depth) to list
-- Returns {ring length, pending, in flight, delayed, dead, parked,
--          then per top lane: group, depth, weight, in flight, glimit, parked-until ms ("" if not parked; "inf")}.
local q = read_queue(ARGV, 2)
local top = tonumber(ARGV[7])
local out = {
  redis.call('LLEN', q.p .. 'ring'),
  tonumber(redis.call('GET', q.p .. 'pending') or '0'),
  redis.call('ZCARD', q.p .. 'leases'),
  redis.call('ZCARD', q.p .. 'delayed'),
  redis.call('ZCARD', q.p .. 'dead'),
  redis.call('ZCARD', q.p .. 'parked'),
}
if top > 0 then
  local lanes = redis.call('ZREVRANGE', q.p .. 'depth', 0, top - 1, 'WITHSCORES')
  for j = 1, #lanes, 2 do
    local g = lanes[j]
    out[#out + 1] = g
    out[#out + 1] = tonumber(lanes[j + 1])
    out[#out + 1] = weight_of(q, g)
    out[#out + 1] = inflight_of(q, g)
    out[#out + 1] = lane_limit(q, g)
    out[#out + 1] = redis.call('ZSCORE', q.p .. 'parked', g) or ''
  end
end
return out
