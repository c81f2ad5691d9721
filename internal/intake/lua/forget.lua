-- forget.lua: after a record found some of its updates' jobs there already,
-- forget the recorded times this record wrote for updates that are
-- finished (done.lua ran for them: handled or dead-lettered), so a record
-- racing an update's finish leaves no time that would count as an update
-- waiting forever, while an update still waiting or running keeps its time
-- (another record may have enqueued it). Atomic with done.lua, which
-- forgets the time itself when it runs after this.
--
-- KEYS[1]  recorded times  {T}:app:in:rec     sorted set job id -> recorded (ms)
-- KEYS[2]  old marks       {T}:app:in:done    hash lane -> "<epoch>:<update_id>",
--                          kept before the buckets (read: the higher mark counts)
-- KEYS[3]  old floors      {T}:app:in:floor   hash lane -> padded member, kept
--                          before the floor lived in the finished set (read:
--                          the higher floor counts)
-- KEYS[2+2i] item i's finished set {T}:app:in:seen:<lane> (its floor: the
--          member of score 1, "f" .. a padded member, see done.lua)
-- KEYS[3+2i] item i's handled marks {T}:app:in:done:<b> (its lane's bucket)
-- ARGV     per item i, five fields: job id, lane, epoch, update_id, padded
--          member "<epoch>:<update_id>" (20 digits each, as done.lua)
--
-- An update is finished when its member is in its lane's finished set, or
-- it is at or below the lane's handled mark and either at or below the
-- lane's floor (the set's, or the old hash's) or the lane's set has
-- expired (Inbox.Handled's rule).
-- Returns how many times were forgotten.
-- marked reports whether (e, u) is at or below mark v ("<epoch>:<update_id>",
-- or false for none).
local function marked(v, e, u)
  if not v then return false end
  local ce, cid = string.match(v, '^(%d+):(%d+)$')
  ce, cid = tonumber(ce), tonumber(cid)
  return ce ~= nil and (ce > e or (ce == e and cid >= u))
end
local n = 0
for i = 1, (#KEYS - 3) / 2 do
  local b = (i - 1) * 5
  local id, lane, e, u, member = ARGV[b + 1], ARGV[b + 2], tonumber(ARGV[b + 3]), tonumber(ARGV[b + 4]), ARGV[b + 5]
  local seen = KEYS[2 + 2 * i]
  local finished = redis.call('ZSCORE', seen, member) ~= false
  if not finished and (marked(redis.call('HGET', KEYS[3 + 2 * i], lane), e, u) or
      marked(redis.call('HGET', KEYS[2], lane), e, u)) then
    if redis.call('EXISTS', seen) == 0 then
      finished = true
    else
      local fl = redis.call('HGET', KEYS[3], lane)
      local f = redis.call('ZRANGE', seen, 1, 1, 'BYSCORE')
      if f[1] and (not fl or string.sub(f[1], 2) > fl) then fl = string.sub(f[1], 2) end
      finished = fl ~= false and member <= fl
    end
  end
  if finished then n = n + redis.call('ZREM', KEYS[1], id) end
end
return n
