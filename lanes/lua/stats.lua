-- stats.lua: a consistent snapshot of one queue's totals, and of the given
-- lanes (read-only).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7..] groups (lanes) to describe
-- Returns {ring length, pending, in flight, delayed, dead, parked, expired
-- leases recovered (ever), then per
-- given lane: group, depth, weight (the store's, see common.lua), in flight, glimit, parked-until ms
-- ("" if not parked; "inf" if parked until resumed)}.
local q = read_queue(ARGV, 2)
local out = {
  redis.call('LLEN', q.p .. 'ring'),
  tonumber(redis.call('GET', q.p .. 'pending') or '0'),
  redis.call('ZCARD', q.p .. 'leases'),
  redis.call('ZCARD', q.p .. 'delayed'),
  redis.call('ZCARD', q.p .. 'dead'),
  redis.call('ZCARD', q.p .. 'parked'),
  tonumber(redis.call('GET', q.p .. 'recovered') or '0'),
}
for i = 7, #ARGV do
  local g = ARGV[i]
  out[#out + 1] = g
  out[#out + 1] = redis.call('ZCARD', q.p .. 'lane:' .. g)
  out[#out + 1] = weight_of(ARGV[1], g)
  out[#out + 1] = inflight_of(q, g)
  out[#out + 1] = lane_limit(q, g)
  out[#out + 1] = redis.call('ZSCORE', q.p .. 'parked', g) or ''
end
return out
