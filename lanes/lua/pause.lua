-- pause.lua: pause or resume every queue of the store (a global flood signal).
-- KEYS[1]  "{tag}:s:pause"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2]  duration (ms from server TIME; -1 = until resumed; 0 = resume now)
-- ARGV[3]  why (the key's value, read back by Inspector.Paused: "401 unauthorized", "429 from several chats")
-- A pause is only ever extended by a later pause, never shortened (use 0 to resume); the pause that
-- extends it writes its why, one that does not leaves the current why.
-- Returns the remaining pause (ms), -1 for an indefinite pause, 0 when resumed.
-- ARGV[4]  the store's longest budget window (ms)
-- A timed pause that extends the current one also sets "{tag}:s:pauseend" to when it ends (server
-- ms), kept for ARGV[4] ms past it, so learn.lua judges a budget by its sends since then; an
-- indefinite pause and a resume delete it (the whole window is judged).
local S = ARGV[1]
local ms = tonumber(ARGV[2])
if ms == 0 then
  redis.call('DEL', KEYS[1], S .. 'pauseend')
  wake(S, 1)
  return 0
end
local why = ARGV[3]
if ms < 0 then
  redis.call('SET', KEYS[1], why)
  redis.call('DEL', S .. 'pauseend')
  return -1
end
local cur = redis.call('PTTL', KEYS[1])
if cur == -1 then return -1 end
if cur < ms then
  redis.call('SET', KEYS[1], why, 'PX', ms)
  redis.call('SET', S .. 'pauseend', int(now_ms() + ms), 'PX', int(ms + tonumber(ARGV[4])))
end
return redis.call('PTTL', KEYS[1])
