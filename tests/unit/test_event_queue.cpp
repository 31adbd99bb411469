// The full fidelity's event queue (include/moesim/engine/event_queue.hpp) against a sorted set:
// whatever its buckets do, it must hand events out in (date, sequence) order, the order the
// engine's results depend on. And the event core's hash map of routes and barriers
// (include/moesim/engine/flat_map.hpp) against std::unordered_map: whatever its probing and
// growth do, every key keeps its own value. (In this file rather than one of its own: a new file
// regroups the unity build's test batches, and GCC 12 then warns falsely (-Wrestrict) on another
// batch's strings.)
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#include <vector>

#include "moesim/engine/event_queue.hpp"
#include "moesim/engine/flat_map.hpp"

using moesim::engine::EventKind;
using moesim::engine::EventQueue;

TEST_CASE("The event queue hands events out in (date, sequence) order", "[engine][event-queue]") {
  // A run's pattern: many events due at once, many sharing a later date (a barrier's members
  // woken after one latency), dates a few ulps apart, and events scheduled after a look at the
  // earliest one but before it (a transfer that ends first wakes a stream after a latency).
  std::mt19937_64 rng(7);
  EventQueue queue;
  std::set<std::pair<double, std::uint64_t>> expected;  // (date, the order it was scheduled)
  std::uint64_t scheduled = 0;
  double now = 0;
  const double shared_dates[] = {1e-6, 2.5e-6, 1e-3, 0.125};
  auto schedule = [&](double t) {
    queue.push(t, now, EventKind::wake, 0, scheduled);
    expected.emplace(t, scheduled++);
  };
  for (int i = 0; i < 200; ++i) schedule(std::uniform_real_distribution<double>(0, 1)(rng));
  std::size_t taken = 0;
  while (!queue.empty()) {
    REQUIRE(!expected.empty());
    const auto seen = queue.top();
    REQUIRE(seen.t == expected.begin()->first);
    const bool earlier_one = rng() % 4 == 0 && seen.t > now;
    if (earlier_one) schedule(now + (seen.t - now) / 2);  // before the one looked at
    const auto e = queue.pop();
    REQUIRE(std::make_pair(e.t, static_cast<std::uint64_t>(e.value)) == *expected.begin());
    if (!earlier_one) REQUIRE(e.value == seen.value);  // top() shows the event pop() takes
    expected.erase(expected.begin());
    now = e.t;
    ++taken;
    if (scheduled > 60000) continue;
    switch (rng() % 5) {
      case 0: schedule(now); schedule(now); break;                        // due at once
      case 1: schedule(now + shared_dates[rng() % 4]); break;             // a shared later date
      case 2: schedule(std::nextafter(now + 1e-3, 1.0)); break;           // an ulp past another
      case 3: schedule(now + std::uniform_real_distribution<double>(0, 0.01)(rng)); break;
      default: break;
    }
  }
  CHECK(expected.empty());
  CHECK(taken == scheduled);
  CHECK(taken > 50000);
}

TEST_CASE("The event queue refuses an event before the last date taken out", "[engine][event-queue]") {
  EventQueue queue;
  queue.push(2.0, 0, EventKind::wake, 0, 0);
  queue.push(3.0, 0, EventKind::wake, 0, 1);
  CHECK(queue.pop().t == 2.0);
  CHECK_THROWS_AS(queue.push(1.0, 0, EventKind::wake, 0, 2), std::logic_error);
}

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
  // Absent keys stay absent, including 0 and the largest allowed one.
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
