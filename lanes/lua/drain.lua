-- drain.lua: move a lane's pending jobs, in order, in bounded chunks: to the
-- dead-letter set (a chat that blocked the bot) or to another lane (a group
-- that migrated to a supergroup; the queue's glimit and the store-wide weight
-- and pace override move too once the old lane is empty: the weight and pace
-- are the group's in every queue, so the first queue's move carries them and
-- the others find nothing left to move).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  mode: "dead" | "move"
-- ARGV[8]  group (source lane)
-- ARGV[9]  reason (dead) or target group (move)
-- ARGV[10] max jobs to move in this call (the caller sends 1,000, so one
--          call's work and reply stay bounded)
-- ARGV[11] dead: the code each dead-lettered job that carries a dead tally
--          (lanes CountDead, its field y) is counted under, in this same
--          call (see common.lua stored_tally)
-- Returns {moved, remaining in the source lane, id of each job moved, in
-- order}: the caller knows exactly which jobs it dead-lettered or moved.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local mode, g, arg, n = ARGV[7], ARGV[8], ARGV[9], tonumber(ARGV[10])
local now = now_ms()
local heads = redis.call('ZPOPMIN', q.p .. 'lane:' .. g, n)
local moved = 0
local out = {0, 0} -- {moved, remaining, ids...}
for j = 1, #heads, 2 do
  local id = heads[j]
  out[#out + 1] = id
  if mode == 'dead' then
    to_dead(q, id, arg, now)
    stored_tally(q, id, ARGV[11])
  else
    redis.call('HSET', q.p .. 'job:' .. id, 'g', arg)
    to_lane(q, id, arg)
  end
  moved = moved + 1
end
if moved > 0 then add_pending(q, -moved) end
local remaining = redis.call('ZCARD', q.p .. 'lane:' .. g)
if remaining == 0 then redis.call('HDEL', q.p .. 'turn', g) end
if mode == 'move' then
  if remaining == 0 then
    for _, h in ipairs({q.p .. 'glimit', S .. 'weight', S .. 'pacecfg'}) do
      local v = redis.call('HGET', h, g)
      if v then
        redis.call('HSET', h, arg, v)
        redis.call('HDEL', h, g)
      end
    end
  end
  wake(S, ensure_ring(q, arg))
end
out[1], out[2] = moved, remaining
return out
