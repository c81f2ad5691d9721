-- recover.lua: claimers' heartbeats, and the early recovery of the leases
-- of claimers whose heartbeat stopped (Store.Heartbeat, Store.RecoverDead).
-- KEYS[1]  the first queue's claimers "{tag}:q:<queue>:claimers" (declared for cluster routing)
-- ARGV[1]  "beat" or "recover"
-- ARGV[2]  beat: the claimer; recover: the heartbeat time to live (ms): a
--          claimer not heard from for longer is dead
-- ARGV[3]  the shared prefix "{tag}:s:" (wake-ups)
-- ARGV[4..] the prefixes "{tag}:q:<queue>:" of the queues
-- beat:    records the claimer's heartbeat now in each queue's claimers
--          (sorted set: claimer -> last heartbeat, ms, server clock). Returns 1.
-- recover: per queue, per dead claimer of its claimers (at most 16 a queue a
--          call, the longest silent first): every lease of the queue whose
--          job records that claimer (field o, written by claim.lua) gets the
--          deadline now and the queue's due time is lowered to now, so the
--          next claim's maintenance reclaims each as an expired lease (back
--          on its lane, one attempt counted; a job cancelled in flight is
--          dropped instead, see cancel.lua), as at the lease's end; the
--          claimer leaves the queue's claimers; idle claimers are woken
--          ({tag}:s:wake). Each such job also gets the field k
--          "<lease token>:<ms>": when the dead claimer's send in flight is
--          counted in the send logs (claim.lua's reclaim reads it for that
--          lease only), its last beat + ttl/5, not the reclaim's now: a
--          claimer beats at least every ttl/5, so one silent for ttl stopped
--          (died or froze) within ttl/5 of its last beat and wrote no
--          request after that; counted from the reclaim, the chat's pace
--          would hold the resend back one more pace period. Cost: O(queues)
--          while no claimer is dead; else O(the queue's leases). Returns the
--          number of leases recovered.
local now = now_ms()
if ARGV[1] == 'beat' then
  for i = 4, #ARGV do redis.call('ZADD', ARGV[i] .. 'claimers', int(now), ARGV[2]) end
  return 1
end
local ttl = num(ARGV[2])
local horizon = '(' .. int(now - ttl)
local recovered = 0
for i = 4, #ARGV do
  local p = ARGV[i]
  local dead = redis.call('ZRANGEBYSCORE', p .. 'claimers', '-inf', horizon, 'WITHSCORES', 'LIMIT', '0', '16')
  if #dead > 0 then
    -- claimer -> when its sends in flight are counted (see the header)
    local gone, names = {}, {}
    for j = 1, #dead, 2 do
      local at = math.floor(num(dead[j + 1]) + ttl / 5)
      if at > now then at = now end
      gone[dead[j]] = int(at)
      names[#names + 1] = dead[j]
    end
    local hit = false
    for _, id in ipairs(redis.call('ZRANGE', p .. 'leases', '0', '-1')) do
      local jk = p .. 'job:' .. id
      local v = redis.call('HMGET', jk, 'o', 'c')
      local at = v[1] and gone[v[1]]
      if at then
        redis.call('ZADD', p .. 'leases', int(now), id)
        redis.call('HSET', jk, 'k', (v[2] or '0') .. ':' .. at)
        recovered = recovered + 1
        hit = true
      end
    end
    if hit then lower_due({p = p}, now) end
    redis.call('ZREM', p .. 'claimers', unpack(names))
  end
end
-- Idle claimers wait for a wake-up or their last claim's retry time (the
-- leases' old deadlines): wake them to reclaim now.
wake(ARGV[3], recovered)
return recovered
