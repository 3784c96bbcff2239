"""The Lua behind the bus's counted slots, shared by both backends so they keep one key format.

A slot set is a sorted set: member = holder id, score = when its lease ends (ms since the epoch, the
relay's clock). Expired leases are dropped before counting, and the key itself expires with its newest
lease, so a relay that dies without releasing frees its slots after one lease at most.
"""

from __future__ import annotations

# KEYS[1] slot set; ARGV: now_ms, limit, lease_ms, holder. 0 = taken, else ms until the oldest lease ends.
ACQUIRE = """
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZSCORE', KEYS[1], ARGV[4]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[4])
  local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(newest[2]) - now))
  return 0
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return math.max(1, tonumber(oldest[2]) - now)
"""

# KEYS[1] slot set; ARGV: now_ms, lease_ms, holder.
RENEW = """
local now = tonumber(ARGV[1])
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[2]), ARGV[3])
local newest = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('PEXPIRE', KEYS[1], math.max(1, tonumber(newest[2]) - now))
return 0
"""
