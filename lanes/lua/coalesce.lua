-- coalesce.lua: enqueue a job that replaces, in place, the pending job
-- enqueued earlier under the same coalesce key (latest wins: one send).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- KEYS[2]  the coalesce key "{tag}:q:<queue>:co:<name>": string, the id of
--          the job last enqueued under the name; PX ARGV[7]
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  TTL of KEYS[2] (ms), renewed on every call
-- ARGV[8]  group (lane)
-- ARGV[9]  new job id (used only when a fresh job is enqueued)
-- ARGV[10] payload
--
-- When KEYS[2] names a job that is still pending (its id sits on its lane's
-- sorted set: not claimed, not in flight, not dead), only that job's payload
-- is overwritten: it keeps its id and so its place in the lane, and nothing
-- else changes but its field w (the job's claim count then, "0" before
-- any: see acklost.lua). Otherwise (no key, the job was claimed, acked, dead-lettered
-- or is gone) the job is enqueued fresh exactly as enqueue.lua does, and
-- KEYS[2] now names it. A job claimed before the call is never touched: the
-- new payload goes out after it, in order. KEYS[2] is not deleted when its
-- job settles (that would need ack and dead to know it); it expires after
-- ARGV[7] ms, and a stale one is simply overwritten by the next call.
-- Returns {1, id} when a job was enqueued fresh, {0, id} when the pending
-- job id was replaced in place.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local ttl, g, id, payload = ARGV[7], ARGV[8], ARGV[9], ARGV[10]
local prev = redis.call('GET', KEYS[2])
if prev then
  local pk = q.p .. 'job:' .. prev
  local pv = redis.call('HMGET', pk, 'g', 'c')
  local pg = pv[1]
  if pg and redis.call('ZSCORE', q.p .. 'lane:' .. pg, prev) then
    -- w: the claim count at the replacement, so that the work of an
    -- earlier claim, done under a lease since lost, is not taken for this
    -- payload's (acklost.lua).
    redis.call('HSET', pk, 'p', payload, 'w', pv[2] or '0')
    redis.call('PEXPIRE', KEYS[2], ttl)
    return {0, prev}
  end
end
local jk = q.p .. 'job:' .. id
if redis.call('EXISTS', jk) == 1 then
  return redis.error_reply('coalesce.lua: job id ' .. id .. ' exists already')
end
redis.call('HSET', jk, 'g', g, 'p', payload)
to_lane(q, id, g)
wake(S, ensure_ring(q, g, 1))
redis.call('SET', KEYS[2], id, 'PX', ttl)
return {1, id}
