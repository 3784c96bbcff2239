"""The Lua that appends to a stream, shared by both backends so they keep one stream format.

One script call appends a whole batch: one command to send and one reply (the ids) instead of an XADD, a
reply and a queued-reply parse per event, and Redis runs it atomically, so a relay blocked in XREAD wakes
once for all of it. Entry ids stay one per event, in order.

A batch with a writer is idempotent: its last entry carries the writer (`w`) and the sequence number of its
last item (`n`). A connection that drops after the script ran but before its answer arrived leaves the
publisher unsure; it sends the batch again, and the script, finding the stream's newest entry to be that
writer's at or past the batch's first item, appends only what is newer and answers the ids already written.
Atomicity makes a batch land whole or not at all, so only the newest entry needs the mark. (An attempt the
server runs after its retry, a timed-out command still in flight, finds the mark the same way.) A mark older than
the item before the batch means the stream lost that writer's newest items (a bus back from an older copy): the
script refuses with `PA_BEHIND <the newest number it has>` and the writer sends the lost items first
(`bus.stream_writer`).
"""

from __future__ import annotations

# KEYS[1] the stream; ARGV[1] maxlen (approximate trim), ARGV[2] retention seconds, ARGV[3] the writer ('' for
# none: no check, no mark), ARGV[4] the sequence number of the first payload, ARGV[5..] the payloads.
PUBLISH_BATCH = """
local n = #ARGV - 4
local first = tonumber(ARGV[4])
local skip = 0
if ARGV[3] ~= '' then
  local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  if newest then
    local f, writer, seq = newest[2], nil, nil
    for i = 1, #f - 1, 2 do
      if f[i] == 'w' then writer = f[i + 1] elseif f[i] == 'n' then seq = tonumber(f[i + 1]) end
    end
    if writer == ARGV[3] and seq then
      if seq < first - 1 then
        return redis.error_reply('PA_BEHIND ' .. string.format('%d', seq))
      end
      skip = math.min(n, seq - first + 1)
    end
  end
end
local ids = {}
if skip > 0 then
  local landed = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', skip)
  for i = #landed, 1, -1 do
    ids[#ids + 1] = landed[i][1]
  end
end
local last = first + n - 1
for i = 5 + skip, #ARGV do
  if i == #ARGV and ARGV[3] ~= '' then
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', ARGV[i], 'w', ARGV[3], 'n', last)
  else
    ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', ARGV[i])
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return ids
"""
