-- start.lua: begin a broadcast with an idempotency key: unless the key
-- exists, record the broadcast id under it and create the progress hash,
-- atomically.
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
-- KEYS[2]  idempotency key    {T}:n:once:bc:<key>
-- ARGV[1]  broadcast id
-- ARGV[2]  key TTL (ms)
-- ARGV[3]  progress TTL (ms)
-- ARGV[4..]  progress field/value pairs
--
-- Returns the id already stored under the key, or "" when this call
-- recorded it.
local prev = redis.call('GET', KEYS[2])
if prev then return prev end
redis.call('SET', KEYS[2], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return ''
