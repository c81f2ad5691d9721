-- stopdone.lua: the last step of StopBroadcast, once the broadcast's waiting
-- copies are cancelled and its paid halt lifted: a lazy broadcast's counts
-- of the copies never made are settled (once), and the stop is marked
-- finished, in one atomic call.
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
--
-- A lazy broadcast (field lz = "1") not yet settled (no xc) is settled: a
-- stop during its walk (cursor cur not "$" and queued q < total t) counts
-- the copies never made, t - q, as cancelled (c), its total staying the
-- plan; a stop after its walk sets t to the copies made, q. Then xc = 1
-- (settled) and, lazy or not, xd = 1 (the stop finished: Progress's
-- StopFinished). Nothing is written when the hash is gone (an expired
-- broadcast is not resurrected). Returns 1 when written, else 0.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('HMGET', KEYS[1], 'lz', 'cur', 't', 'q', 'xc')
if v[1] == '1' and not v[5] then
  local total, queued = tonumber(v[3] or '0') or 0, tonumber(v[4] or '0') or 0
  if v[2] == '$' or queued >= total then
    redis.call('HSET', KEYS[1], 't', queued)
  else
    redis.call('HINCRBY', KEYS[1], 'c', total - queued)
  end
  redis.call('HSET', KEYS[1], 'xc', '1')
end
redis.call('HSET', KEYS[1], 'xd', '1')
return 1
