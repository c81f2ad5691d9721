-- chatname.lua: record how a chat is named (its title, or a user's name and
-- @username) for the console's chat search, writing only when it changed.
--
-- KEYS[1]  hash {T}:app:chatname: <chat id> -> the name as shown;
--          <chat id>:i -> its search members, joined by \30
-- KEYS[2]  sorted set {T}:app:chatidx (all scores 0, searched by lex
--          prefix): "<lowercased name>\0<chat id>" per name of a chat
-- ARGV[1]  chat id (decimal)
-- ARGV[2]  the name as shown, e.g. "Ann Lee (@ann)"
-- ARGV[3..] the chat's search members (lowercased names \0 chat id)
--
-- Returns 1 when the name changed (written), 0 when it was already so.
local id = ARGV[1]
if redis.call('HGET', KEYS[1], id) == ARGV[2] then
  return 0
end
local old = redis.call('HGET', KEYS[1], id .. ':i')
if old then
  for m in string.gmatch(old, '[^\30]+') do
    redis.call('ZREM', KEYS[2], m)
  end
end
local members = {}
for i = 3, #ARGV do
  members[#members + 1] = ARGV[i]
  redis.call('ZADD', KEYS[2], 0, ARGV[i])
end
redis.call('HSET', KEYS[1], id, ARGV[2], id .. ':i', table.concat(members, '\30'))
return 1
