-- extend.lua: renew a live lease (a slow send is still running).
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..5] queue config (see common.lua)
-- ARGV[6]  job id
-- ARGV[7]  lease token
-- ARGV[8]  new lease length from now (ms, server TIME)
-- Returns the new deadline (ms since the epoch, server clock), or -1 (stale
-- token) or -2 (no such job); nothing changes on an error.
local q = read_queue(ARGV, 2)
local id, tok = ARGV[6], ARGV[7]
local g, code = check_lease(q, id, tok)
if not g then return code end
local deadline = now_ms() + tonumber(ARGV[8])
redis.call('ZADD', q.p .. 'leases', 'XX', deadline, id)
return deadline
