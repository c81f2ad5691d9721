-- epoch.lua: pop a re-base marker from the inbox head, fenced by the poller
-- lease: every update after it is in the server's new update_id space, so
-- the handled mark starts afresh and the handler's epoch becomes the
-- marker's.
--
-- KEYS[1]  poller lease   {T}:app:poller
-- KEYS[2]  inbox          {T}:app:in:queue
-- KEYS[3]  handled mark   {T}:app:in:handled
-- KEYS[4]  handler epoch  {T}:app:in:epoch
-- ARGV[1]  lease token
-- ARGV[2]  the marker's epoch (decimal)
--
-- Returns 1 when the marker was the head and was popped, else 0 (nothing
-- written), or the error "LEASE ..." (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
if redis.call('LINDEX', KEYS[2], 0) ~= 'rebase\n' .. ARGV[2] then
  return 0
end
redis.call('LPOP', KEYS[2])
redis.call('SET', KEYS[3], '-1')
redis.call('SET', KEYS[4], ARGV[2])
return 1
