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
-- update draws on no budget. A message counts at its arrival (its date,
-- flood.Arrival: a backlog fetched at once is judged as it was sent), a
-- tap at now; a budget is trimmed once full at the batch's latest message
-- arrival (now when it has none), so the next batch of a backlog finds
-- what this one drew at its dates.
--
-- KEYS[1]  recorded times  {T}:app:in:rec      sorted set job id -> recorded (ms)
-- KEYS[2]  limited chats   {T}:app:fl:limited  sorted set chat id -> last drop + window (ms)
-- KEYS[3]  budgets         {T}:app:fl:b        sorted set "u:<user>:<m|t>" or
--                          "c:<chat>:<m|t>" -> TAT (ms); PEXPIRE window
-- KEYS[4]  notices         {T}:app:fl:n        sorted set chat id -> notice
--                          time + window (ms); PEXPIRE window
-- ARGV[1]  window W (ms)
-- ARGV[2]  now (unix ms: the recorded time, written as given)
-- ARGV[3]  m: items 1..m are messages, the rest taps (a budget is of one
--          kind, so the order between the kinds changes nothing)
-- ARGV[4..7] the limits L: user messages, user taps, chat messages, chat
--          taps (a budget named '' is not counted, whatever its limit)
-- ARGV[7+i], ARGV[7+n+i], ARGV[7+2n+i], for item i = 1..n: the job id
--          (member of KEYS[1], distinct in the batch); the user's budget
--          member ('': not counted); the chat's budget member
--          "c:<chat>:<m|t>" when it is counted, else the chat id (a drop's
--          chat, from either)
-- ARGV[7+3n+i], for message i = 1..m: its arrival (unix ms, at most now:
--          flood.Arrival)
--
-- The cost is a fixed handful of commands per batch (ZMSCORE of the
-- recorded times, ZMSCORE of the budgets drawn on, one ZADD each, a trim),
-- not per update: an update within the limits costs only its arithmetic
-- and its three arguments. An update recorded before (its time is there: a
-- resend while it waits) is told apart by the ZMSCORE and is not counted.
-- What is left is about 20,000 server instructions per update more than
-- the plain ZADD NX (BenchmarkRecord under callgrind), mostly the two
-- ZADDs (a budget's new score moves it in its skip list) and the Lua
-- between them; the arguments are laid out by kind and by field so that
-- the job ids are passed to ZMSCORE as they are and no limit is parsed
-- per update.
--
-- Returns one integer per item: 1 recorded (time written), 0 recorded
-- before (not counted), 2 dropped by the user limit, 4 dropped by the
-- chat limit; a drop that took the notice adds 1 (3, 5).
local win, now, stamp = tonumber(ARGV[1]), tonumber(ARGV[2]), ARGV[2]
local nm = tonumber(ARGV[3])
-- The steps W/L per kind (messages, taps).
local usm, ust = win / tonumber(ARGV[4]), win / tonumber(ARGV[5])
local csm, cst = win / tonumber(ARGV[6]), win / tonumber(ARGV[7])
local n = (#ARGV - 7 - nm) / 3
local byte, sub = string.byte, string.sub
local out = {}

-- zmscore answers ZMSCORE on key of the members t[from..to] (chunks of
-- 1000 arguments), a score (a string) or false per member.
local function zmscore(key, t, from, to)
  if to < from then return {} end
  if to - from < 1000 then return redis.call('ZMSCORE', key, unpack(t, from, to)) end
  local res, k = {}, 0
  for s = from, to, 1000 do
    local part = redis.call('ZMSCORE', key, unpack(t, s, math.min(s + 999, to)))
    for j = 1, #part do k = k + 1; res[k] = part[j] end
  end
  return res
end
-- zadd writes the score/member pairs of flat (chunks of 1000 arguments).
local function zadd(key, flat)
  for s = 1, #flat, 1000 do
    redis.call('ZADD', key, unpack(flat, s, math.min(s + 999, #flat)))
  end
end

-- tat: each budget's TAT, 0 when it has none (full at any arrival).
local names, tat, nn = {}, {}, 0
for i = 8 + n, 7 + 2 * n do
  local ub, cb = ARGV[i], ARGV[i + n]
  if ub ~= '' and not tat[ub] then tat[ub] = 0; nn = nn + 1; names[nn] = ub end
  if not tat[cb] and byte(cb) == 99 then tat[cb] = 0; nn = nn + 1; names[nn] = cb end -- 'c'
end
local present = zmscore(KEYS[1], ARGV, 8, 7 + n)
if nn > 0 then
  local cur = zmscore(KEYS[3], names, 1, nn)
  for j = 1, nn do
    local v = cur[j]
    if v then tat[names[j]] = tonumber(v) end
  end
end
-- The trim: the latest message arrival, else now.
local full = now
if nm > 0 then
  full = 0
  for i = 1, nm do
    local a = tonumber(ARGV[7 + 3 * n + i])
    if a > full then full = a end
  end
end

local rec, nr, drawn = {}, 0, {}
local trimmed, noticed = false, false
for i = 1, n do
  if present[i] then
    out[i] = 0
  else
    -- tat has the budgets counted, and no chat id nor '' (not counted).
    local code, ub, cb = 1, ARGV[7 + n + i], ARGV[7 + 2 * n + i]
    local ut, ct = tat[ub], tat[cb]
    local us, cs, at = usm, csm, now
    if i > nm then us, cs = ust, cst else at = tonumber(ARGV[7 + 3 * n + i]) end
    if ut then -- the budget has one to spare while TAT - arrival <= W - W/L
      if ut < at then ut = at end
      if ut - at > win - us then code = 2 else ut = ut + us end
    end
    if code == 1 and ct then
      if ct < at then ct = at end
      if ct - at > win - cs then code = 4 else ct = ct + cs end
    end
    if code == 1 then
      if ut then tat[ub], drawn[ub] = ut, true end
      if ct then tat[cb], drawn[cb] = ct, true end
      rec[nr + 1], rec[nr + 2] = stamp, ARGV[7 + i]
      nr = nr + 2
    else
      local chat = cb
      if byte(cb) == 99 then chat = sub(cb, 3, -3) end -- c:<chat>:<m|t>
      redis.call('ZADD', KEYS[2], 'GT', now + win, chat)
      if not trimmed then
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
        redis.call('PEXPIRE', KEYS[2], win)
        trimmed = true
      end
      if i <= nm then
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
if nr > 0 then zadd(KEYS[1], rec) end
local flat, nf = {}, 0
for j = 1, nn do
  local b = names[j]
  if drawn[b] then
    flat[nf + 1], flat[nf + 2] = tat[b], b
    nf = nf + 2
  end
end
if nf > 0 then
  zadd(KEYS[3], flat)
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', full)
  redis.call('PEXPIRE', KEYS[3], win)
end
return out
