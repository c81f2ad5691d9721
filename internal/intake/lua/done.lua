-- done.lua: an update's handling is over: raise its lane's handled mark (when
-- handled), forget its recorded time, drop its journal. Runs before the
-- update's job is acked on the update queue, so an update enqueued again
-- (a getUpdates batch fetched again after a crash, a webhook resend) is
-- recognised as handled by the mark.
--
-- KEYS[1]  handled marks   {T}:app:in:done      hash lane -> "<epoch>:<update_id>"
-- KEYS[2]  recorded times  {T}:app:in:rec       sorted set job id -> recorded (ms)
-- KEYS[3]  journal         {T}:app:j:<update_id>
-- ARGV[1]  lane
-- ARGV[2]  epoch (decimal)
-- ARGV[3]  update_id (decimal)
-- ARGV[4]  job id
-- ARGV[5]  "1" to raise the mark (handled), "0" not (dead-lettered)
--
-- The mark only grows (epoch first, then update_id), so a late finish of an
-- update whose lease expired never lowers it. Returns 1.
if ARGV[5] == '1' then
  local e, id = tonumber(ARGV[2]), tonumber(ARGV[3])
  local cur = redis.call('HGET', KEYS[1], ARGV[1])
  local raise = true
  if cur then
    local ce, cid = string.match(cur, '^(%d+):(%d+)$')
    ce, cid = tonumber(ce), tonumber(cid)
    if ce and (ce > e or (ce == e and cid >= id)) then raise = false end
  end
  if raise then redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[3]) end
end
redis.call('ZREM', KEYS[2], ARGV[4])
redis.call('DEL', KEYS[3])
return 1
