-- movefloors.lua: move lanes' floors from the one hash the intake kept
-- before the floor lived in the finished set into their lanes' sets
-- (Inbox.MigrateFloors, one bounded step). A floor only counts while its
-- lane's set exists: a lane whose set is there gets the higher of the two
-- floors as the set's floor member (score 1, "f" .. padded member, as
-- done.lua writes it); a lane whose set expired needs none (every update
-- at or below its handled mark is then finished) and its field is dropped.
--
-- KEYS[1]    old floors  {T}:app:in:floor      hash lane -> padded member
-- KEYS[1+i]  lane i's finished set {T}:app:in:seen:<lane>
-- ARGV[i]    lane i (a field of KEYS[1])
--
-- Returns how many fields were moved or dropped (a lane no longer in
-- KEYS[1] is none).
local n = 0
for i = 1, #ARGV do
  local lane, seen = ARGV[i], KEYS[1 + i]
  local old = redis.call('HGET', KEYS[1], lane)
  if old then
    if redis.call('EXISTS', seen) == 1 then
      local f = redis.call('ZRANGE', seen, 1, 1, 'BYSCORE')
      local fl = f[1] and string.sub(f[1], 2)
      if not fl or fl < old then
        if fl then redis.call('ZREM', seen, f[1]) end
        redis.call('ZADD', seen, 1, 'f' .. old)
      end
    end
    redis.call('HDEL', KEYS[1], lane)
    n = n + 1
  end
end
return n
