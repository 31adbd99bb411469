// make_topology and the SimGrid platform builder (hosts, links, routes).
#include <catch2/catch.hpp>

#include <stdexcept>
#include <string>

#include "test_platform_support.hpp"

using namespace moesim;
using namespace moesim::platform;
using namespace moesim::platform::testing;

namespace {
SystemSpec gb300_system() {
  SystemSpec s;
  s.name = "GB300 NVL72 (test)";
  s.gpu.name = "GB300";
  s.gpu.bf16_flop_per_s = 2.5e15;
  s.gpu.fp8_flop_per_s = 5e15;
  s.domain_gpus = 72;
  s.nvlink_bytes_per_s = 900e9;
  s.nvlink_latency_s = 1e-6;
  s.nic_bytes_per_s = 100e9;
  s.nic_latency_s = 1e-6;
  s.fabric.oversubscription = 2;
  s.fabric.switch_latency_s = 0.5e-6;
  return s;
}
}  // namespace

TEST_CASE("make_topology copies the system and picks the precision's peak", "[platform]") {
  const Topology t = make_topology(gb300_system(), 144, 0, Precision::fp8);
  CHECK(t.gpus == 144);
  CHECK(t.gpus_per_domain == 72);
  CHECK(t.domains() == 2);
  CHECK(t.gpu_flop_per_s == 5e15);
  CHECK(t.nvlink_bytes_per_s == 900e9);
  CHECK(t.spine_share_bytes_per_s() == Approx(50e9));
  CHECK(t.scaleout_latency_s() == Approx(2e-6 + 1.5e-6));
  CHECK(t.domain_of(71) == 0);
  CHECK(t.domain_of(72) == 1);

  const Topology partial = make_topology(gb300_system(), 100, 64, Precision::bf16);
  CHECK(partial.gpus_per_domain == 64);
  CHECK(partial.domains() == 2);
  CHECK(partial.gpu_flop_per_s == 2.5e15);
}

TEST_CASE("make_topology rejects impossible layouts", "[platform]") {
  CHECK_THROWS_AS(make_topology(gb300_system(), 0, 0, Precision::bf16), std::invalid_argument);
  CHECK_THROWS_AS(make_topology(gb300_system(), 72, 73, Precision::bf16), std::invalid_argument);
}

TEST_CASE("full platform: one host per GPU with the GPU's speed, and its NVLink port's", "[platform]") {
  const Topology t = gb300_like(100, 72);  // a partial second domain
  const std::string out = run_isolated([&] {
    auto engine = make_engine();
    auto p = Platform::build(t, Fidelity::full);
    // Each GPU is two hosts: its SMs and its NVLink egress port (Platform::start_nvlink_egress).
    int gpu_hosts = 0, port_hosts = 0;
    for (const auto* h : engine->get_all_hosts()) {
      const bool port = h->get_name().find("-nvl-port") != std::string::npos;
      (port ? port_hosts : gpu_hosts) += 1;
      if (port && h->get_speed() != t.nvlink_bytes_per_s) return std::string("port at the wrong speed");
    }
    std::string s = std::to_string(gpu_hosts) + " " + std::to_string(port_hosts) + " " +
                    std::to_string(p->host(99)->get_speed());
    s += p->has_host(100) ? " yes" : " no";
    try {
      p->nvlink_mirror(0);
      s += " mirror";
    } catch (const std::logic_error&) {
      s += " no-mirror";
    }
    return s;
  });
  CHECK(out == "100 100 " + std::to_string(2.5e15) + " no no-mirror");
}

