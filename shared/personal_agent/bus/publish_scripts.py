"""The Lua that appends to a stream, shared by both backends so they keep one stream format.

One script call appends a whole batch: one command to send and one reply (the ids) instead of an XADD, a
reply and a queued-reply parse per event, and Redis runs it atomically, so a relay blocked in XREAD wakes
once for all of it. Entry ids stay one per event, in order.
"""

from __future__ import annotations

# KEYS[1] the stream; ARGV[1] maxlen (approximate trim), ARGV[2] retention seconds, ARGV[3..] the payloads.
PUBLISH_BATCH = """
local ids = {}
for i = 3, #ARGV do
  ids[#ids + 1] = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', ARGV[i])
end
redis.call('EXPIRE', KEYS[1], ARGV[2])
return ids
"""
