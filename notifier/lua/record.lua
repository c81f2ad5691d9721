-- record.lua: count one failed copy of a broadcast, once per job id (a
-- copy dead-lettered apart from its own settling, e.g. by a DeadLane sweep;
-- one dead-lettered by its claimer is counted by the settling script itself,
-- see lanes SettleTally, in the same seen set).
--
-- KEYS[1]  progress hash      {T}:n:bc:<id>
-- KEYS[2]  counted job ids    {T}:n:bc:<id>:seen
-- KEYS[3]  outstanding copies {T}:n:bc:<id>:out (a lazy broadcast's window)
-- ARGV[1]  field to increment (f:<reason>)
-- ARGV[2]  job id: counted once, and taken out of KEYS[3]
-- ARGV[3]  TTL (ms) of KEYS[1] and KEYS[2]
--
-- Returns 1 when counted. An expired (or unknown) broadcast is not
-- resurrected.
redis.call('ZREM', KEYS[3], ARGV[2])
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('HINCRBY', KEYS[1], ARGV[1], 1)
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
