-- health.lua: the /healthz probe: proves Valkey answers, runs Lua and
-- accepts writes (under maxmemory with noeviction, a write answers "OOM
-- command not allowed when used memory > 'maxmemory'.", and this script
-- fails the same way, writing nothing).
--
-- KEYS[1]  probe key      {T}:app:health
-- ARGV[1]  expiry of the probe key, milliseconds
--
-- Returns 1.
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return 1
