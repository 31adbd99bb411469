// Results cross from the simulating child process to the parent as JSON (doubles round-trip
// exactly through nlohmann's shortest representation, so results stay deterministic).
#include <nlohmann/json.hpp>

#include "moesim/engine/simulate.hpp"

namespace moesim::engine {

namespace {

nlohmann::json breakdown_json(const Breakdown& b) {
  return {{"compute_s", b.compute_s},         {"recompute_s", b.recompute_s},
          {"host_overhead_s", b.host_overhead_s}, {"optimizer_s", b.optimizer_s},
          {"exposed_tp_s", b.exposed_tp_s},   {"exposed_ep_dispatch_s", b.exposed_ep_dispatch_s},
          {"exposed_ep_combine_s", b.exposed_ep_combine_s}, {"exposed_pp_s", b.exposed_pp_s},
          {"exposed_dp_s", b.exposed_dp_s},   {"bubble_s", b.bubble_s}};
}

Breakdown breakdown_from(const nlohmann::json& j) {
  Breakdown b;
  b.compute_s = j.at("compute_s");
  b.recompute_s = j.at("recompute_s");
  b.host_overhead_s = j.at("host_overhead_s");
  b.optimizer_s = j.at("optimizer_s");
  b.exposed_tp_s = j.at("exposed_tp_s");
  b.exposed_ep_dispatch_s = j.at("exposed_ep_dispatch_s");
  b.exposed_ep_combine_s = j.at("exposed_ep_combine_s");
  b.exposed_pp_s = j.at("exposed_pp_s");
  b.exposed_dp_s = j.at("exposed_dp_s");
  b.bubble_s = j.at("bubble_s");
  return b;
}

nlohmann::json traffic_json(const Traffic& t) {
  return {{"ep_nvlink_bytes", t.ep_nvlink_bytes},       {"ep_nic_bytes", t.ep_nic_bytes},
          {"other_nvlink_bytes", t.other_nvlink_bytes}, {"other_nic_bytes", t.other_nic_bytes},
          {"ep_copies_per_token", t.ep_copies_per_token}, {"ep_domains_per_token", t.ep_domains_per_token}};
}

Traffic traffic_from(const nlohmann::json& j) {
  Traffic t;
  t.ep_nvlink_bytes = j.at("ep_nvlink_bytes");
  t.ep_nic_bytes = j.at("ep_nic_bytes");
  t.other_nvlink_bytes = j.at("other_nvlink_bytes");
  t.other_nic_bytes = j.at("other_nic_bytes");
  t.ep_copies_per_token = j.at("ep_copies_per_token");
  t.ep_domains_per_token = j.at("ep_domains_per_token");
  return t;
}

}  // namespace

std::string to_wire(const SimResult& r) {
  nlohmann::json j;
  j["step_time_s"] = r.step_time_s;
  j["activities"] = r.activities;
  j["simulated_gpus"] = r.simulated_gpus;
  j["stages"] = nlohmann::json::array();
  for (const StageResult& s : r.stages) {
    nlohmann::json st = {{"pp_rank", s.pp_rank}, {"observed_rank", s.observed_rank},
                         {"replicas", s.replicas}, {"finish_s", s.finish_s},
                         {"breakdown", breakdown_json(s.breakdown)}, {"traffic", traffic_json(s.traffic)}};
    nlohmann::json tl = nlohmann::json::array();
    for (const TaskInterval& iv : s.timeline) tl.push_back({iv.task, iv.start_s, iv.end_s});
    st["timeline"] = std::move(tl);
    j["stages"].push_back(std::move(st));
  }
  return j.dump();
}

SimResult from_wire(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  SimResult r;
  r.step_time_s = j.at("step_time_s");
  r.activities = j.at("activities");
  r.simulated_gpus = j.at("simulated_gpus");
  for (const auto& st : j.at("stages")) {
    StageResult s;
    s.pp_rank = st.at("pp_rank");
    s.observed_rank = st.at("observed_rank");
    s.replicas = st.at("replicas");
    s.finish_s = st.at("finish_s");
    s.breakdown = breakdown_from(st.at("breakdown"));
    s.traffic = traffic_from(st.at("traffic"));
    for (const auto& iv : st.at("timeline")) s.timeline.push_back({iv[0], iv[1], iv[2]});
    r.stages.push_back(std::move(s));
  }
  return r;
}

}  // namespace moesim::engine
