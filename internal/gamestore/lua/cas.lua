-- cas.lua: compare-and-set one chat's game; on a win, credit the winner in
-- the same atomic step. Run by gamestore via EVALSHA (EVAL on NOSCRIPT).
--
-- KEYS[1]  game hash    {T}:g:game:<chat_id>   fields: id, rev, state
-- KEYS[2]  leaderboard  {T}:g:top:<chat_id>    zset user_id -> points
-- KEYS[3]  names hash   {T}:g:names:<chat_id>  user_id -> display name
--
-- ARGV[1]  mode: "new" = KEYS[1] must not exist;
--                "cas" = KEYS[1] must have id ARGV[2] and rev ARGV[3];
--                "any" = no check (replace whatever is there)
-- ARGV[2]  expected game id (mode "cas")
-- ARGV[3]  expected rev, a decimal integer (mode "cas")
-- ARGV[4]  new game id (unused when ARGV[5] is "")
-- ARGV[5]  new game.State JSON; "" deletes KEYS[1] (the game is over)
-- ARGV[6]  TTL of KEYS[1] in milliseconds, set whenever it is written
-- ARGV[7]  user id to credit; "" = nobody
-- ARGV[8]  points to credit (integer; 0 = none)
-- ARGV[9]  display name of ARGV[7]; "" = leave as is
-- ARGV[10] the move's token (e.g. "u:<update_id>"; "" = none), kept with the
--          new state in field mv, so a move handled twice is played once
-- ARGV[11] the move's result (JSON), kept in field mr with ARGV[10]
--
-- Returns the new rev (previous rev + 1, or 1 for a new key; 0 when KEYS[1]
-- was deleted), or -1 when the check failed and nothing was written.

local mode = ARGV[1]
local cur = redis.call('HMGET', KEYS[1], 'id', 'rev')
if mode == 'new' then
  if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
elseif mode == 'cas' then
  if cur[1] ~= ARGV[2] or cur[2] ~= ARGV[3] then return -1 end
elseif mode ~= 'any' then
  return redis.error_reply('cas.lua: unknown mode ' .. tostring(mode))
end

local rev = 0
if ARGV[5] == '' then
  redis.call('DEL', KEYS[1])
else
  rev = (tonumber(cur[2]) or 0) + 1
  redis.call('HSET', KEYS[1], 'id', ARGV[4], 'rev', tostring(rev), 'state', ARGV[5])
  if (ARGV[10] or '') ~= '' then
    redis.call('HSET', KEYS[1], 'mv', ARGV[10], 'mr', ARGV[11] or '')
  else
    redis.call('HDEL', KEYS[1], 'mv', 'mr')
  end
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end

local points = tonumber(ARGV[8]) or 0
if ARGV[7] ~= '' and points ~= 0 then
  redis.call('ZINCRBY', KEYS[2], points, ARGV[7])
  if ARGV[9] ~= '' then redis.call('HSET', KEYS[3], ARGV[7], ARGV[9]) end
end
return rev
