-- record.lua: count one outcome of a broadcast job, once per job id when
-- one is given (a dead-lettered job may be reported twice: by the worker
-- holding its lease and by a DeadLane sweep).
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
-- KEYS[2]  counted job ids    {T}:n:bc:<id>:seen
-- KEYS[3]  outstanding copies {T}:n:bc:<id>:out (a lazy broadcast's window)
-- ARGV[1]  field to increment (s, or f:<reason>)
-- ARGV[2]  job id, or "" (no dedupe)
-- ARGV[3]  TTL (ms) of both keys
-- ARGV[4]  second field to increment with it ("": none; ps for a paid
--          copy sent)
-- ARGV[5]  the job id to take out of KEYS[3] ("": none): the copy settled
--
-- Returns 1 when counted. An expired (or unknown) broadcast is not
-- resurrected.
if ARGV[5] ~= '' then redis.call('ZREM', KEYS[3], ARGV[5]) end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[2] ~= '' then
  if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
if ARGV[4] ~= '' then redis.call('HINCRBY', KEYS[1], ARGV[4], 1) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
