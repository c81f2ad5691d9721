-- record.lua: count one outcome of a broadcast job, once per job id when
-- one is given (a dead-lettered job may be reported twice: by the worker
-- holding its lease and by a DeadLane sweep).
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
-- KEYS[2]  counted job ids    {T}:n:bc:<id>:seen
-- ARGV[1]  field to increment (s, or f:<reason>)
-- ARGV[2]  job id, or "" (no dedupe)
-- ARGV[3]  TTL (ms) of both keys
-- ARGV[4]  optional second field to increment with it ("" or absent: none;
--          ps for a paid copy sent)
--
-- Returns 1 when counted. An expired (or unknown) broadcast is not
-- resurrected.
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then
  if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if ARGV[4] and ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
