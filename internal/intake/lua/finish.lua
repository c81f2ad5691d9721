-- finish.lua: mark an update handled, fenced by the poller lease: pop it
-- from the inbox head, raise the handled mark, drop its journal.
--
-- KEYS[1]  poller lease   {T}:app:poller
-- KEYS[2]  inbox          {T}:app:in:queue
-- KEYS[3]  handled mark   {T}:app:in:handled
-- KEYS[4]  journal        {T}:app:j:<update_id>
-- ARGV[1]  lease token
-- ARGV[2]  update_id (decimal)
--
-- Returns 1 when the head was popped, 0 when the head was another update
-- (nothing popped), or the error "LEASE ..." (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
local popped = 0
local head = redis.call('LINDEX', KEYS[2], 0)
if head and string.sub(head, 1, #ARGV[2] + 1) == ARGV[2] .. '\n' then
  redis.call('LPOP', KEYS[2])
  popped = 1
end
local h = tonumber(redis.call('GET', KEYS[3]) or '-1')
if tonumber(ARGV[2]) > h then
  redis.call('SET', KEYS[3], ARGV[2])
end
redis.call('DEL', KEYS[4])
return popped
