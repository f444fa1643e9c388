-- KEYS[1] seq counter, KEYS[2] log stream, KEYS[3] dedup key ('' when the event has no ID)
-- ARGV[1] live channel, ARGV[2] event JSON object without seq, ARGV[3] log max length,
-- ARGV[4] log TTL seconds (the seq counter never expires: seqs must not restart), ARGV[5] dedup TTL seconds
-- Returns the event's seq. Append + notify happen in one atomic step, so a subscriber that
-- sees seq N live can always find seq N-1 in the log.
if KEYS[3] ~= '' then
  local seen = redis.call('GET', KEYS[3])
  if seen then return tonumber(seen) end
end
local seq = redis.call('INCR', KEYS[1])
local event = '{"seq":' .. seq .. ',' .. string.sub(ARGV[2], 2)
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', event)
redis.call('EXPIRE', KEYS[2], ARGV[4])
if KEYS[3] ~= '' then
  redis.call('SET', KEYS[3], seq, 'EX', ARGV[5])
end
redis.call('PUBLISH', ARGV[1], event)
return seq
