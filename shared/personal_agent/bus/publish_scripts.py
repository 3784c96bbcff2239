"""The Lua that appends to a stream, shared by both backends so they keep one stream format.

One script call appends a whole batch as ONE stream entry (`bus.entry_ids`: its field `d` holds the items, one per
line; readers see each item under an id of its own, `<entry id>.<index>`, the last one the entry id itself). One
command to send, one XADD, one reply: where a batch of 40 text deltas was 40 XADDs, it is one; and Redis runs it
atomically, so a relay blocked in XREAD wakes once for all of it.

A batch with a writer is idempotent: its entry carries the writer (`w`) and the sequence number of its last item
(`n`). A connection that drops after the script ran but before its answer arrived leaves the publisher unsure; it
sends the batch again, and the script, finding the stream's newest entry to be that writer's at or past the batch's
first item, appends only what is newer (as an entry of its own) and answers the ids already written (found by
walking back over that writer's newest entries). Atomicity makes a batch land whole or not at all. (An attempt the
server runs after its retry, a timed-out command still in flight, finds the mark the same way.) A mark older than
the item before the batch means the stream lost that writer's newest items (a bus back from an older copy): the
script refuses with `PA_BEHIND <the newest number it has>` and the writer sends the lost items first
(`bus.stream_writer`).

The reply is the id of the stream's newest entry before the batch (`0-0` for a new stream; `''` when not known: no
writer, or a batch sent again), then the items' ids: with it, a reader in the writer's own process takes the batch
from the writer without reading it back (`bus.local_writes`), knowing nothing came between. The retention EXPIRE
runs only when asked (ARGV[2] > 0): a writer refreshes it on its first batch, after a failure, on a run's last
events and at most every minute (`bus.stream_writer`), not with every batch.
"""

from __future__ import annotations

# KEYS[1] the stream; ARGV[1] maxlen (approximate trim), ARGV[2] retention seconds (0: leave the expiry as it is),
# ARGV[3] the writer ('' for none: no check, no mark), ARGV[4] the sequence number of the first payload, ARGV[5..]
# the payloads (one line each). Replies {previous, ids...}.
PUBLISH_BATCH = """
local n = #ARGV - 4
local first = tonumber(ARGV[4])
local writer = ARGV[3]
local function fields(entry)
  local f, out = entry[2], {}
  for i = 1, #f - 1, 2 do out[f[i]] = f[i + 1] end
  return out
end
local skip = 0
local previous = ''
if writer ~= '' then
  local newest = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
  previous = newest and newest[1] or '0-0'
  if newest then
    local f = fields(newest)
    local seq = tonumber(f['n'])
    if f['w'] == writer and seq then
      if seq < first - 1 then
        return redis.error_reply('PA_BEHIND ' .. string.format('%d', seq))
      end
      skip = math.min(n, seq - first + 1)
    end
  end
end
if skip > 0 then previous = '' end
local ids = {previous}
if skip > 0 then
  local found = {}
  local landed = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', skip)
  for _, entry in ipairs(landed) do
    local f = fields(entry)
    local last = tonumber(f['n'])
    if f['w'] ~= writer or not last then break end
    local _, breaks = string.gsub(f['d'] or '', '\\n', '')
    local k = breaks + 1
    for j = 0, k - 1 do
      local number = last - (k - 1 - j)
      if j == k - 1 then found[number] = entry[1] else found[number] = entry[1] .. '.' .. j end
    end
    if last - k + 1 <= first then break end
  end
  for number = first, first + skip - 1 do ids[#ids + 1] = found[number] or '' end
end
if skip < n then
  local rest = {}
  for i = 5 + skip, #ARGV do rest[#rest + 1] = ARGV[i] end
  local id
  if writer ~= '' then
    id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', table.concat(rest, '\\n'), 'w', writer,
      'n', first + n - 1)
  else
    id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', table.concat(rest, '\\n'))
  end
  for j = 0, #rest - 2 do ids[#ids + 1] = id .. '.' .. j end
  ids[#ids + 1] = id
end
if tonumber(ARGV[2]) > 0 then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return ids
"""
