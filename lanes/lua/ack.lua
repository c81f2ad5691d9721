-- ack.lua: a job was delivered; end its lease and delete it.
-- KEYS[1]  the queue's ring "{tag}:q:<queue>:ring"
-- ARGV[1]  shared prefix "{tag}:s:"
-- ARGV[2..6] queue config (see common.lua)
-- ARGV[7]  job id
-- ARGV[8]  lease token (the claim count handed out with the job)
-- Returns 1, or -1 (stale token: nothing changed), or -2 (no such job).
local S = ARGV[1]
local q = read_queue(ARGV, 2)
local id, tok = ARGV[7], ARGV[8]
local code, joined = ack_job(S, q, id, tok, now_ms())
if code ~= 1 then return code end
wake(S, joined)
return 1
