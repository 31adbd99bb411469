// The event core's hash map of routes and barriers (include/moesim/engine/flat_map.hpp) against
// std::unordered_map: whatever its probing and growth do, every key keeps its own value.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include "moesim/engine/flat_map.hpp"

using moesim::engine::FlatMap;

TEST_CASE("A flat map keeps every key's value through collisions and growth", "[engine][flat-map]") {
  std::mt19937_64 rng(11);
  FlatMap<int> map;
  std::unordered_map<std::uint64_t, int> expected;
  // The event core's keys: pairs of GPUs (from * GPUs + to), dense and clustered, plus random
  // 64-bit ones; a key's second lookup must find what its first stored.
  std::vector<std::uint64_t> keys;
  for (std::uint64_t from = 0; from < 64; ++from)
    for (std::uint64_t to = 0; to < 64; to += 3) keys.push_back(from * 8192 + to);
  for (int i = 0; i < 3000; ++i) keys.push_back(rng() % (FlatMap<int>::kFree - 1));
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (expected.count(keys[i])) continue;
    REQUIRE(map.find(keys[i]) == nullptr);
    map.add(keys[i], static_cast<int>(i));
    expected.emplace(keys[i], static_cast<int>(i));
  }
  REQUIRE(map.size() == expected.size());
  for (const auto& [key, value] : expected) {
    const int* found = map.find(key);
    REQUIRE(found != nullptr);
    CHECK(*found == value);
  }
  // Absent keys stay absent: a GPU pair's that was never added, and the largest allowed key.
  for (const std::uint64_t absent : {std::uint64_t{8192 * 64 + 1}, FlatMap<int>::kFree - 1})
    if (!expected.count(absent)) CHECK(map.find(absent) == nullptr);
}

TEST_CASE("A flat map's operator[] makes a value once and returns it after", "[engine][flat-map]") {
  FlatMap<std::vector<int>> barriers;
  barriers[42].push_back(1);
  barriers[42].push_back(2);
  barriers[7].push_back(3);
  for (std::uint64_t k = 100; k < 200; ++k) barriers[k].push_back(static_cast<int>(k));  // grows past 16 entries
  CHECK(barriers.size() == 102);
  CHECK(barriers[42] == std::vector<int>{1, 2});
  CHECK(barriers[7] == std::vector<int>{3});
  CHECK(barriers[150] == std::vector<int>{150});
  CHECK(barriers.size() == 102);
}

TEST_CASE("A flat map refuses the key it reserves for free entries", "[engine][flat-map]") {
  FlatMap<int> map;
  CHECK_THROWS_AS(map.add(FlatMap<int>::kFree, 1), std::invalid_argument);
  CHECK(map.find(FlatMap<int>::kFree) == nullptr);
}
