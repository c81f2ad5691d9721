-- latest.lua: make a preview its composer's latest and return the one it
-- displaces, to be replaced (replace.lua): a new /broadcast or console
-- composition by the same composer leaves one preview to confirm. The same
-- command handled again (a crash before its update was acknowledged: the
-- same origin) moves nothing, so the preview first shown stays the latest.
--
-- KEYS[1]  the composer's latest preview {T}:app:bcl:<composer>, a string
--          "<preview id>|<origin>"
-- ARGV[1]  the new preview's id
-- ARGV[2]  its origin (the command's key; "" for one that is never handled
--          again, such as a console composition)
-- ARGV[3]  how long the record is kept (ms)
--
-- Returns the id of the preview displaced ("" for none, or the same
-- command handled again).
local cur = redis.call('GET', KEYS[1])
local old = ''
if cur then
  local sep = string.find(cur, '|', 1, true)
  if sep then
    old = string.sub(cur, 1, sep - 1)
    local origin = string.sub(cur, sep + 1)
    if ARGV[2] ~= '' and origin == ARGV[2] then return '' end
  end
end
redis.call('SET', KEYS[1], ARGV[1] .. '|' .. ARGV[2], 'PX', ARGV[3])
if old == ARGV[1] then return '' end
return old
