-- qpause.lua: pause or resume one queue (an operator's pause: no lane of
-- it is served until resumed; its leases, delayed jobs and parks are still
-- kept by the claims' maintenance, and enqueues still land).
-- KEYS[1]  "{tag}:s:qpause" hash: queue -> why it was paused (read by every
--          claim, claim.lua)
-- KEYS[2]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2]  "pause" or "resume"
-- ARGV[3]  queue
-- ARGV[4]  pause only: why (not empty)
-- A pause of a paused queue replaces its why. A resume wakes as many idle
-- claimers as the queue has lanes ready (at most 64): a claimer waiting for a
-- wake-up learns the queue is served again.
-- Returns 1 when the queue's state changed (paused, or resumed from a
-- pause), 0 when it was already so.
local S = ARGV[1]
if ARGV[2] == 'pause' then
  return redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
end
local n = redis.call('HDEL', KEYS[1], ARGV[3])
if n == 1 then
  wake(S, math.max(1, math.min(64, redis.call('LLEN', KEYS[2]))))
end
return n
