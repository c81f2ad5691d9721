-- beat.lua: record one process alive, with what it says of itself, and
-- forget the processes whose heartbeat expired.
-- KEYS[1]  the live set "{T}:app:procs" (process id -> expiry, ms, server clock)
-- KEYS[2]  the process's hash "{T}:app:proc:<id>"
-- ARGV[1]  process id
-- ARGV[2]  ttl (ms): the hash and the set entry expire this long after the beat
-- ARGV[3]  max: the live set holds at most this many processes (the
--          soonest to expire are dropped first)
-- ARGV[4..] field, value pairs of the hash (replacing the whole hash)
-- Returns the number of live processes.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local ttl, max = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('DEL', KEYS[2])
redis.call('HSET', KEYS[2], 'seen', now, unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[2], ttl)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
redis.call('ZADD', KEYS[1], now + ttl, ARGV[1])
local n = redis.call('ZCARD', KEYS[1])
if n > max then
  redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - max - 1)
  n = max
end
redis.call('PEXPIRE', KEYS[1], ttl)
return n
