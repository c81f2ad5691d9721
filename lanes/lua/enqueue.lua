-- enqueue.lua: add jobs to their lanes (one or many, for fan-out).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring" (declared for cluster routing)
-- KEYS[2]  optional idempotency key (EnqueueOnce; a key under the store's
--          tag): when it exists, nothing is enqueued and {-1, its value}
--          is returned; else it is SET to the job ids (comma-separated)
--          with a TTL, in this same atomic call
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  the idempotency key's TTL (ms; "0" without KEYS[2])
-- ARGV[8..] triples: group, job id, payload
-- Each job is written once: its hash "{tag}:q:<queue>:job:<id>" holds the
-- lane (g), payload (p), attempts (a) and claim count (c); its lane
-- "{tag}:q:<queue>:lane:<group>" gets ZADD 0 <id>, so the lane is FIFO by id.
-- A job id that exists already is left as it is (no duplicate).
-- Returns {added, duplicates}, or {-1, ids} for an idempotency key that
-- exists.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local once = KEYS[2]
if once then
  local prev = redis.call('GET', once)
  if prev then return {-1, prev} end
end
local added, dups, joined = 0, 0, 0
local touched = {}
for i = 8, #ARGV, 3 do
  local g, id, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local jk = q.p .. 'job:' .. id
  if redis.call('EXISTS', jk) == 1 then
    dups = dups + 1
  else
    redis.call('HSET', jk, 'g', g, 'p', payload, 'a', 0, 'c', 0)
    to_lane(q, id, g)
    added = added + 1
    if not touched[g] then
      touched[g] = true
      joined = joined + ensure_ring(q, g, 1)
    end
  end
end
if once then
  local ids = {}
  for i = 8, #ARGV, 3 do ids[#ids + 1] = ARGV[i + 1] end
  redis.call('SET', once, table.concat(ids, ','), 'PX', ARGV[7])
end
wake(S, joined)
return {added, dups}
