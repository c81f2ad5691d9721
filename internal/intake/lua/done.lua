-- done.lua: an update's handling is over: raise its lane's handled mark (when
-- handled), remember its id in the lane's recently finished set, forget its
-- recorded time, drop its journal. Runs before the update's job is acked on
-- the update queue, so an update enqueued again (a getUpdates batch fetched
-- again after a crash, a webhook resend) is recognised as handled.
--
-- KEYS[1]  handled marks   {T}:app:in:done:<b>  hash lane -> "<epoch>:<update_id>"
--                          (the lane's bucket)
-- KEYS[2]  recorded times  {T}:app:in:rec       sorted set job id -> recorded (ms)
-- KEYS[3]  journal         {T}:app:j:<update_id>
-- KEYS[4]  finished set    {T}:app:in:seen:<lane> sorted set: the finished
--                          updates, score 0, member "<epoch>:<update_id>"
--                          zero-padded to 20 digits each (lexical order =
--                          (epoch, id) order), and at most one floor member,
--                          score 1, "f" .. a padded member: every update at
--                          or below it counts as finished
-- KEYS[5]  old floors      {T}:app:in:floor     hash lane -> padded member,
--                          kept before the floor lived in the set: the
--                          lane's field, if any, moves into KEYS[4] (the
--                          higher floor) when the set exists, and is deleted
-- ARGV[1]  lane
-- ARGV[2]  epoch (decimal)
-- ARGV[3]  update_id (decimal)
-- ARGV[4]  job id
-- ARGV[5]  "1" to raise the mark (handled), "0" not (dead-lettered)
-- ARGV[6]  the update's padded member (as KEYS[4])
-- ARGV[7]  the finished set's cap (members of score 0)
-- ARGV[8]  the finished set's TTL (s)
-- ARGV[9]  "1" when the update was fetched by getUpdates (in order: no
--          earlier update of the lane can be recorded after it), else "0"
-- KEYS[6]  old marks       {T}:app:in:done      hash lane -> mark, kept before
--                          the buckets: its mark of the lane, if any, counts
--                          (the higher of the two) and moves to KEYS[1]
-- KEYS[7..] keys the update's handling no longer needs once it is over
--          (the notifier idempotency keys of its messages: a handled update
--          is never handled again), deleted
--
-- The mark only grows (epoch first, then update_id), so a late finish of an
-- update whose lease expired never lowers it. The finished set keeps the
-- lane's last ARGV[7] finished ids (webhook updates may arrive out of order,
-- so an id below the mark is not necessarily finished); the ids trimmed from
-- it, and the mark when the set is created beside an existing mark (a set
-- expired, or a lane from before the set), raise the lane's floor, which
-- lives in the set and expires with it: a floor only counts while the set
-- exists (without a set every update at or below the mark is finished). A
-- handled in-order update on a lane without a set adds none: every update
-- of the lane at or below the mark is then finished, which is what a lane
-- without a set means (a set is only needed where updates can arrive out
-- of order: webhook deliveries). Returns 1.
-- mark returns the (epoch, id) of a mark "<epoch>:<update_id>", nil for none.
local function mark(v)
  if not v then return nil end
  local e, id = string.match(v, '^(%d+):(%d+)$')
  if not e then return nil end
  return tonumber(e), tonumber(id)
end
local seen = KEYS[4]
-- raise sets the set's floor to to (a padded member) unless fl, its
-- floor now (nil for none), is at or above it; returns the floor after.
local function raise(fl, to)
  if fl and fl >= to then return fl end
  if fl then redis.call('ZREM', seen, 'f' .. fl) end
  redis.call('ZADD', seen, 1, 'f' .. to)
  return to
end
local cur = redis.call('HGET', KEYS[1], ARGV[1])
local old = redis.call('HGET', KEYS[6], ARGV[1])
if old then
  local oe, oid = mark(old)
  local ce, cid = mark(cur)
  if oe and (not ce or oe > ce or (oe == ce and oid > cid)) then
    cur = old
    redis.call('HSET', KEYS[1], ARGV[1], old)
  end
  redis.call('HDEL', KEYS[6], ARGV[1])
end
local exists = redis.call('EXISTS', seen) == 1
local keep = exists or ARGV[5] ~= '1' or ARGV[9] ~= '1'
local oldfl = redis.call('HGET', KEYS[5], ARGV[1])
if oldfl then redis.call('HDEL', KEYS[5], ARGV[1]) end
local fl = nil
if exists then
  local f = redis.call('ZRANGE', seen, 1, 1, 'BYSCORE')
  if f[1] then fl = string.sub(f[1], 2) end
end
if keep then
  if oldfl then fl = raise(fl, oldfl) end
  if not exists and cur then
    local ce, cid = mark(cur)
    if ce then fl = raise(fl, string.format('%020d:%020d', ce, cid)) end
  end
end
if ARGV[5] == '1' then
  local e, id = tonumber(ARGV[2]), tonumber(ARGV[3])
  local up = true
  local ce, cid = mark(cur)
  if ce and (ce > e or (ce == e and cid >= id)) then up = false end
  if up then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[3]) end
end
if keep then
  redis.call('ZADD', seen, 0, ARGV[6])
  local cap = tonumber(ARGV[7])
  local n = redis.call('ZCARD', seen)
  if fl then n = n - 1 end
  if n > cap then
    -- the lowest ranks are the oldest finished ids (score 0, lexical);
    -- the floor member (score 1) ranks last and is never among them
    local gone = redis.call('ZRANGE', seen, 0, n - cap - 1)
    redis.call('ZREMRANGEBYRANK', seen, 0, n - cap - 1)
    fl = raise(fl, gone[#gone])
  end
  redis.call('EXPIRE', seen, tonumber(ARGV[8]))
end
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[3])
for i = 7, #KEYS do redis.call('DEL', KEYS[i]) end
return 1
