-- ping.lua: /healthz's probe; a script call proves Valkey answers and
-- runs Lua.
--
-- No KEYS, no ARGV. Returns 1.
return 1
