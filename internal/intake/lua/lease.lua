-- lease.lua: renew or release the poller lease, only by its holder.
--
-- KEYS[1]  poller lease   {T}:app:poller
-- ARGV[1]  lease token
-- ARGV[2]  "renew" or "release"
-- ARGV[3]  lease length in milliseconds (renew)
--
-- Returns 1 when the token held the lease (renewed or released), else 0.
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == 'release' then
  redis.call('DEL', KEYS[1])
else
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
end
return 1
