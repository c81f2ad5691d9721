-- requeue.lua: put dead letters back on their lanes, attempts reset to 0.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7..] job ids
-- Returns the number of jobs requeued (ids not in the dead-letter set are skipped).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local n, joined = 0, 0
for i = 7, #ARGV do
  local id = ARGV[i]
  if redis.call('ZREM', q.p .. 'dead', id) == 1 then
    local jk = q.p .. 'job:' .. id
    local g = redis.call('HGET', jk, 'g')
    if g then
      redis.call('HDEL', jk, 'a', 'r', 'd') -- attempts back to 0 (absent)
      to_lane(q, id, g)
      joined = joined + ensure_ring(q, g, 1)
      n = n + 1
    end
  end
end
wake(S, joined)
return n
