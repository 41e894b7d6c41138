-- The workload of bench/hint_real.py for Debian's lua5.4: a long-lived
-- index built once and rarely read (cold), a small working set read over
-- and over (hot), and short-lived strings and tables (neither).
-- Argument: rounds.  Prints a checksum that depends on the rounds only.
local rounds = tonumber(arg[1]) or 200

local index = {}
for i = 1, 20000 do
  index[i] = { id = i, name = "entry" .. i, tags = { i % 7, i % 11, i % 13 } }
end

local window = {}
for i = 1, 256 do
  window[i] = { x = i, y = i * 2 }
end

local checksum = 0
for round = 1, rounds do
  for sweep = 1, 20 do
    for i = 1, #window do
      local w = window[i]
      checksum = (checksum * 31 + w.x + w.y + sweep) % 1000000007
    end
  end
  local parts = {}
  for i = 1, 200 do
    parts[#parts + 1] = string.format("%d:%d", round, i)
  end
  local joined = table.concat(parts, ",")
  checksum = (checksum + #joined) % 1000000007
  local temp = {}
  for i = 1, 100 do
    temp[i] = { round, i }
  end
  checksum = (checksum + #temp) % 1000000007
end

checksum = (checksum + index[(rounds % #index) + 1].id) % 1000000007
print(checksum)
