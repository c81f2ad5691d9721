-- rebase.lua: begin a re-base, fenced by the poller lease: the server's
-- update_id sequence was reset below the stored offset, so the updates that
-- follow belong to a new epoch E (their job ids sort after every earlier
-- epoch's, and the per-lane handled marks compare epochs first). A re-base
-- begun and not ended (a crash between enqueueing the batch and offset.lua's
-- "rebase" mode) is resumed with the same E, so the batch is not enqueued
-- twice under two epochs.
--
-- KEYS[1]  poller lease      {T}:app:poller
-- KEYS[2]  offset            {T}:app:in:offset
-- KEYS[3]  re-base count     {T}:app:in:rebases
-- KEYS[4]  re-base pending   {T}:app:in:rebasing
-- ARGV[1]  lease token
-- ARGV[2..] the batch's update_ids (decimal)
--
-- Returns E, or the error "LEASE ..." or "NOREBASE ..." when an update of
-- the batch is not below the offset (nothing written either way).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
local off = tonumber(redis.call('GET', KEYS[2]) or '0')
for i = 2, #ARGV do
  if tonumber(ARGV[i]) >= off then
    return redis.error_reply('NOREBASE update ' .. ARGV[i] .. ' is not below the offset')
  end
end
local pending = redis.call('GET', KEYS[4])
if pending then return tonumber(pending) end
local e = redis.call('INCR', KEYS[3])
redis.call('SET', KEYS[4], e)
return e
