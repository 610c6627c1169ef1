--[[
decide-each.lua (include): decideEach(keys, argv, keysPerDecision, firstCost,
now, decide) runs a batch script's decisions in order: decision i has keys
keys[k] .. keys[k + keysPerDecision - 1], k = keysPerDecision x (i - 1) + 1,
and cost argv[firstCost + i - 1]; decide(k, cost) returns allowed, remaining,
resetAtMs, retryAfterMs. Returns the batch reply: { now, then those 4
integers per decision }, decision i at 4i-2 .. 4i+1.
KEYS, ARGV: none read here; the including script passes its KEYS and ARGV as
arguments (its own header declares them).
]]
local function decideEach(keys, argv, keysPerDecision, firstCost, now, decide)
  local reply = { now }
  for i = 1, #keys / keysPerDecision do
    local at = 4 * i - 2
    reply[at], reply[at + 1], reply[at + 2], reply[at + 3] =
      decide(keysPerDecision * (i - 1) + 1, tonumber(argv[firstCost + i - 1]))
  end
  return reply
end
