-- one.lua: a test script.
--
-- No KEYS, no ARGV. Returns 1.
return 1
