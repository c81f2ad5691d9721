-- acks.lua: several delivered jobs acked at once, each exactly as ack.lua
-- acks one (its lease ended, its send counted in its budgets from its latest
-- possible arrival, the job deleted, its tally kept when it lands), with
-- what they share done once per call instead of once per ack: the server's
-- TIME, the expiry of the send logs several acks settle in (a budget's
-- "<queue prefix>rate" and "{tag}:s:rate"; a lane's pace log is touched at
-- its ack), whether any lane has a pace override ("{tag}:s:pacecfg", read
-- once), the budget's wake-up (DEL "{tag}:s:budgetwait", see common.lua
-- end_lease), each queue's due time (tidied once per queue acked), the
-- claimers' wake-up, and a tally's hash existence, increments (one
-- HINCRBY per hash and field, by the count of its acks), untracking (one
-- ZREM per set) and expiries.
-- KEYS[1]  the first acked queue's ring "{tag}:q:<queue>:ring" (routing)
-- KEYS[2..] the acks' tally keys, in the order of the acks and, within an
--          ack, hash, once set, untrack set (each only when the ack has it)
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2]  the number N of queues, then N queue configs (5 fields each, see
--          common.lua)
-- then the number A of acks, then for each: queue index (1..N), job id,
--          lease token, the claimer's round-trip floor for its send (ms,
--          0 = none; see common.lua arrival), then its tally: "1" when it
--          has a hash (the next key), "1" when a once set (the next key),
--          "1" when an untrack set (the next key) (else ""), the TTL (ms,
--          0 = none) the hash and the once set are renewed to, the number
--          F of fields, then F hash fields, each incremented by 1 (see
--          common.lua count_in)
-- Returns A codes, in order: 1 acked, -1 stale token, -2 no such job
-- (nothing changed for that ack).
local S = ARGV[1]
local nq = count(ARGV[2])
local queues, i = {}, 3
for n = 1, nq do queues[n], i = read_queue(ARGV, i) end
local nacks = count(ARGV[i])
i = i + 1
local now = now_ms()
local batch = {touch = {}, exists = {}, expire = {}, incr = {}, untrack = {}}

-- An ack's tally, as count_in keeps it (see common.lua), with the hash's
-- existence read once per call, and its increments, untracking and
-- expiries done once at the end (tally_all: each field by its count, the
-- last ack's TTL for a key, as count_in called in turn would leave them;
-- no ack reads them).
local function tally(batch, id, h, fields, once, untrack, ttl)
  if untrack then
    local u = batch.untrack[untrack]
    if not u then
      u = {}
      batch.untrack[untrack] = u
    end
    u[#u + 1] = id
  end
  if not h then return end
  local e = batch.exists[h]
  if e == nil then
    e = redis.call('EXISTS', h) == 1
    batch.exists[h] = e
  end
  if not e then return end
  if once then
    if redis.call('SADD', once, id) == 0 then return end
    if ttl > 0 then batch.expire[once] = ttl end
  end
  local inc = batch.incr[h]
  if not inc then
    inc = {}
    batch.incr[h] = inc
  end
  for _, f in ipairs(fields) do inc[f] = (inc[f] or 0) + 1 end
  if ttl > 0 then batch.expire[h] = ttl end
end

-- The tallies' writes noted by tally: untracking, increments, expiries.
local function tally_all(batch)
  for key, ids in pairs(batch.untrack) do redis.call('ZREM', key, unpack(ids)) end
  for h, inc in pairs(batch.incr) do
    for f, n in pairs(inc) do redis.call('HINCRBY', h, f, int(n)) end
  end
  for key, ttl in pairs(batch.expire) do redis.call('PEXPIRE', key, int(ttl)) end
end

local codes, joined, acked, k = {}, 0, {}, 2
for a = 1, nacks do
  local n, id = count(ARGV[i]), ARGV[i + 1]
  local code, j = ack_job(S, queues[n], id, ARGV[i + 2], now, true, num(ARGV[i + 3]), batch)
  codes[a] = code
  joined = joined + j
  local h, once, untrack
  if ARGV[i + 4] == '1' then h = KEYS[k]; k = k + 1 end
  if ARGV[i + 5] == '1' then once = KEYS[k]; k = k + 1 end
  if ARGV[i + 6] == '1' then untrack = KEYS[k]; k = k + 1 end
  local ttl, nf = num(ARGV[i + 7]), count(ARGV[i + 8])
  if code == 1 then
    acked[n] = true
    local fields = {}
    for f = 1, nf do fields[f] = ARGV[i + 8 + f] end
    tally(batch, id, h, fields, once, untrack, ttl)
  end
  i = i + 9 + nf
end
touch_all(batch)
tally_all(batch)
if batch.logged and redis.call('DEL', S .. 'budgetwait') == 1 then redis.call('PUBLISH', S .. 'wake', 0) end
for n in pairs(acked) do tidy_due(queues[n]) end
wake(S, joined)
return codes
