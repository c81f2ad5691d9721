-- compose.lua: change one player's composition on a game board (the guess
-- a player is putting together by tapping), exactly once per update.
--
-- KEYS[1]  compositions of one game  {T}:app:comp:<chat_id>:<game id>
--          hash user_id -> JSON {"u": update_id, "e": inbox epoch,
--          "n": display name, "s": [palette index, ...]}; PEXPIRE ARGV[7]
--          on every change
--
-- ARGV[1]  user id (decimal)
-- ARGV[2]  update_id of the tap (decimal); a tap already applied (same
--          epoch ARGV[8] as the stored "e", update_id <= the stored "u")
--          changes nothing
-- ARGV[3]  op: "add" (append ARGV[4]) or "back" (remove the last)
-- ARGV[4]  palette index to append (op "add")
-- ARGV[5]  the player's display name
-- ARGV[6]  code length: the most symbols a composition holds
-- ARGV[7]  TTL of KEYS[1] in milliseconds
-- ARGV[8]  the intake's epoch of ARGV[2] (update ids start over in a new
--          epoch after the server's update_id sequence was reset)
--
-- Returns {code, user_id, value, user_id, value, ...} (every composition
-- of the game after the call, as HGETALL); code 1 = changed, 0 = this
-- update was applied already, -1 = full (op "add" with code length
-- symbols), -2 = empty (op "back" with nothing chosen).
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local c = {u = 0, e = 0, n = ARGV[5], s = {}}
if cur then c = cjson.decode(cur) end
local code = 1
if tonumber(c.e or 0) == tonumber(ARGV[8]) and tonumber(c.u) >= tonumber(ARGV[2]) then
  code = 0
elseif ARGV[3] == 'add' then
  if #c.s >= tonumber(ARGV[6]) then code = -1 else c.s[#c.s + 1] = tonumber(ARGV[4]) end
elseif ARGV[3] == 'back' then
  if #c.s == 0 then code = -2 else c.s[#c.s] = nil end
else
  return redis.error_reply('compose.lua: unknown op ' .. tostring(ARGV[3]))
end
if code == 1 then
  c.u = tonumber(ARGV[2])
  c.e = tonumber(ARGV[8])
  c.n = ARGV[5]
  -- cjson encodes an empty table as an object: keep "s" an array.
  local s = '[' .. table.concat(c.s, ',') .. ']'
  c.s = nil
  local v = cjson.encode(c)
  v = string.sub(v, 1, -2) .. ',"s":' .. s .. '}'
  redis.call('HSET', KEYS[1], ARGV[1], v)
  redis.call('PEXPIRE', KEYS[1], ARGV[7])
end
local out = {code}
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all do out[#out + 1] = all[i] end
return out
