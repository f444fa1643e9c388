-- KEYS[1] seq counter, KEYS[2] epoch, KEYS[3] log stream, KEYS[4] dedup key ('' when the event has no ID),
-- KEYS[5] the topic's tombstone (set when the topic was deleted)
-- ARGV[1] live channel, ARGV[2] event JSON object without seq ('' only reads the head),
-- ARGV[3] log max length, ARGV[4] log TTL seconds, ARGV[5] dedup TTL seconds, ARGV[6] the epoch to
-- start if there is none, ARGV[7] counter and epoch TTL seconds (longer than the log's, refreshed
-- on every call: a seq never restarts within an epoch, and a topic nobody uses any more expires)
-- Returns {seq, epoch}: the event's, or the topic's head when ARGV[2] is ''. Append + notify
-- happen in one atomic step, so a subscriber that sees seq N live can always find seq N-1 in the log.
-- A deleted topic refuses everything (TOPIC_DELETED): a late event of a cancelled activity must
-- not bring back keys, or content, of a deleted conversation.
if redis.call('EXISTS', KEYS[5]) == 1 then
  return redis.error_reply('TOPIC_DELETED the topic was deleted')
end
local seq = redis.call('GET', KEYS[1])
local epoch = redis.call('GET', KEYS[2])
local restarted = not seq
if restarted or not epoch then
  -- The counter or its epoch is missing: the topic is new, or Redis lost its data. A new epoch
  -- starts, so a cursor from the old numbering is never mistaken for the new one.
  epoch = ARGV[6]
  redis.call('SET', KEYS[2], epoch)
  if restarted then
    seq = 0
    redis.call('SET', KEYS[1], 0)
    redis.call('DEL', KEYS[3]) -- whatever is left of the log belongs to the lost numbering
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[7])
redis.call('EXPIRE', KEYS[2], ARGV[7])
if ARGV[2] == '' then
  return {tonumber(seq), epoch}
end
if KEYS[4] ~= '' then
  local seen = redis.call('GET', KEYS[4])
  if seen then
    local e, s = string.match(seen, '^(.*):(%d+)$')
    if e == epoch then return {tonumber(s), epoch} end
    -- A bare seq was written before epochs existed: it counts while that counter lives on.
    if not e and not restarted then return {tonumber(seen), epoch} end
  end
end
seq = redis.call('INCR', KEYS[1])
local event = '{"seq":' .. seq .. ',"epoch":"' .. epoch .. '",' .. string.sub(ARGV[2], 2)
redis.call('XADD', KEYS[3], 'MAXLEN', '~', ARGV[3], seq .. '-0', 'e', event)
redis.call('EXPIRE', KEYS[3], ARGV[4])
if KEYS[4] ~= '' then
  redis.call('SET', KEYS[4], epoch .. ':' .. seq, 'EX', ARGV[5])
end
redis.call('PUBLISH', ARGV[1], event)
return {seq, epoch}
