-- movechats.lua: move chats from the one audience set kept before the
-- buckets into their buckets (Audience.Migrate, one bounded step).
--
-- KEYS[1]    old audience  {T}:app:chats       set of decimal chat ids
-- KEYS[1+i]  chat i's bucket {T}:app:chats:<b>
-- ARGV[i]    chat i (a member of KEYS[1])
--
-- Returns how many chats were moved (one no longer in KEYS[1] is none).
local n = 0
for i = 1, #ARGV do
  if redis.call('SREM', KEYS[1], ARGV[i]) == 1 then
    redis.call('SADD', KEYS[1 + i], ARGV[i])
    n = n + 1
  end
end
return n
