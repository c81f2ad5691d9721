-- movemarks.lua: move lanes' handled marks from the one hash the intake kept
-- before the buckets into their buckets (Inbox.MigrateMarks, one bounded
-- step), keeping the higher mark where a bucket has one already (done.lua
-- may have written it since), so a mark never goes down.
--
-- KEYS[1]    old marks  {T}:app:in:done      hash lane -> "<epoch>:<update_id>"
-- KEYS[1+i]  lane i's bucket {T}:app:in:done:<b>
-- ARGV[i]    lane i (a field of KEYS[1])
--
-- Returns how many marks were moved (a lane no longer in KEYS[1] is none).
local function mark(v)
  if not v then return nil end
  local e, id = string.match(v, '^(%d+):(%d+)$')
  if not e then return nil end
  return tonumber(e), tonumber(id)
end
local n = 0
for i = 1, #ARGV do
  local lane = ARGV[i]
  local old = redis.call('HGET', KEYS[1], lane)
  if old then
    local oe, oid = mark(old)
    local ce, cid = mark(redis.call('HGET', KEYS[1 + i], lane))
    if oe and (not ce or oe > ce or (oe == ce and oid > cid)) then
      redis.call('HSET', KEYS[1 + i], lane, old)
    end
    redis.call('HDEL', KEYS[1], lane)
    n = n + 1
  end
end
return n
