-- record.lua: record a getUpdates batch in the inbox, fenced by the poller
-- lease, dropping updates already recorded.
--
-- KEYS[1]  poller lease   {T}:app:poller
-- KEYS[2]  offset         {T}:app:in:offset
-- KEYS[3]  inbox          {T}:app:in:queue
-- ARGV[1]  lease token
-- ARGV[2k], ARGV[2k+1]  update_id (decimal), update JSON; in update_id order
--
-- Returns {recorded, next offset}, or the error "LEASE ..." when the lease
-- is not held by ARGV[1] (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
local off = tonumber(redis.call('GET', KEYS[2]) or '0')
local added = 0
for i = 2, #ARGV, 2 do
  local id = tonumber(ARGV[i])
  if id >= off then
    redis.call('RPUSH', KEYS[3], ARGV[i] .. '\n' .. ARGV[i + 1])
    off = id + 1
    added = added + 1
  end
end
redis.call('SET', KEYS[2], string.format('%d', off))
return {added, string.format('%d', off)}
