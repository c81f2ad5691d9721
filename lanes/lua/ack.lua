-- ack.lua: a job was delivered; end its lease and delete it.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  job id
-- ARGV[8]  lease token (the claim count handed out with the job)
-- ARGV[9]  the claimer's round-trip floor for the job's send (ms, 0 = none): its
--          send-log entries count from max(claim, now - floor), see common.lua
-- ARGV[10..] the caller's tally (see common.lua apply_tally; keys from
--          KEYS[2]), applied only when the ack lands
-- Returns 1, or -1 (stale token: nothing changed), or -2 (no such job).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local id, tok = ARGV[7], ARGV[8]
local code, joined = ack_job(S, q, id, tok, now_ms(), false, num(ARGV[9]))
if code ~= 1 then return code end
apply_tally(id, 10, 2)
wake(S, joined)
return 1
