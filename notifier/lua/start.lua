-- start.lua: begin a broadcast: create its progress hash and, for a lazy
-- broadcast, put it among the broadcasts to fill, in one atomic call, so
-- no failure between the two leaves a record that is never filled (a
-- repeat with the key would find it and start nothing). With an
-- idempotency key, only unless the key exists, recording the id under it.
--
-- KEYS[1]  progress hash        {T}:n:bc:<id>
-- KEYS[2]  idempotency key      {T}:n:once:bc:<key> (touched only with a key TTL above 0)
-- KEYS[3]  broadcasts to fill   {T}:n:bcs (sorted set: id -> its start, unix ms; written
--                               only with a score)
-- ARGV[1]  broadcast id
-- ARGV[2]  key TTL (ms; 0: no idempotency key)
-- ARGV[3]  progress TTL (ms)
-- ARGV[4]  its score among the broadcasts to fill (its start, unix ms; "": none, an
--          eager broadcast)
-- ARGV[5..]  progress field/value pairs
--
-- Returns the id already stored under the key, or "" when this call began
-- the broadcast.
--
-- A script's writes before an error stay (Valkey does not roll a script
-- back), so the write that can fail on its own (ZADD on a key of another
-- type) comes first: a call that fails writes nothing. (Out of memory
-- refuses a script's first write, so that one too.)
if ARGV[2] ~= '0' then
  local prev = redis.call('GET', KEYS[2])
  if prev then return prev end
end
if ARGV[4] ~= '' then
  redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
end
if ARGV[2] ~= '0' then
  redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
end
redis.call('HSET', KEYS[1], unpack(ARGV, 5))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return ''
