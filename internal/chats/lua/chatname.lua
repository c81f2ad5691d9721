-- chatname.lua: record how a chat is named (its title, or a user's name and
-- @username) for the console's chat search, writing only when it changed,
-- and move the chat's entry kept before the buckets, if any (its old
-- search members dropped: the new ones replace them).
--
-- KEYS[1]  hash {T}:app:chatname:<b> (the chat's bucket): <chat id> -> the
--          name as shown (at most 64 bytes: a listpack entry)
-- KEYS[2]  sorted set {T}:app:chatidx:<b> (the chat's bucket; all scores
--          0, searched by lex prefix): "<search key>\0<chat id>" per name
--          of a chat
-- KEYS[3]  hash {T}:app:chatname, as kept before the buckets: <chat id> ->
--          the name as shown, \31, its search members joined by \30 (or,
--          in the format before that, the name alone and its members in
--          the field <chat id>:i)
-- KEYS[4]  sorted set {T}:app:chatidx, as kept before the buckets
-- ARGV[1]  chat id (decimal)
-- ARGV[2]  the name as shown, e.g. "Ann Lee (@ann)"
-- ARGV[3..] the chat's search members (search key \0 chat id)
-- ARGV[3]  when it is "\1" (no member is): move the chat's entry kept
--          before the buckets, the name and members being ARGV[4..]
--          (written only when the bucket has no name of the chat yet)
--
-- Returns 1 when the name changed (written), 0 when it was already so.
local id = ARGV[1]
local first, migrating = 3, false
if ARGV[3] == '\1' then first, migrating = 4, true end
local members = {}
for i = first, #ARGV do members[#members + 1] = ARGV[i] end
local changed = 0
-- The entry of before the buckets: its members go from the old index.
local old = redis.call('HGET', KEYS[3], id)
if old then
  local sep = string.find(old, '\31', 1, true)
  local ms
  if sep then
    ms = string.sub(old, sep + 1)
  else
    ms = redis.call('HGET', KEYS[3], id .. ':i')
  end
  if ms then
    for m in string.gmatch(ms, '[^\30]+') do redis.call('ZREM', KEYS[4], m) end
  end
  redis.call('HDEL', KEYS[3], id, id .. ':i')
end
local cur = redis.call('HGET', KEYS[1], id)
if migrating and cur then return 0 end -- recorded since: newer than the old entry
if cur == ARGV[2] then return 0 end
if cur then -- the old name's members: this chat's in its index bucket
  local suffix = '\0' .. id
  for _, m in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do
    if string.sub(m, -#suffix) == suffix then redis.call('ZREM', KEYS[2], m) end
  end
end
for i = 1, #members do
  redis.call('ZADD', KEYS[2], 0, members[i])
end
redis.call('HSET', KEYS[1], id, ARGV[2])
return 1
