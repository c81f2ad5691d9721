-- learn.lua: lower a budget's learned rate at once (multiplicative decrease)
-- on evidence of a bot-wide limit, take a probed budget back from a raise a
-- 429 answered, or read the learned rates.
-- KEYS[1]  "{tag}:s:learned" hash: budget -> its learned state (see common.lua
--          learned_rate: "r at hit step every hold", or "p ..." for a probed
--          budget, see probe_state), budget:why -> why it last went down,
--          budget:n -> how many times it went down, budget:ok -> its proof
--          (common.lua proof_read), budget:forgiven -> the bursts its proof
--          forgave, budget:released -> the holds a burst at its floor
--          released (see lower); budget is "global" (the
--          store's rate) or "q:<queue>" (a queue's own)
-- KEYS[2]  (revert) the answered send's job hash "{tag}:q:<queue>:job:<id>":
--          its field t is when it was claimed (server ms; see claim.lua);
--          (lower) the budget's send log, "{tag}:s:rate" or "{tag}:q:<queue>:rate"
--          (claim.lua: claim -> arrival, +inf while in flight)
-- ARGV[1]  "lower", "revert" or "read"
-- lower: ARGV[2] budget, ARGV[3] its configured rate, ARGV[4] floor (the
--   lowest rate it may go down to), ARGV[5] step, ARGV[6] every (ms),
--   ARGV[7] hold (ms), ARGV[8] cooldown (ms), ARGV[9] why, ARGV[10] its
--   start (0: not probed; see WithGlobalRateStart), ARGV[11] its window
--   (ms), ARGV[12] the binding divisor d (0: lower whether it binds or not),
--   ARGV[13] the proof epoch (ms; see common.lua proof_read).
--   With d > 0 a budget that does not bind is left alone: its sends ran
--   below what a halving would leave, so the push-back says nothing about
--   it (chaos seed 7: bursts of 429s at 7 replies/s halved a reply budget
--   of 50 twelve times to 4). It binds when its send log (KEYS[2]) counts
--   at least rate now / d x open / window sends (in flight included) since
--   the window's start or the end of the last global pause, whichever is
--   later ("{tag}:s:pauseend", written by pause.lua; the whole window
--   while a pause runs), where open is the time since then, at least a quarter
--   window: a budget 429s answered a fraction of a second after a pause
--   ended still binds.
--   A binding burst then meets the budget's proof (field "<budget>:ok",
--   see common.lua proof_read): the most sends one window held in an
--   epoch (10 s) that ended with no burst since the last binding one. A proof of
--   at least rate now shows the rate held for a whole epoch, so the burst
--   is not a limit at that rate (chaos seed 7: 429s injected at random,
--   16 in 10 minutes, halved budgets that had run 50/s for minutes down to
--   their floor, and the group replies overflowed): the budget is left as
--   it is (with d > 0: an operator's decrease is not weighed against a
--   proof), the burst counted in budget:forgiven, and the proof spent, so a
--   second binding burst before the next clean epoch ends lowers it (a
--   real limit below the rate answers again as soon as the pause for its
--   retry_after ends). Otherwise the budget goes down to
--   max(floor, floor(rate now / 2), proof), where rate now is
--   what a claim reads now; a second call within cooldown ms of the last
--   decrease or binding burst changes nothing (several processes, or
--   several 429s of one burst, report the same push-back). Every call
--   marks the epoch as one with a burst. A probed budget stays probed: from
--   there it climbs by probes only, for hold ms never above max(the rate
--   left, three quarters of the rate that was hit).
--   A budget already at its floor is not lowered, and with d > 0 a hold
--   running is released (its cap back to the configured rate, counted in
--   budget:released): a binding burst at the floor shows no limit, so
--   the bursts that brought it there showed none either. Returns {1
--   lowered, 0 within the cooldown or at the floor with no hold to
--   release, 2 not binding, 3 forgiven by its proof, or 4 a hold released
--   at the floor, the rate now (after)}.
-- revert: ARGV[2] budget, ARGV[3] its configured rate, ARGV[4] hold (ms),
--   ARGV[5] why, ARGV[6] the proof epoch (ms), ARGV[7] cooldown (ms). A send Telegram answered with a 429, claimed (KEYS[2]'s t;
--   now when gone) while a probed budget ran at rate x, takes the budget
--   back to the rate before the raise that reached x (see common.lua
--   probe_state's changes): for x a raise, the rate before that raise,
--   however many raises came after it (a 429 can come back after the next
--   probe when answers are slow); for x a rate a revert went back to, the
--   rate before the earlier raise to x (a revert lands on a rate a raise
--   reached, which a 429 there shows does not hold either). A rate no
--   raise among the changes kept reached (the start, a halving's) is not
--   gone below this way. It stays at most there for hold ms, doubled for
--   each failed probe in a row before it (at most 16 times hold; a step
--   down from a revert's rate is not a failed probe). It marks the epoch
--   as one with a burst (see lower), reverted or not. A send claimed at a
--   rate its proof covers (see lower) takes nothing back: forgiven, counted
--   in budget:forgiven, the proof spent by the first such 429, the rest of
--   its burst (within cooldown ms) weighed against what it spent (chaos
--   seed 7: injected 429s to sends claimed at raises that had held for a
--   minute walked the probed total down to its floor). Returns {1 reverted,
--   3 forgiven by its proof,
--   or 0 (no raise reached x, or the rate is already at most that), the
--   rate now}.
-- read: ARGV[2] the proof epoch (ms), ARGV[3..] triples of budget,
--   configured rate and start (0: none).
--   Returns, per budget, {rate now, at (ms, 0: never lowered), hit, why,
--   decreases, hold until (ms, 0: none), the most it climbs to before the
--   hold ends (the configured rate when no hold runs), 1 when probed, its
--   proof (see lower; 0: none), the bursts its proof forgave, the holds
--   released at the floor}, then the
--   server's time (ms).
local now = now_ms()
local S = string.sub(KEYS[1], 1, -8) -- the shared prefix: KEYS[1] less "learned"
if ARGV[1] == 'lower' then
  local b, c, s = ARGV[2], num(ARGV[3]), num(ARGV[10])
  local vals = redis.call('HMGET', KEYS[1], b, b .. ':ok')
  local v = vals[1] or nil
  if s <= 0 or s >= c then s = nil end
  local rate, at = learned_rate(v, c, now, s)
  -- Every call marks the epoch as one with a burst: it proves nothing.
  local pf = proof_read(vals[2] or nil, now, num(ARGV[13]))
  pf.d = 1
  local cool = num(ARGV[8])
  if (at and now - at < cool) or now - pf.t < cool then
    proof_write(S, b, pf)
    return {0, rate}
  end
  local d = num(ARGV[12])
  if d > 0 then
    local w = num(ARGV[11])
    local from = now - w
    local pe = redis.call('GET', S .. 'pauseend')
    if pe and num(pe) > from and num(pe) <= now and redis.call('EXISTS', S .. 'pause') == 0 then from = num(pe) end
    local open = math.max(now - from, w / 4)
    if redis.call('ZCOUNT', KEYS[2], int(from), '+inf') * d * w < rate * open then
      proof_write(S, b, pf)
      return {2, rate}
    end
  end
  -- A binding burst spends the proof: the next one needs a clean epoch
  -- first. An operator's decrease (d = 0) spends it unheard.
  local proof = d > 0 and pf.c or 0
  pf.c, pf.t, pf.x = 0, now, proof
  proof_write(S, b, pf)
  if proof >= rate then
    redis.call('HINCRBY', KEYS[1], b .. ':forgiven', 1)
    return {3, rate}
  end
  local r = math.max(num(ARGV[4]), math.floor(rate / 2), proof)
  local p = probe_state(v)
  -- At the floor already: nothing to lower, so no decrease counted and no
  -- hold renewed, as within the cooldown. A binding burst there is no
  -- limit (see the floor's rule in lanes LearnFloorDivisor), so neither
  -- were the bursts that brought the budget down to it: a hold running is
  -- released and the budget climbs again (chaos seed 7: clustered
  -- injected bursts halved the probed total to its floor, and its hold
  -- kept it there for the rest of the run while the group replies
  -- overflowed).
  if r >= rate then
    if d == 0 then return {0, rate} end
    if p then
      if now >= p.hold then return {0, rate} end
      p.hold, p.cap = now, c
      probe_write(S, b, p, now)
    else
      local _, hat, hit, step, every, hold = string.match(v or '', '^(%d+) (%d+) (%d+) (%d+) (%d+) (%d+)$')
      if not hold or now >= num(hat) + num(hold) then return {0, rate} end
      redis.call('HSET', KEYS[1], b, int(rate) .. ' ' .. int(now) .. ' ' .. hit .. ' ' .. step .. ' ' .. every .. ' 0')
    end
    redis.call('HINCRBY', KEYS[1], b .. ':released', 1)
    return {4, rate}
  end
  if s or p then
    p = p or {fails = 0, h = {{0, rate}}}
    p.r, p.at, p.next, p.hit, p.low = r, now, 1, rate, now
    p.cap, p.hold = math.max(r, math.floor(rate * 3 / 4)), now + num(ARGV[7])
    probe_write(S, b, p, now)
  else
    redis.call('HSET', KEYS[1], b, int(r) .. ' ' .. int(now) .. ' ' .. int(rate) .. ' ' .. ARGV[5] .. ' ' .. ARGV[6] .. ' ' .. ARGV[7])
  end
  redis.call('HSET', KEYS[1], b .. ':why', ARGV[9])
  redis.call('HINCRBY', KEYS[1], b .. ':n', 1)
  return {1, r}
end
if ARGV[1] == 'revert' then
  local b, c = ARGV[2], num(ARGV[3])
  local vals = redis.call('HMGET', KEYS[1], b, b .. ':ok')
  -- A 429 to a send of this epoch: it proves nothing (see lower).
  local pf = proof_read(vals[2] or nil, now, num(ARGV[6]))
  if pf.d == 0 or pf.dirty then
    pf.d = 1
    proof_write(S, b, pf)
  end
  local p = probe_state(vals[1] or nil)
  if not p then return {0, 0} end
  local ct = redis.call('HGET', KEYS[2], 't')
  ct = ct and num(ct) or now
  -- The change in force when the send was claimed.
  local i = 0
  for k = 1, #p.h do
    if p.h[k][1] <= ct then i = k end
  end
  -- Back to the rate before the raise that reached the rate the send was
  -- claimed at: that raise itself when the send was claimed at a raise (a
  -- failed probe), else the latest earlier raise to the same rate (a
  -- revert lands on a rate a raise reached, never proven under load). A
  -- rate no raise reached (the start, a halving's) is not gone below.
  local back, probe = nil, false
  if i >= 2 then
    local x = p.h[i][2]
    for k = i, 2, -1 do
      if p.h[k][2] == x and p.h[k - 1][2] < x then
        back, probe = p.h[k - 1][2], k == i
        break
      end
    end
  end
  if not back or back >= p.r then return {0, math.min(p.r, c)} end
  -- Weighed against the proof (see lower): a rate a clean epoch held is no
  -- failed probe. The first such 429 spends the proof; the rest of its
  -- burst, within the cooldown, is weighed against what it spent.
  local x = p.h[i][2]
  local proof = pf.c
  if now - pf.t < num(ARGV[7]) and pf.x > proof then proof = pf.x end
  if x <= proof then
    if pf.c > 0 then pf.c, pf.t, pf.x = 0, now, proof end
    proof_write(S, b, pf)
    redis.call('HINCRBY', KEYS[1], b .. ':forgiven', 1)
    return {3, math.min(p.r, c)}
  end
  -- Only a failed probe lengthens the next hold (doubled for each in a
  -- row); a step down from a revert's rate holds as long as the last one.
  if probe then p.fails = p.fails + 1 end
  p.hit, p.r, p.cap, p.next, p.at, p.low = p.h[i][2], back, back, 1, now, now
  p.hold = now + num(ARGV[4]) * 2 ^ math.min(math.max(p.fails - 1, 0), 4)
  probe_write(S, b, p, now)
  redis.call('HSET', KEYS[1], b .. ':why', ARGV[5])
  redis.call('HINCRBY', KEYS[1], b .. ':n', 1)
  return {1, math.min(p.r, c)}
end
local out = {}
local ep = num(ARGV[2])
for i = 3, #ARGV, 3 do
  local b = ARGV[i]
  local v = redis.call('HMGET', KEYS[1], b, b .. ':why', b .. ':n', b .. ':ok', b .. ':forgiven', b .. ':released')
  local c, s = num(ARGV[i + 1]), num(ARGV[i + 2])
  if s <= 0 or s >= c then s = nil end
  local rate, at = learned_rate(v[1], c, now, s)
  local hit, hold, cap, probed = 0, 0, c, 0
  local p = probe_state(v[1])
  if s then probed = 1 end
  if p then
    hit, hold, probed = p.hit, p.hold, 1
    if now < hold then cap = math.min(c, p.cap) end
    if p.low == 0 then hold = 0 end
  elseif at then
    local r, h, hl = string.match(v[1], '^(%d+) %d+ (%d+) %d+ %d+ (%d+)$')
    hit, hold = num(h), at + num(hl)
    if now < hold then cap = math.min(c, math.max(num(r), math.floor(hit * 3 / 4))) end
  end
  local proof = proof_read(v[4] or nil, now, ep).c
  out[#out + 1] = {rate, at or 0, hit, v[2] or '', num(v[3] or '0'), hold, cap, probed, proof, num(v[5] or '0'),
    num(v[6] or '0')}
end
out[#out + 1] = now
return out
