-- floor.lua: publish a claimer's round-trip floor and read the store's: the
-- smallest floor any claimer published in the current or the previous epoch.
-- KEYS[1]  "{tag}:s:floor:" the prefix of the epoch sets "{tag}:s:floor:<e>",
--          e = server TIME (ms) // epoch; each a sorted set claimer -> floor (ms),
--          expiring at the end of epoch e + 1 (the last epoch that reads it)
-- ARGV[1]  claimer id
-- ARGV[2]  the claimer's floor (ms; 0 = none known: nothing is published)
-- ARGV[3]  epoch (ms)
-- Returns the smallest floor in the sets of epochs e and e - 1 (ms), the
-- claimer's own included; 0 when both are empty.
local E = num(ARGV[3])
local e = math.floor(now_ms() / E)
local cur = KEYS[1] .. int(e)
local f = num(ARGV[2])
if f > 0 then
  redis.call('ZADD', cur, f, ARGV[1])
  redis.call('PEXPIREAT', cur, int((e + 2) * E))
end
local lo = 0
for _, k in ipairs({cur, KEYS[1] .. int(e - 1)}) do
  local r = redis.call('ZRANGE', k, 0, 0, 'WITHSCORES')
  if r[2] then
    local v = num(r[2])
    if lo == 0 or v < lo then lo = v end
  end
end
return lo
