"""The league's Lua scripts (``store.league`` runs them): each touches the keys of one slot,
``{league}``, so that a Redis Cluster runs it on one primary."""

__all__ = ["LOCK", "LOOKOUT", "POOL", "SAVE", "SEEKERS", "SEEN", "SETTLE", "SWAP", "TAKE"]

# Save a versioned document (ARGV[1] the version read, "" to create); with ARGV[5]/[6], drop
# a token's key (KEYS[2]) and set another's (KEYS[3]) to name ARGV[4].
SAVE = """
local v = redis.call('HGET', KEYS[1], 'v') or ''
if v ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[2], 'blob', ARGV[3])
if tonumber(ARGV[7]) > 0 then redis.call('EXPIRE', KEYS[1], tonumber(ARGV[7])) end
if ARGV[5] == '1' then redis.call('DEL', KEYS[2]) end
if ARGV[6] == '1' then redis.call('SET', KEYS[3], ARGV[4]) end
return 1
"""

# Create a bot (KEYS[1]) named by its token's key (KEYS[2]) unless it exists or a name that
# looks like its own is another bot's (KEYS[3], the looks: ARGV[3..] its own), and hold its
# looks. ARGV = its blob, its key, its looks. 1: created; 0: the name (or a look) is taken.
CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
for i = 3, #ARGV do
  local held = redis.call('HGET', KEYS[3], ARGV[i])
  if held and held ~= ARGV[2] then return 0 end
end
redis.call('HSET', KEYS[1], 'v', '1', 'blob', ARGV[1])
redis.call('SET', KEYS[2], ARGV[2])
for i = 3, #ARGV do redis.call('HSET', KEYS[3], ARGV[i], ARGV[2]) end
return 1
"""

# Count a challenge among one organizer's bots' open ones to a bot (KEYS[1], by expiry)
# unless they hold ARGV[2] already: ARGV = now, that most, the challenge's id, its expiry.
HOLD = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[3])
local last = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
redis.call('EXPIREAT', KEYS[1], math.ceil(tonumber(last[2])) + 1)
return 1
"""

# A bot leaves the arena (KEYS[1] the pool, KEYS[2] when it last asked) if its account
# (KEYS[3]) is at version ARGV[2] (a revoke's: a rotation since, and a join, keeps it there).
LEAVE_AT = """
if redis.call('HGET', KEYS[3], 'v') ~= ARGV[2] then return 0 end
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('HDEL', KEYS[1], ARGV[1])
"""

# Settle a finished game once: KEYS = settled, log, games, free, ratings, board, then per bot
# its history, recent, playing and account keys. ARGV = game id, bots, log entry, now, then
# per bot its key, the rating blob read ("" for none), the new one ("" for an unrated game),
# its score, its history entry, its opponents (JSON), whether it sat first and whether a
# deadline decided for it ('1' or '0'). 0: settled before; -1: a rating moved since it was
# read; else {1, then per bot its league games in a row decided by deadlines}. The account's
# hash keeps what the matchmaker pairs by (``opponents``, ``first``) and the ``streak`` of
# games a deadline decided in, beside its document, written only while the account exists.
SETTLE = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
local n = tonumber(ARGV[2])
for i = 0, n - 1 do
  local a = 5 + i * 8
  if ARGV[a + 2] ~= '' then
    local now = redis.call('HGET', KEYS[5], ARGV[a]) or ''
    if now ~= ARGV[a + 1] then return -1 end
  end
