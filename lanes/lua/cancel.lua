-- cancel.lua: remove waiting jobs by id (e.g. the copies of a fan-out that is
-- called off), in one atomic call per chunk of ids.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring" (declared for cluster
--          routing; not modified)
-- KEYS[2]  optional tally hash (a key under the store's tag, owned by the
--          caller): its field ARGV[7] is incremented by the number of jobs
--          cancelled, in this same atomic call (the hash created, by 0 if
--          need be, when a job in flight was marked: see below)
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  tally field ("" without KEYS[2])
-- ARGV[8..] job ids
-- A job waiting on its lane ("ZREM lane:<g> id") or, on an unordered queue,
-- in the delayed set is cancelled: removed there and its hash deleted; the
-- queue's pending count drops by the lane jobs removed. A lane this empties
-- keeps its place in the ring until a claim visits it (it then leaves in
-- O(1), as after a DeadLane), and the rest of its turn is dropped. A job in
-- flight (its lease is in the lease set) stays with its claimer but is
-- marked cancelled: its hash gets the field x, "<KEYS[2]>\n<ARGV[7]>" (""
-- without a tally; HSETNX: a second cancel keeps the first mark). An ack
-- of it settles it as delivered (it was sent; this tally does not count
-- it); any other end of its lease (release, nack, postpone, dead, an
-- expired or a dead claimer's recovered lease: settle.lua, claim.lua)
-- drops it, never queued again nor dead-lettered, and counts it in this
-- tally then, while the tally hash exists. A dead letter, a job marked
-- delivered (field v, acklost.lua: its work was done under an earlier
-- lease, it is counted in that mark's tally however its lease ends, never
-- as cancelled), or an id with no job (acked, purged, never enqueued), is
-- left as it is.
-- Cost: O(ids x log n).
-- Returns {cancelled, in flight (now marked), gone (dead-lettered or no
-- such job)}.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local cancelled, inflight, gone, from_lanes = 0, 0, 0, 0
local mark = KEYS[2] and (KEYS[2] .. '\n' .. ARGV[7]) or ''
for i = 8, #ARGV do
  local id = ARGV[i]
  local jk = q.p .. 'job:' .. id
  local v = redis.call('HMGET', jk, 'g', 'v')
  local g = v[1]
  local removed = false
  if g and v[2] then
    g = nil -- known delivered (acklost.lua): its fate is settled, gone
  elseif g then
    local lane = q.p .. 'lane:' .. g
    if redis.call('ZREM', lane, id) == 1 then
      removed = true
      from_lanes = from_lanes + 1
      if redis.call('EXISTS', lane) == 0 then redis.call('HDEL', q.p .. 'turn', g) end
    elseif redis.call('ZREM', q.p .. 'delayed', id) == 1 then
      removed = true
    end
  end
  if removed then
    redis.call('DEL', jk)
    cancelled = cancelled + 1
  elseif g and redis.call('ZSCORE', q.p .. 'leases', id) then
    redis.call('HSETNX', jk, 'x', mark)
    inflight = inflight + 1
  else
    gone = gone + 1
  end
end
if from_lanes > 0 then add_pending(q, -from_lanes) end
-- (With a job marked, also by 0: the tally exists for its later drop.)
if KEYS[2] and (cancelled > 0 or inflight > 0) then redis.call('HINCRBY', KEYS[2], ARGV[7], cancelled) end
return {cancelled, inflight, gone}
