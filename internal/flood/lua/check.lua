-- check.lua: a batch of updates being recorded passes the intake limits:
-- each update not recorded yet is counted on its user's budget (and, in a
-- group, on its chat's budget) and, while both hold, its recorded time is
-- written as the intake's own ZADD NX did; an update over a limit is not
-- recorded (the caller does not enqueue it): its chat is in the set of
-- limited chats for a window after its last dropped update, and the
-- first message dropped in a chat within a window takes the chat's notice
-- flag. A budget of L per window W is a GCRA (a token bucket of L tokens
-- refilled at L per W): L updates at once, then one per W/L; its key holds
-- the theoretical arrival time (ms) and expires when the bucket is full
-- again. A dropped update draws on no budget.
--
-- KEYS[1]  recorded times  {T}:app:in:rec       sorted set job id -> recorded (ms)
-- KEYS[2]  limited chats   {T}:app:fl:limited   sorted set chat id -> last drop + window (ms)
-- KEYS[3i], KEYS[3i+1], KEYS[3i+2], for item i = 1..n:
--          the user's budget  {T}:app:fl:u:<user>:<m|t>   string TAT (ms), PX until full
--          the chat's budget  {T}:app:fl:c:<chat>:<m|t>   string TAT (ms), PX until full
--          the chat's notice  {T}:app:fl:n:<chat>         string "1", PX window
-- ARGV[1]  window W (ms)
-- ARGV[2]  now (unix ms: the recorded time)
-- ARGV[2+4i-3 .. 2+4i], for item i: the job id (member of KEYS[1]); the
--          user limit; the chat limit (0: not counted); "1" when a drop
--          may take the notice flag (a message), else "0"
-- The chat id of item i is the part of its notice key after ":fl:n:".
--
-- The time is written first (ZADD NX, as the intake's own record did), so
-- an update recorded before (a resend while it waits: its time is there)
-- is told apart in the same command; a dropped update's time is removed
-- again.
--
-- Returns one integer per item: 1 recorded (time written), 0 recorded
-- before (its time is there: a resend while it waits; not counted), 2
-- dropped by the user limit, 4 dropped by the chat limit; a drop that took
-- the notice flag adds 1 (3, 5).
local win, now = tonumber(ARGV[1]), tonumber(ARGV[2])
local out = {}
local n = (#KEYS - 2) / 3
-- budget returns how long (ms) until key's budget of limit per window has
-- an update to spare (0: now) and its theoretical arrival time once one
-- is drawn.
local function budget(key, limit)
  local t = win / limit
  local tat = tonumber(redis.call('GET', key) or '0') or 0
  if tat < now then tat = now end
  return math.max(tat - now - (win - t), 0), tat + t
end
local function draw(key, tat)
  redis.call('SET', key, string.format('%.3f', tat), 'PX', math.ceil(tat - now))
end
local trimmed = false
for i = 1, n do
  local k, a = 3 * i, 2 + 4 * i - 3
  local member, ul, cl = ARGV[a], tonumber(ARGV[a + 1]), tonumber(ARGV[a + 2])
  if redis.call('ZADD', KEYS[1], 'NX', now, member) == 0 then
    out[i] = 0
  else
    local code, wait, utat, ctat = 1, 0, nil, nil
    if ul > 0 then
      wait, utat = budget(KEYS[k], ul)
      if wait > 0 then code = 2 end
    end
    if code == 1 and cl > 0 then
      wait, ctat = budget(KEYS[k + 1], cl)
      if wait > 0 then code = 4 end
    end
    if code == 1 then
      if utat then draw(KEYS[k], utat) end
      if ctat then draw(KEYS[k + 1], ctat) end
    else
      redis.call('ZREM', KEYS[1], member) -- dropped: not recorded
      local notice = KEYS[k + 2]
      local chat = string.sub(notice, (string.find(notice, ':fl:n:', 1, true)) + 6)
      redis.call('ZADD', KEYS[2], 'GT', now + win, chat)
      if not trimmed then
        redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
        redis.call('PEXPIRE', KEYS[2], win)
        trimmed = true
      end
      if ARGV[a + 3] == '1' and redis.call('SET', notice, '1', 'NX', 'PX', win) then
        code = code + 1
      end
    end
    out[i] = code
  end
end
return out
