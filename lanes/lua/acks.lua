-- acks.lua: several delivered jobs acked at once, each exactly as ack.lua
-- acks one (its lease ended, its send counted in its budgets from its latest
-- possible arrival, the job deleted, its tally kept when it lands), with
-- what they share done once per call instead of once per ack: the server's
-- TIME, the jobs' hashes deleted (one DEL), the lanes an ack left with none
-- in flight (one HDEL of each queue's "<queue prefix>inflight"), the
-- rescoring of the budgets' send logs ("<queue prefix>rate" and
-- "{tag}:s:rate": one ZADD XX CH per log, common.lua rescore) and their
-- expiries (a lane's pace log is written and touched at its ack), whether
-- any lane has a pace override ("{tag}:s:pacecfg", read once), the
-- budget's wake-up (DEL "{tag}:s:budgetwait", see common.lua end_lease),
-- each queue's due time (tidied once per queue acked), the claimers'
-- wake-up, and a tally's hash existence, increments (one HINCRBY per hash
-- and field, by the count of its acks), untracking (one ZREM per set) and
-- expiries. The acks are decided in order, each on what the acks before
-- it left (a lease taken, a job acked, a lane's count): the same answers
-- and the same ring as one ack.lua call per ack in turn. (The lease
-- checks and the lanes' counts stay one command per ack: reading them all
-- first, one ZMSCORE and one HMGET, cost the server more than it saved.)
-- KEYS[1]  the first acked queue's ring "{tag}:q:<queue>:ring" (routing)
-- KEYS[2..] the tallies' keys, in the order of the tallies and, within a
--          tally, hash, once set, untrack set (each only when it has it)
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2]  the number N of queues, then N queue configs (5 fields each, see
--          common.lua)
-- then the number T of distinct tallies (the acks of a batch mostly share
--          one: each is sent once), then for each: "1" when it has a hash
--          (the next key), "1" when a once set (the next key), "1" when an
--          untrack set (the next key) (else ""), the TTL (ms, 0 = none)
--          the hash and the once set are renewed to, the number F of
--          fields, then F hash fields, each incremented by 1 (see
--          common.lua count_in)
-- then the number A of acks, then for each: queue index (1..N), job id,
--          lease token, the claimer's round-trip floor for its send (ms,
--          0 = none; see common.lua arrival), its tally's index (1..T;
--          0 = none)
-- Returns A codes, in order: 1 acked, -1 stale token, -2 no such job
-- (nothing changed for that ack).
local S = ARGV[1]
local nq = count(ARGV[2])
local queues, i = {}, 3
for n = 1, nq do queues[n], i = read_queue(ARGV, i) end
-- The tallies: keys, TTL and where their fields start in ARGV.
local tallies, k, nt = {}, 2, count(ARGV[i])
i = i + 1
for t = 1, nt do
  local tl = {}
  if ARGV[i] == '1' then tl.h = KEYS[k]; k = k + 1 end
  if ARGV[i + 1] == '1' then tl.once = KEYS[k]; k = k + 1 end
  if ARGV[i + 2] == '1' then tl.untrack = KEYS[k]; k = k + 1 end
  tl.ttl, tl.nf, tl.from = num(ARGV[i + 3]), count(ARGV[i + 4]), i + 5
  tallies[t] = tl
  i = i + 5 + tl.nf
end
local nacks = count(ARGV[i])
i = i + 1
local now = now_ms()
local batch = {touch = {}, rescore = {}, exists = {}, expire = {}, incr = {}, untrack = {}}

-- An ack's tally, as count_in keeps it (see common.lua), with the hash's
-- existence read once per call, and its increments, untracking and
-- expiries done once at the end (tally_all: each field by its count, the
-- last ack's TTL for a key, as count_in called in turn would leave them;
-- no ack reads them). Its fields are ARGV[from .. from + nf - 1].
local function tally(batch, id, h, once, untrack, ttl, from, nf)
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
  for f = from, from + nf - 1 do
    local x = ARGV[f]
    inc[x] = (inc[x] or 0) + 1
  end
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

-- The acks, in order, each decided on what the acks before it left, as
-- ack_job decides it (common.lua take_lease, end_lease, ring_after_ack):
-- the job's hash (no such job: -2; so is a job an earlier ack of the call
-- acked: gone, its hash deleted with the others below), its token (-1),
-- its lease (ZREM: -1 when not held); then its lane's count down by one
-- (a lane left at 0 loses its field below: zero[n], once per queue), its
-- send settled in its logs, the lane back in the ring when the ack made it
-- ready, and its tally.
local codes, joined = {}, 0
local gone, dels, zero, acked = {}, {}, {}, {}
for n = 1, nq do zero[n] = {} end
for a = 1, nacks do
  local n, id, tok = count(ARGV[i]), ARGV[i + 1], ARGV[i + 2]
  local q = queues[n]
  local jk = q.p .. 'job:' .. id
  local code, g, logged, claimed, kept = -2
  if not gone[jk] then
    local v = redis.call('HMGET', jk, 'g', 'c', 's', 't', 'e')
    if v[1] then
      if v[2] ~= tok or redis.call('ZREM', q.p .. 'leases', id) == 0 then
        code = -1
      else
        code, g, logged, claimed, kept = 1, v[1], v[3], v[4], v[5]
      end
    end
  end
  codes[a] = code
  if code == 1 then
    acked[n] = true
    gone[jk] = true
    dels[#dels + 1] = jk
    local inf = redis.call('HINCRBY', q.p .. 'inflight', g, '-1')
    if inf <= 0 then
      inf = 0
      local z = zero[n]
      z[#z + 1] = g
    end
    if logged ~= '0' then
      mark_settled(S, q, g, id .. ':' .. tok, arrival(now, num(ARGV[i + 3]), claimed), logged, batch,
        kept and num(kept) - now)
      batch.logged = true
    end
    joined = joined + ring_after_ack(q, g, inf)
    local tl = tallies[count(ARGV[i + 4])]
    if tl then tally(batch, id, tl.h, tl.once, tl.untrack, tl.ttl, tl.from, tl.nf) end
  end
  i = i + 5
end

-- The writes the acks share: jobs deleted, lanes left at 0 in flight.
if #dels > 0 then redis.call('DEL', unpack(dels)) end
for n = 1, nq do
  if #zero[n] > 0 then redis.call('HDEL', queues[n].p .. 'inflight', unpack(zero[n])) end
end
touch_all(batch)
tally_all(batch)
if batch.logged and redis.call('DEL', S .. 'budgetwait') == 1 then redis.call('PUBLISH', S .. 'wake', 0) end
for n = 1, nq do
  if acked[n] then tidy_due(queues[n]) end
end
wake(S, joined)
return codes
