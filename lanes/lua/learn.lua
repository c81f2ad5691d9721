-- learn.lua: lower a budget's learned rate at once (multiplicative decrease)
-- on evidence of a bot-wide limit, or read the learned rates.
-- KEYS[1]  "{tag}:s:learned" hash: budget -> "r at hit step every hold" (see
--          common.lua learned_rate), budget:why -> why it last went down,
--          budget:n -> how many times it went down; budget is "global" (the
--          store's rate) or "q:<queue>" (a queue's own)
-- ARGV[1]  "lower" or "read"
-- lower: ARGV[2] budget, ARGV[3] its configured rate, ARGV[4] floor (the
--   lowest rate it may go down to), ARGV[5] step, ARGV[6] every (ms),
--   ARGV[7] hold (ms), ARGV[8] cooldown (ms), ARGV[9] why.
--   The budget goes down to max(floor, floor(rate now / 2)), where rate now is
--   what a claim reads now; a second call within cooldown ms of the last
--   decrease changes nothing (several processes, or several 429s of one
--   burst, report the same push-back).
--   Returns {1 lowered or 0 within the cooldown, the rate now (after)}.
-- read: ARGV[2..] pairs of budget and configured rate.
--   Returns, per budget, {rate now, at (ms, 0: never lowered), hit, why,
--   decreases, hold until (ms, 0: none), the most it climbs to before the
--   hold ends (the configured rate when no hold runs)}, then the server's
--   time (ms).
local now = now_ms()
if ARGV[1] == 'lower' then
  local b, c = ARGV[2], num(ARGV[3])
  local v = redis.call('HGET', KEYS[1], b)
  local rate, at = learned_rate(v, c, now)
  if at and now - at < num(ARGV[8]) then return {0, rate} end
  local r = math.max(num(ARGV[4]), math.floor(rate / 2))
  redis.call('HSET', KEYS[1], b, int(r) .. ' ' .. int(now) .. ' ' .. int(rate) .. ' ' .. ARGV[5] .. ' ' .. ARGV[6] .. ' ' .. ARGV[7],
    b .. ':why', ARGV[9])
  redis.call('HINCRBY', KEYS[1], b .. ':n', 1)
  return {1, r}
end
local out = {}
for i = 2, #ARGV, 2 do
  local b = ARGV[i]
  local v = redis.call('HMGET', KEYS[1], b, b .. ':why', b .. ':n')
  local c = num(ARGV[i + 1])
  local rate, at = learned_rate(v[1], c, now)
  local hit, hold, cap = 0, 0, c
  if at then
    local r, h, hl = string.match(v[1], '^(%d+) %d+ (%d+) %d+ %d+ (%d+)$')
    hit, hold = num(h), at + num(hl)
    if now < hold then cap = math.min(c, math.max(num(r), math.floor(hit * 3 / 4))) end
  end
  out[#out + 1] = {rate, at or 0, hit, v[2] or '', num(v[3] or '0'), hold, cap}
end
out[#out + 1] = now
return out
