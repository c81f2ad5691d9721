-- halt.lua: halt or resume the paid queue for a broadcast whose paid part
-- the bot cannot pay for.
--
-- KEYS[1]  halt key           {T}:n:paidhalt
-- KEYS[2]  progress hash      {T}:n:bc:<id>
-- ARGV[1]  "halt" or "clear"
-- ARGV[2]  broadcast id
-- ARGV[3]  TTL (ms) of the halt key
--
-- halt: the halt key names the broadcast (a later halt replaces it) and the
-- progress hash, when it exists, gets h = 1 (an expired broadcast is not
-- resurrected); nothing is written for a stopped broadcast (field x, set by
-- StopBroadcast before it clears the halt: a copy that was in flight at
-- the stop and answered "cannot pay" after it would halt the paid queue
-- with nobody left to lift it). clear: the halt key is deleted only when
-- it names this broadcast (another broadcast's halt stays). Returns 1 when
-- the key was set or deleted, else 0.
if ARGV[1] == 'halt' then
  if redis.call('HGET', KEYS[2], 'x') then return 0 end
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
  if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('HSET', KEYS[2], 'h', '1') end
  return 1
end
if redis.call('GET', KEYS[1]) == ARGV[2] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