end
local at = redis.call('RPUSH', KEYS[2], ARGV[3])
redis.call('HSET', KEYS[1], ARGV[1], at)
redis.call('HDEL', KEYS[3], ARGV[1])
local streaks = {1}
for i = 0, n - 1 do
  local a = 5 + i * 8
  local k = 7 + i * 4
  if ARGV[a + 2] ~= '' then
    redis.call('HSET', KEYS[5], ARGV[a], ARGV[a + 2])
    redis.call('ZADD', KEYS[6], ARGV[a + 3], ARGV[a])
    redis.call('RPUSH', KEYS[k], ARGV[a + 4])
    redis.call('LTRIM', KEYS[k], -500, -1)
  end
  redis.call('LPUSH', KEYS[k + 1], ARGV[1])
  redis.call('LTRIM', KEYS[k + 1], 0, 19)
  redis.call('SREM', KEYS[k + 2], ARGV[1])
  redis.call('HSET', KEYS[4], ARGV[a], ARGV[4])
  local streak = 0
  if redis.call('HEXISTS', KEYS[k + 3], 'blob') == 1 then
    if ARGV[a + 7] == '1' then
      streak = redis.call('HINCRBY', KEYS[k + 3], 'streak', 1)
    else
      redis.call('HSET', KEYS[k + 3], 'streak', 0)
    end
    redis.call('HSET', KEYS[k + 3], 'opponents', ARGV[a + 5], 'first', ARGV[a + 6])
  end
  streaks[#streaks + 1] = streak
end
return streaks
"""

# a bot's games in play, its tournaments, and its open challenges (the expired ones dropped)
LOOKOUT = """
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[1])
return {redis.call('SMEMBERS', KEYS[1]), redis.call('SMEMBERS', KEYS[2]),
        redis.call('ZRANGE', KEYS[3], 0, 49)}
"""

# bots in the pool asked: ARGV holds pairs (a bot, when it asked); a bot no longer in the
# pool is left unmarked
SEEN = """
for i = 1, #ARGV, 2 do
  if redis.call('HEXISTS', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
return 0
"""

# the arena's seeks, when each bot last asked and since when each has been free
POOL = """
return {redis.call('HGETALL', KEYS[1]), redis.call('HGETALL', KEYS[2]),
        redis.call('HGETALL', KEYS[3])}
"""

# what the matchmaker reads of each seeker (KEYS: per bot its account, games in play and
# day's count; ARGV: per bot how many games it may play at once): how many games it plays
# and has played today, and, where it may play one more, its account's blob, its last
# opponents (JSON) and whether it sat first (as SETTLE keeps them)
SEEKERS = """
local found = {}
for i = 1, #KEYS, 3 do
  local playing = redis.call('SCARD', KEYS[i + 1])
  if playing < tonumber(ARGV[(i + 2) / 3]) then
    local account = redis.call('HMGET', KEYS[i], 'blob', 'opponents', 'first')
    found[#found + 1] = account[1] or false
    found[#found + 1] = account[2] or false
    found[#found + 1] = account[3] or false
  else
    found[#found + 1] = false
    found[#found + 1] = false
    found[#found + 1] = false
  end
  found[#found + 1] = playing
  found[#found + 1] = redis.call('GET', KEYS[i + 2]) or false
end
return found
"""

# Seat a table of the arena (KEYS: pool, games, free, then per bot playing and day keys) if
# every bot is still in the pool with a free place (ARGV: game id, its LeagueGame, day's
# time to live, then per bot its key and how many games it may play at once).
TAKE = """
local n = (#ARGV - 3) / 2
for i = 0, n - 1 do
  local key = ARGV[4 + i * 2]
  if redis.call('HEXISTS', KEYS[1], key) == 0 then return 0 end
  if redis.call('SCARD', KEYS[4 + i * 2]) >= tonumber(ARGV[5 + i * 2]) then return 0 end
end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
for i = 0, n - 1 do
  redis.call('SADD', KEYS[4 + i * 2], ARGV[1])
  redis.call('HDEL', KEYS[3], ARGV[4 + i * 2])
  redis.call('INCR', KEYS[5 + i * 2])
  redis.call('EXPIRE', KEYS[5 + i * 2], tonumber(ARGV[3]))
end
return 1
"""

# the matchmaker's lock (KEYS[1]) for ARGV[1], for ARGV[2] ms: taken, or renewed by its holder
LOCK = """
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0
"""

# a league game's record (field ARGV[1] of KEYS[1]) replaced by ARGV[3] if it is still ARGV[2]:
# a record gone (settled) is not written back
SWAP = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""
