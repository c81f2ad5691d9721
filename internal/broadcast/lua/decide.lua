-- decide.lua: settle a broadcast preview once, Send or Cancel: the first
-- decision wins, so a double tap, or the same tap delivered twice, starts at
-- most one broadcast.
--
-- KEYS[1]  preview hash {T}:app:bcp:<id> (st: p pending, s sent, c
--          cancelled, x expired; at: created, ms on the app's clock)
-- ARGV[1]  decision: "s" (send) or "c" (cancel)
-- ARGV[2]  now, ms on the app's clock
-- ARGV[3]  how long a preview can be decided (ms)
--
-- Returns {outcome, state}: outcome "ok" (this call decided: state is
-- ARGV[1]), "decided" (decided before: state s, c or x), "expired" (too
-- late: state set to x), "unknown" (no such preview).
local st = redis.call('HGET', KEYS[1], 'st')
if not st then return {'unknown', ''} end
if st ~= 'p' then return {'decided', st} end
local at = tonumber(redis.call('HGET', KEYS[1], 'at') or '0')
if tonumber(ARGV[2]) - at > tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'st', 'x')
  return {'expired', 'x'}
end
redis.call('HSET', KEYS[1], 'st', ARGV[1])
return {'ok', ARGV[1]}
