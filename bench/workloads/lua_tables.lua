-- The script Debian's Lua 5.4 interpreter runs in the lua_tables workload
-- (bench/workloads.py): allocation-heavy code of the everyday kind, where
-- every table, string and closure is a block from Lua's one allocator
-- function (l_alloc: realloc and free).  Trees of tables built and walked
-- recursively, records made, sorted and grouped, strings formatted,
-- split and joined, closures made per item.  Argument: scale (default 1).
-- Prints one line of checksums, the same on every build.

local scale = tonumber(arg and arg[1]) or 1
local rounds = math.floor(60 * scale) + 1

local function tree(depth)
  if depth == 0 then
    return { value = depth }
  end
  return { left = tree(depth - 1), right = tree(depth - 1), value = depth }
end

local function check(node)
  if node.left then
    return node.value + check(node.left) + check(node.right)
  end
  return 1
end

local function records(count, seed)
  local list = {}
  for i = 1, count do
    seed = (seed * 1103515245 + 12345) % 2147483648
    list[i] = { id = i, key = string.format("k%05d-%d", seed % 10007, i % 13),
                score = seed % 1000, tags = { i % 3, i % 5, i % 7 } }
  end
  return list, seed
end

local function group(list)
  local groups, names = {}, {}
  for _, record in ipairs(list) do
    local name = record.key:sub(1, 3)
    local bucket = groups[name]
    if not bucket then
      bucket = {}
      groups[name] = bucket
      names[#names + 1] = name
    end
    bucket[#bucket + 1] = record
  end
  table.sort(names)
  local total = 0
  for i, name in ipairs(names) do
    total = total + #groups[name] * i
  end
  return total
end

local function text(list)
  local parts = {}
  for i, record in ipairs(list) do
    parts[i] = record.key .. "=" .. record.score
  end
  local joined = table.concat(parts, ";")
  local count, length = 0, 0
  for word in joined:gmatch("[^;]+") do
    count = count + 1
    length = length + #word:upper()
  end
  return count + length + #joined:gsub("k0", "K")
end

local function closures(list)
  local adders = {}
  for i, record in ipairs(list) do
    adders[i] = function(x) return x + record.score + i end
  end
  local sum = 0
  for i = 1, #adders do
    sum = (sum + adders[i](i)) % 1000000007
  end
  return sum
end

local checksum, seed = 0, 42
for round = 1, rounds do
  local long_lived = tree(10)
  checksum = checksum + check(tree(8 + round % 4)) + check(long_lived)
  local list
  list, seed = records(2000, seed)
  table.sort(list, function(a, b)
    if a.score ~= b.score then return a.score < b.score end
    return a.id < b.id
  end)
  checksum = (checksum + group(list) + text(list) + closures(list)
              + list[1].id) % 1000000007
end
print(string.format("lua_tables %d rounds checksum %d", rounds, checksum))