TEST_CASE("full platform: a GPU's NVLink flows share its egress port max-min, caps honoured", "[platform]") {
  const Topology t = gb300_like(16, 8);  // 900 GB/s ports
  // Two flows of 90 GB out of GPU 3 at once: 0.2 s each. Then one capped at 300 GB/s beside an
  // uncapped one: the uncapped one takes what the cap leaves, 600 GB/s (90/600 = 0.15 s), the
  // capped one 90/300 = 0.3 s.
  const std::string out = run_isolated([&] {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    auto p = Platform::build(t, Fidelity::full);
    std::string s;
    sg4::Actor::create("flows", p->host(3), [&] {
      auto a = p->start_nvlink_egress(3, 90e9, 0);
      auto b = p->start_nvlink_egress(3, 90e9, 0);
      a->wait();
      b->wait();
      s += format_seconds(sg4::Engine::get_clock());
      const double start = sg4::Engine::get_clock();
      auto capped = p->start_nvlink_egress(3, 90e9, 300e9);
      auto uncapped = p->start_nvlink_egress(3, 90e9, 0);
      uncapped->wait();
      s += " " + format_seconds(sg4::Engine::get_clock() - start);
      capped->wait();
      s += " " + format_seconds(sg4::Engine::get_clock() - start);
    });
    engine->run();
    return s;
  });
  CHECK(std::stod(out.substr(0, out.find(' '))) == Approx(0.2));
  const double uncapped_s = std::stod(out.substr(out.find(' ') + 1, out.rfind(' ') - out.find(' ') - 1));
  const double capped_s = std::stod(out.substr(out.rfind(' ') + 1));
  CHECK(uncapped_s == Approx(90e9 / 600e9));
  CHECK(capped_s == Approx(90e9 / 300e9));
  const std::string folded = run_isolated([&] {
    auto engine = make_engine();
    auto p = Platform::build(t, Fidelity::folded, {0});
    try {
      p->start_nvlink_egress(0, 1e9, 0);
    } catch (const std::logic_error&) {
      return std::string("full only");
    }
    return std::string("started");
  });
  CHECK(folded == "full only");
}

TEST_CASE("folded platform: representatives plus three mirrors each (NVLink, leaf, spine)", "[platform]") {
  const Topology t = gb300_like(1024, 72);
  const std::string out = run_isolated([&] {
    auto engine = make_engine();
    auto p = Platform::build(t, Fidelity::folded, {5, 700});
    std::string s = std::to_string(engine->get_host_count());
    s += p->has_host(5) && p->has_host(700) && !p->has_host(6) ? " ok" : " bad";
    s += p->nvlink_mirror(5) != p->scaleout_mirror(5) && p->leaf_mirror(5) != p->scaleout_mirror(5) &&
                 p->leaf_mirror(5) != p->nvlink_mirror(5)
             ? " distinct"
             : " same";
    return s;
  });
  CHECK(out == "8 ok distinct");
}

TEST_CASE("folded platform rejects bad representatives", "[platform]") {
  const Topology t = gb300_like(16, 8);
  auto build_with = [&](std::vector<int> reps) {
    return run_isolated([&] {
      auto engine = make_engine();
      Platform::build(t, Fidelity::folded, reps);
      return std::string("built");
    });
  };
  CHECK_THROWS_WITH(build_with({3, 3}), Catch::Contains("listed twice"));
  CHECK_THROWS_WITH(build_with({16}), Catch::Contains("outside"));
}

TEST_CASE("a single transfer costs latency plus bytes over bandwidth on every route", "[platform]") {
  // 900 MB: NVLink 1 ms + 1 us; NIC across domains 9 ms + 3.5 us (nic, uplink, uplink, nic).
  const Topology t = gb300_like(144, 72);
  const std::string out = run_isolated([&] {
    namespace sg4 = simgrid::s4u;
    auto engine = make_engine();
    auto p = Platform::build(t, Fidelity::full);
    std::string s;
    sg4::Actor::create("probe", p->host(0), [&] {
      double t0 = sg4::Engine::get_clock();
      sg4::Comm::sendto(p->host(0), p->host(1), 900'000'000);
      s += format_seconds(sg4::Engine::get_clock() - t0) + " ";
      t0 = sg4::Engine::get_clock();
      sg4::Comm::sendto(p->host(0), p->host(100), 900'000'000);
      s += format_seconds(sg4::Engine::get_clock() - t0);
    });
    engine->run();
    return s;
  });
  double intra = 0, inter = 0;
  REQUIRE(std::sscanf(out.c_str(), "%lf %lf", &intra, &inter) == 2);
  CHECK(intra == Approx(1e-3 + 1e-6).epsilon(1e-9));
  CHECK(inter == Approx(9e-3 + 3.5e-6).epsilon(1e-9));
}
