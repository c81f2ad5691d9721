-- acklost.lua: a job's work was done (a message delivered) under a lease
-- that has since been lost (expired and reclaimed, recovered from a
-- claimer found dead, taken by another claimer): settle what is known.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  job id
-- ARGV[8]  the lost lease's token (the claim count handed out with the job)
-- ARGV[9]  the claimer's round-trip floor for the job's send (ms, 0 = none),
--          used only when the lease turns out live (then as ack.lua)
-- ARGV[10..] the caller's tally (see common.lua apply_tally; keys from
--          KEYS[2]): no key of it holds a newline, nor does a field
-- By the job's state, in this one atomic call:
--   its lease is live after all (the token is the job's, in the lease
--     set): acked exactly as ack.lua acks it. "acked".
--   its payload was replaced (Coalesce, field w: the claim count when it
--     was replaced, >= the token) since the lease's claim: the work done
--     was an older payload's; nothing changes, the new one goes out.
--     "replaced".
--   already marked delivered (field v) by an earlier call: nothing more.
--     "known".
--   held under another lease (in the lease set with a newer token): its
--     holder keeps it, marked delivered (field v, the tally as
--     "<ttl ms>\n<hash>\n<once set>\n<untrack set>[\n<field>]...", a key
--     "" for none): an ack of that lease settles it as usual, counted by
--     that ack's own tally; any other end of it (release, nack, postpone,
--     dead, an expiry or a dead claimer's recovered lease: settle.lua,
--     claim.lua) drops it, never queued again nor dead-lettered, and
--     counts it in the tally stored here (as sent: never as cancelled,
--     failed or dead). "marked".
--   a dead letter (an expired lease past MaxAttempts, counted in its dead
--     tally then): left as it is. "dead".
--   waiting again (on its lane, or in the delayed set of an unordered
--     queue): taken off and deleted, as its lost lease's ack would have
--     (that lease already ended: its in-flight count and send logs were
--     settled by whatever ended it), the queue's pending count adjusted,
--     counted in the tally now. A lane this empties keeps its place in the
--     ring until a claim visits it (as after Cancel). "waiting".
-- Returns {1, outcome} as above, or {-2} (no such job: settled elsewhere,
-- nothing changed; also a job in none of the states above).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local id, tok = ARGV[7], ARGV[8]
local code, joined = ack_job(S, q, id, tok, now_ms(), false, num(ARGV[9]))
if code == 1 then
  apply_tally(id, 10, 2)
  wake(S, joined)
  return {1, 'acked'}
end
if code == -2 then return {-2} end
local jk = q.p .. 'job:' .. id
local v = redis.call('HMGET', jk, 'g', 'v', 'w')
local g = v[1]
if v[3] and num(v[3]) >= num(tok) then return {1, 'replaced'} end
if v[2] then return {1, 'known'} end
if redis.call('ZSCORE', q.p .. 'leases', id) then
  local k, keys = 2, {'', '', ''}
  for j = 0, 2 do
    if ARGV[10 + j] == '1' then
      keys[j + 1] = KEYS[k]
      k = k + 1
    end
  end
  local mark = {ARGV[13], keys[1], keys[2], keys[3]}
  for j = 14, #ARGV do mark[#mark + 1] = ARGV[j] end
  redis.call('HSET', jk, 'v', table.concat(mark, '\n'))
  return {1, 'marked'}
end
if redis.call('ZSCORE', q.p .. 'dead', id) then return {1, 'dead'} end
local lane = q.p .. 'lane:' .. g
if redis.call('ZREM', lane, id) == 1 then
  add_pending(q, -1)
  if redis.call('EXISTS', lane) == 0 then redis.call('HDEL', q.p .. 'turn', g) end
elseif redis.call('ZREM', q.p .. 'delayed', id) == 1 then
  tidy_due(q)
else
  return {-2}
end
redis.call('DEL', jk)
apply_tally(id, 10, 2)
return {1, 'waiting'}
