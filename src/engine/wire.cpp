// Results cross from the simulating child process to the parent as JSON (doubles round-trip
// exactly through nlohmann's shortest representation, so results stay deterministic).
#include <nlohmann/json.hpp>

#include "moesim/engine/result_json.hpp"
#include "moesim/engine/simulate.hpp"

namespace moesim::engine {

std::string to_wire(const SimResult& r) {
  nlohmann::json j;
  j["step_time_s"] = r.step_time_s;
  j["activities"] = r.activities;
  j["simulated_gpus"] = r.simulated_gpus;
  j["stages"] = nlohmann::json::array();
  for (const StageResult& s : r.stages) {
    nlohmann::json st = {{"pp_rank", s.pp_rank}, {"observed_rank", s.observed_rank},
                         {"replicas", s.replicas}, {"finish_s", s.finish_s},
                         {"mean_busy_share", s.mean_busy_share},
                         {"breakdown", s.breakdown}, {"traffic", s.traffic}};
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
    s.mean_busy_share = st.at("mean_busy_share");
    s.breakdown = st.at("breakdown").get<Breakdown>();
    s.traffic = st.at("traffic").get<Traffic>();
    for (const auto& iv : st.at("timeline")) s.timeline.push_back({iv[0], iv[1], iv[2]});
    r.stages.push_back(std::move(s));
  }
  return r;
}

}  // namespace moesim::engine
