-- recordonce.lua: append an admin action to the audit stream once per key
-- (AuditLog.RecordOnce): an action whose handler may run again after a
-- failure (its update handled again) is recorded by whichever run comes
-- first, and by no later one. The entry is appended before the marker is
-- set: an append that fails (a wrong type, out of memory) aborts the script
-- with nothing written, marker included, so the next run records it.
--
-- KEYS[1]  the audit stream {T}:app:audit
-- KEYS[2]  the key's marker {T}:app:audit:once:<key>, a string: the id of
--          the entry it recorded
-- ARGV[1]  the stream's cap (XADD MAXLEN ~)
-- ARGV[2]  how long the marker is kept (ms)
-- ARGV[3]  admin (who: an admin's user id, or console)
-- ARGV[4]  action
-- ARGV[5]  detail
--
-- Returns the id of the entry appended, or "" when the key was recorded
-- before (its marker is there): nothing written.
if redis.call('EXISTS', KEYS[2]) == 1 then return '' end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*',
  'admin', ARGV[3], 'action', ARGV[4], 'detail', ARGV[5])
redis.call('SET', KEYS[2], id, 'PX', ARGV[2])
return id
