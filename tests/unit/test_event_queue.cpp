// The full fidelity's event queue (include/moesim/engine/event_queue.hpp) against a sorted set:
// whatever its buckets do, it must hand events out in (date, sequence) order, the order the
// engine's results depend on.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

#include "moesim/engine/event_queue.hpp"

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

TEST_CASE("An event keeps its GPU, up to 2^24 - 1, its kind and its value through the queue", "[engine][event-queue]") {
  // The GPU and the kind share one word (event_queue.hpp): neither may spill into the other.
  const EventKind kinds[] = {EventKind::wake, EventKind::compute_due, EventKind::port_due, EventKind::transfer_done};
  const int gpus[] = {0, 1, 8191, (1 << 23) + 5, (1 << 24) - 1};
  EventQueue queue;
  std::uint32_t value = 0;
  for (const EventKind kind : kinds)
    for (const int gpu : gpus) {
      queue.push(1.0 + value, 0, kind, gpu, 0xFFFFFFF0u + value);
      ++value;
    }
  value = 0;
  for (const EventKind kind : kinds)
    for (const int gpu : gpus) {
      const auto e = queue.pop();
      CHECK(e.t == 1.0 + value);
      CHECK(e.gpu() == gpu);
      CHECK(e.kind() == kind);
      CHECK(e.value == 0xFFFFFFF0u + value);
      ++value;
    }
  CHECK(queue.empty());
}
