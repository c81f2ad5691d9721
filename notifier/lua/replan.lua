-- replan.lua: write a lazy broadcast's new estimate of its total and its
-- spread's pace, made from the audience left after its cursor, unless the
-- broadcast moved on meanwhile.
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
-- ARGV[1]  the cursor the estimate was made at (field cur)
-- ARGV[2]  total: the copies queued at that cursor plus those still to make (field t)
-- ARGV[3]  now, unix ms (field rp: when it was replanned)
-- ARGV[4]  the spread's pace from now, copies/s (field rt); "" leaves the
--          pace as it is, "-" removes it (the spread's end has passed: the
--          budget's pace)
-- ARGV[5]  the copies the pace before made due by now (field rb, decimal:
--          the new pace counts on from them, at rf = ARGV[3])
--
-- Nothing is written when the broadcast is gone, stopped (field x), its
-- stop's counts settled (xc) or its cursor is no longer ARGV[1] (a step
-- was taken: the copies queued changed with it). Returns 1 when written.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local v = redis.call('HMGET', KEYS[1], 'cur', 'x', 'xc')
if (v[1] or '') ~= ARGV[1] or v[2] or v[3] then return 0 end
redis.call('HSET', KEYS[1], 't', ARGV[2], 'rp', ARGV[3])
if ARGV[4] == '-' then
  redis.call('HDEL', KEYS[1], 'rt', 'rf', 'rb')
elseif ARGV[4] ~= '' then
  redis.call('HSET', KEYS[1], 'rt', ARGV[4], 'rf', ARGV[3], 'rb', ARGV[5])
end
return 1
