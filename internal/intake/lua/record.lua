-- record.lua: record a getUpdates batch in the inbox, fenced by the poller
-- lease, dropping updates already recorded; or, in "rebase" mode, follow a
-- server whose update_id sequence was reset below the stored offset.
--
-- KEYS[1]  poller lease   {T}:app:poller
-- KEYS[2]  offset         {T}:app:in:offset
-- KEYS[3]  inbox          {T}:app:in:queue
-- KEYS[4]  re-base count  {T}:app:in:rebases
-- ARGV[1]  lease token
-- ARGV[2]  mode: "" (record) or "rebase"
-- ARGV[2k+1], ARGV[2k+2]  update_id (decimal), update JSON; in update_id order
--
-- Record mode appends the updates with update_id >= the offset and moves
-- the offset past them. Rebase mode, valid only when every update of the
-- batch is below the offset (the server ignored it: its id space was
-- reset), increments the re-base count E, appends the marker "rebase\nE"
-- and then every update of the batch, and sets the offset past the batch:
-- the handler resets its handled mark when it pops the marker, so ids
-- lower than those handled before are not taken for duplicates.
--
-- Returns {recorded, next offset, E (0 in record mode)}, or the error
-- "LEASE ..." when the lease is not held by ARGV[1], or "NOREBASE ..." when
-- a rebase batch is not entirely below the offset (nothing written either
-- way).
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return redis.error_reply('LEASE poller lease not held')
end
local off = tonumber(redis.call('GET', KEYS[2]) or '0')
local added = 0
local epoch = 0
if ARGV[2] == 'rebase' then
  for i = 3, #ARGV, 2 do
    if tonumber(ARGV[i]) >= off then
      return redis.error_reply('NOREBASE update ' .. ARGV[i] .. ' is not below the offset')
    end
  end
  epoch = redis.call('INCR', KEYS[4])
  redis.call('RPUSH', KEYS[3], 'rebase\n' .. epoch)
  for i = 3, #ARGV, 2 do
    redis.call('RPUSH', KEYS[3], ARGV[i] .. '\n' .. ARGV[i + 1])
    off = tonumber(ARGV[i]) + 1
    added = added + 1
  end
else
  for i = 3, #ARGV, 2 do
    local id = tonumber(ARGV[i])
    if id >= off then
      redis.call('RPUSH', KEYS[3], ARGV[i] .. '\n' .. ARGV[i + 1])
      off = id + 1
      added = added + 1
    end
  end
end
redis.call('SET', KEYS[2], string.format('%d', off))
return {added, string.format('%d', off), epoch}
