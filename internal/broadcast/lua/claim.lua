-- claim.lua: let one confirmation at a time start a composed preview's
-- broadcast (Service.StartComposed), so a double submit starts it, and
-- audits it, once; a confirmation after a failed one (claim released) or
-- a crashed one (lease over) takes over and completes it.
--
-- KEYS[1]  preview hash {T}:app:bcp:<id> (st s: decided as sent; bc: the
--          broadcast id once started; cl: the claim, ms on the app's clock)
-- ARGV[1]  now, ms on the app's clock
-- ARGV[2]  the claim's lease (ms)
--
-- Returns {outcome, broadcast}: "ok" (claimed by this call), "sent" (bc
-- is set: broadcast is it), "busy" (claimed by another within the lease,
-- or not decided as sent).
local h = redis.call('HMGET', KEYS[1], 'st', 'bc', 'cl')
if h[2] then return {'sent', h[2]} end
if h[1] ~= 's' then return {'busy', ''} end
local now = tonumber(ARGV[1])
if h[3] and now - tonumber(h[3]) < tonumber(ARGV[2]) then return {'busy', ''} end
redis.call('HSET', KEYS[1], 'cl', ARGV[1])
return {'ok', ''}
