// SharedRate, the event core's GPU-private resource (SMs, NVLink egress port), against max-min
// sharing worked by hand: equal shares, a bound's leftover going to the others, jobs that end
// early or are removed.
#include <catch2/catch.hpp>

#include <cstdint>
#include <vector>

#include "moesim/engine/shared_rate.hpp"

using moesim::engine::SharedRate;

namespace {
// Runs `rate` to its next finish and returns the owners done there.
std::vector<std::uint32_t> next_done(SharedRate& rate, double& now) {
  std::vector<std::uint32_t> done;
  now = rate.next_finish_s();
  rate.take_finished(now, done);
  return done;
}
}  // namespace

TEST_CASE("one job runs at the whole capacity", "[engine][shared-rate]") {
  SharedRate port(400e9);  // an NVLink port, bytes/s
  port.add(1.0, 200e9, SharedRate::kUnbounded, 7);
  CHECK(port.next_finish_s() == Approx(1.5));
  double now = 0;
  CHECK(next_done(port, now) == std::vector<std::uint32_t>{7});
  CHECK(port.active() == 0);
  CHECK(port.next_finish_s() == SharedRate::kUnbounded);
}

TEST_CASE("equal jobs share equally and the survivor speeds up", "[engine][shared-rate]") {
  SharedRate sms(1.0);
  const int a = sms.add(0, 1.0, SharedRate::kUnbounded, 1);
  const int b = sms.add(0, 3.0, SharedRate::kUnbounded, 2);
  CHECK(sms.rate_of(a) == Approx(0.5));
  CHECK(sms.rate_of(b) == Approx(0.5));
  double now = 0;
  CHECK(next_done(sms, now) == std::vector<std::uint32_t>{1});
  CHECK(now == Approx(2.0));
  // b did 1 of its 3 in 2 s; the other 2 at the full rate.
  CHECK(next_done(sms, now) == std::vector<std::uint32_t>{2});
  CHECK(now == Approx(4.0));
}

TEST_CASE("a bounded job leaves the rest of the capacity to the others", "[engine][shared-rate]") {
  SharedRate sms(1.0);
  // A collective's kernels holding a quarter of the SMs until it ends, beside a compute task.
  const int hold = sms.add(0, SharedRate::kUnbounded, 0.25, 9);
  const int task = sms.add(0, 1.5, SharedRate::kUnbounded, 1);
  CHECK(sms.rate_of(hold) == Approx(0.25));
  CHECK(sms.rate_of(task) == Approx(0.75));
  CHECK(sms.next_finish_s() == Approx(2.0));
  // A bound above the equal share gets the equal share only.
  SharedRate two(1.0);
  const int greedy = two.add(0, SharedRate::kUnbounded, 0.75, 9);
  two.add(0, 1.0, SharedRate::kUnbounded, 1);
  CHECK(two.rate_of(greedy) == Approx(0.5));
  CHECK(two.next_finish_s() == Approx(2.0));
}

TEST_CASE("removing a held job speeds up the rest from that moment", "[engine][shared-rate]") {
  SharedRate sms(1.0);
  const int hold = sms.add(0, SharedRate::kUnbounded, 0.5, 9);
  sms.add(0, 1.0, SharedRate::kUnbounded, 1);
  const auto before = sms.version();
  sms.remove(1.0, hold);  // half of the task done in its first second
  CHECK(sms.version() != before);
  CHECK(sms.next_finish_s() == Approx(1.5));
  double now = 0;
  CHECK(next_done(sms, now) == std::vector<std::uint32_t>{1});
  // An infinite job never finishes on its own.
  SharedRate alone(1.0);
  alone.add(0, SharedRate::kUnbounded, 0.5, 9);
  CHECK(alone.next_finish_s() == SharedRate::kUnbounded);
}
