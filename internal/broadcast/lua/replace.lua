-- replace.lua: settle a preview still pending as replaced by a newer one
-- of its composer (latest.lua), so that no later Send, Cancel or console
-- confirmation of it starts anything (decide.lua answers it decided, state
-- r). A preview decided already (sent, cancelled, expired) is left as it is.
--
-- KEYS[1]  preview hash {T}:app:bcp:<id>
-- ARGV[1]  the id of the preview replacing it (field rp)
--
-- Returns 1 when it replaced it, else 0.
local st = redis.call('HGET', KEYS[1], 'st')
if st ~= 'p' then return 0 end
redis.call('HSET', KEYS[1], 'st', 'r', 'rp', ARGV[1])
return 1
