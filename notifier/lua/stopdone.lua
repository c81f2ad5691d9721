-- stopdone.lua: the last step of StopBroadcast, once the broadcast's waiting
-- copies are cancelled and its paid halt lifted: a lazy broadcast's counts
-- of the copies never made are settled (once), the copies sent and in
-- flight at the stop are recorded (once), and the stop is marked finished,
-- in one atomic call.
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
--
-- A lazy broadcast (field lz = "1") not yet settled (no xc) is settled: a
-- stop during its walk (cursor cur not "$" and queued q < total t) counts
-- the copies never made, t - q, as cancelled (c), its total staying the
-- plan; a stop after its walk sets t to the copies made, q. Then xc = 1
-- (settled). The first call to finish the stop (no xd yet) records what it
-- finished with: xs, the copies sent (s), and xi, the copies in flight
-- (the total, or q when more, less s, the failed f:<reason> and c; at
-- least 0): nothing waits on a lane any more, so every copy delivered
-- later is one of those xi (Progress.StopSent, StopInFlight). Then, lazy
-- or not, xd = 1 (the stop finished: Progress's StopFinished). Nothing is
-- written when the hash is gone (an expired broadcast is not resurrected).
-- Returns 1 when written, else 0.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('HMGET', KEYS[1], 'lz', 'cur', 't', 'q', 'xc', 'xd')
if v[1] == '1' and not v[5] then
  local total, queued = tonumber(v[3] or '0') or 0, tonumber(v[4] or '0') or 0
  if v[2] == '$' or queued >= total then
    redis.call('HSET', KEYS[1], 't', queued)
  else
    redis.call('HINCRBY', KEYS[1], 'c', total - queued)
  end
  redis.call('HSET', KEYS[1], 'xc', '1')
end
if not v[6] then
  local h = redis.call('HGETALL', KEYS[1])
  local n = {t = 0, q = 0, s = 0, c = 0}
  local failed = 0
  for i = 1, #h, 2 do
    local k, x = h[i], tonumber(h[i + 1]) or 0
    if n[k] then
      n[k] = x
    elseif string.sub(k, 1, 2) == 'f:' then
      failed = failed + x
    end
  end
  local total = n.t
  if v[1] == '1' and n.q > total then total = n.q end
  redis.call('HSET', KEYS[1], 'xs', n.s, 'xi', math.max(total - n.s - failed - n.c, 0))
end
redis.call('HSET', KEYS[1], 'xd', '1')
return 1
