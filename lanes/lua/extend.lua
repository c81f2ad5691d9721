-- extend.lua: renew a live lease (a slow send is still running).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  job id
-- ARGV[8]  lease token
-- ARGV[9]  new lease length from now (ms, server TIME)
-- The send logs holding the job's in-flight entries are kept alive at least
-- as long as the new lease plus the longest window.
-- Returns the new deadline (ms since the epoch, server clock), or -1 (stale
-- token) or -2 (no such job); nothing changes on an error.
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local id, tok = ARGV[7], ARGV[8]
local g, code = check_lease(q, id, tok)
if not g then return code end
local deadline = now_ms() + tonumber(ARGV[9])
redis.call('ZADD', q.p .. 'leases', 'XX', deadline, id)
lower_due(q, deadline) -- a shorter extension moves the deadline earlier
local ms = tonumber(ARGV[9])
local member = id .. ':' .. tok
if redis.call('ZSCORE', S .. 'rate', member) then touch(S .. 'rate', ms + logttl(q)) end
local pk = S .. 'pace:' .. g
if redis.call('ZSCORE', pk, member) then
  local ttl = logttl(q)
  local op = override_period(S, g)
  if op > ttl then ttl = op end
  touch(pk, ms + ttl)
end
return deadline
