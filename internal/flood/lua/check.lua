-- check.lua: a batch of updates being recorded passes the intake limits:
-- each update not recorded yet is counted on its user's budget (and, in a
-- group, on its chat's budget) and, while both hold, its recorded time is
-- written as the intake's own ZADD NX did; an update over a limit is not
-- recorded (the caller does not enqueue it): its chat is in the set of
-- limited chats for a window after its last dropped update, and the
-- first message dropped in a chat within a window takes the chat's notice.
-- A budget of L per window W is a GCRA (a token bucket of L tokens
-- refilled at L per W): L updates at once, then one per W/L; it is a
-- member of one sorted set scored by its theoretical arrival time (ms),
-- trimmed of the members whose time has passed (a full bucket: the same
-- as none), the set expiring a window after its last write. A dropped
-- update draws on no budget.
--
-- KEYS[1]  recorded times  {T}:app:in:rec      sorted set job id -> recorded (ms)
-- KEYS[2]  limited chats   {T}:app:fl:limited  sorted set chat id -> last drop + window (ms)
-- KEYS[3]  budgets         {T}:app:fl:b        sorted set "u:<user>:<m|t>" or
--                          "c:<chat>:<m|t>" -> TAT (ms); PEXPIRE window
-- KEYS[4]  notices         {T}:app:fl:n        sorted set chat id -> notice
--                          time + window (ms); PEXPIRE window
-- ARGV[1]  window W (ms)
-- ARGV[2]  now (unix ms: the recorded time)
-- ARGV[2+6i-5 .. 2+6i], for item i = 1..n: the job id (member of
--          KEYS[1]); the user's budget member; the user limit (0: not
--          counted); the chat's budget member; the chat limit (0: not
--          counted); the chat id, prefixed "m" when a drop may take the
--          notice (a message), else "t"
--
-- The cost is a fixed handful of commands per batch (ZMSCORE of the
-- recorded times, ZMSCORE of the budgets drawn on, one ZADD each, a trim),
-- not per update: an update within the limits costs only its arithmetic.
-- An update recorded before (its time is there: a resend while it waits),
-- or twice in the batch, is told apart by the ZMSCORE and is not counted.
--
-- Returns one integer per item: 1 recorded (time written), 0 recorded
-- before (not counted), 2 dropped by the user limit, 4 dropped by the
-- chat limit; a drop that took the notice adds 1 (3, 5).
local win, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local n = (#ARGV - 2) / 6
local out = {}

-- zmscore answers ZMSCORE of members on key (chunks of 1000 arguments),
-- a number or false per member.
local function zmscore(key, members)
  local res = {}
  for s = 1, #members, 1000 do
    local part = redis.call('ZMSCORE', key, unpack(members, s, math.min(s + 999, #members)))
    for j = 1, #part do res[#res + 1] = part[j] and tonumber(part[j]) or false end
  end
  return res
end
-- zadd writes the score/member pairs of flat (chunks of 1000 arguments).
local function zadd(key, flat)
  for s = 1, #flat, 1000 do
    redis.call('ZADD', key, unpack(flat, s, math.min(s + 999, #flat)))
  end
end

local members, names, tat = {}, {}, {}
for i = 1, n do
  local a = 6 * i - 3
  members[i] = ARGV[a]
  local ub, cb = ARGV[a + 1], ARGV[a + 3]
  if ub ~= '' and not tat[ub] then tat[ub] = now; names[#names + 1] = ub end
  if cb ~= '' and not tat[cb] then tat[cb] = now; names[#names + 1] = cb end
end
local present = zmscore(KEYS[1], members)
if #names > 0 then
  local cur = zmscore(KEYS[3], names)
  for j = 1, #names do
    local v = cur[j]
    if v and v > now then tat[names[j]] = v end
  end
end

local rec, drawn, batch = {}, {}, {}
local trimmed, noticed = false, false
for i = 1, n do
  local a = 6 * i - 3
  local member = members[i]
  if present[i] or batch[member] then
    out[i] = 0
  else
    batch[member] = true
    local code, ub, cb, ut, ct = 1, ARGV[a + 1], ARGV[a + 3], nil, nil
    if ub ~= '' then -- the budget has one to spare while TAT - now <= W - W/L
      local t = win / tonumber(ARGV[a + 2])
      ut = tat[ub]
      if ut - now > win - t then code = 2 else ut = ut + t end
    end
    if code == 1 and cb ~= '' then
      local t = win / tonumber(ARGV[a + 4])
      ct = tat[cb]
      if ct - now > win - t then code = 4 else ct = ct + t end
    end
    if code == 1 then
      if ut then tat[ub], drawn[ub] = ut, true end
      if ct then tat[cb], drawn[cb] = ct, true end
      rec[#rec + 1] = now
      rec[#rec + 1] = member
    else
      local who = ARGV[a + 5]
      local chat = string.sub(who, 2)
      redis.call('ZADD', KEYS[2], 'GT', now + win, chat)
      if not trimmed then
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
        redis.call('PEXPIRE', KEYS[2], win)
        trimmed = true
      end
      if string.sub(who, 1, 1) == 'm' then
        local until_ = tonumber(redis.call('ZSCORE', KEYS[4], chat) or '0') or 0
        if until_ <= now then
          if not noticed then
            redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
            noticed = true
          end
          redis.call('ZADD', KEYS[4], now + win, chat)
          redis.call('PEXPIRE', KEYS[4], win)
          code = code + 1
        end
      end
    end
    out[i] = code
  end
end
if #rec > 0 then zadd(KEYS[1], rec) end
local flat = {}
for j = 1, #names do
  local b = names[j]
  if drawn[b] then
    flat[#flat + 1] = tat[b]
    flat[#flat + 1] = b
  end
end
if #flat > 0 then
  zadd(KEYS[3], flat)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  redis.call('PEXPIRE', KEYS[3], win)
end
return out
