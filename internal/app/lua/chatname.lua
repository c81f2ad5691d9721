-- chatname.lua: record how a chat is named (its title, or a user's name and
-- @username) for the console's chat search, writing only when it changed.
--
-- KEYS[1]  hash {T}:app:chatname: <chat id> -> the name as shown, then
--          \31, then its search members joined by \30 (one field a chat:
--          a second field per chat cost a hash entry, about 70 bytes);
--          a field written before that format holds the name alone, its
--          members in the field <chat id>:i (deleted on the next change)
-- KEYS[2]  sorted set {T}:app:chatidx (all scores 0, searched by lex
--          prefix): "<lowercased name>\0<chat id>" per name of a chat
-- ARGV[1]  chat id (decimal)
-- ARGV[2]  the name as shown, e.g. "Ann Lee (@ann)" (no \31 in it)
-- ARGV[3..] the chat's search members (lowercased names \0 chat id)
--
-- Returns 1 when the name changed (written), 0 when it was already so.
local id = ARGV[1]
local members = {}
for i = 3, #ARGV do members[#members + 1] = ARGV[i] end
local value = ARGV[2] .. '\31' .. table.concat(members, '\30')
local cur = redis.call('HGET', KEYS[1], id)
if cur == value then
  return 0
end
local old
if cur then
  local sep = string.find(cur, '\31', 1, true)
  if sep then
    old = string.sub(cur, sep + 1)
  else -- the format before: the members in their own field
    old = redis.call('HGET', KEYS[1], id .. ':i')
    redis.call('HDEL', KEYS[1], id .. ':i')
  end
end
if old then
  for m in string.gmatch(old, '[^\30]+') do
    redis.call('ZREM', KEYS[2], m)
  end
end
for i = 1, #members do
  redis.call('ZADD', KEYS[2], 0, members[i])
end
redis.call('HSET', KEYS[1], id, value)
return 1
