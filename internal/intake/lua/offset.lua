-- offset.lua: advance the getUpdates offset past a batch that is already on
-- the update queue, fenced by the poller lease. Only this write confirms the
-- batch to Telegram (the next getUpdates sends the offset), so it runs
-- after the batch was enqueued.
--
-- KEYS[1]  poller lease      {T}:app:poller
-- KEYS[2]  offset            {T}:app:in:offset
-- KEYS[3]  re-base pending   {T}:app:in:rebasing
-- ARGV[1]  lease token
-- ARGV[2]  mode: "" (record: the offset only grows) or "rebase" (set it, even
--          lower, and end the pending re-base)
-- ARGV[3]  next offset (decimal: the batch's last update_id + 1)
--
-- Returns the stored offset (decimal string), or the error "LEASE ..."
-- (nothing written).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
local nxt = tonumber(ARGV[3])
if ARGV[2] == 'rebase' then
  redis.call('SET', KEYS[2], ARGV[3])
  redis.call('DEL', KEYS[3])
  return ARGV[3]
end
local off = tonumber(redis.call('GET', KEYS[2]) or '0')
if nxt > off then
  redis.call('SET', KEYS[2], ARGV[3])
  return ARGV[3]
end
return string.format('%d', off)
