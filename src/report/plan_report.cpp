// `moesim plan`: what the layout looks like on the machine, and whether it fits in memory.
#include <fmt/format.h>

#include "moesim/platform/collective.hpp"
#include "moesim/report/report.hpp"

namespace moesim::report {

namespace {

struct GroupRow {
  std::string name;
  std::vector<int> ranks;
};

// The groups of the first GPU of every pipeline rank (all other GPUs mirror them).
std::vector<GroupRow> groups_of(const plan::Layout& l, int pp_rank) {
  const int rank = l.dense_rank(0, 0, 0, pp_rank);
  return {{"tp", l.tp_group(rank)},   {"cp", l.cp_group(rank)}, {"ep", l.ep_group(rank)},
          {"dp", l.dp_group(rank)},   {"edp", l.edp_group(rank)}, {"pp", l.pp_group(rank)}};
}

std::string rank_span(const std::vector<int>& ranks) {
  if (ranks.size() == 1) return fmt::format("{}", ranks.front());
  const int stride = ranks[1] - ranks[0];
  return fmt::format("{}..{} step {}", ranks.front(), ranks.back(), stride);
}

}  // namespace

nlohmann::json plan_json(const Scenario& s, const plan::Layout& l,
                         const std::vector<plan::MemoryBreakdown>& memory, const driver::FitReport* fits_if) {
  const platform::Topology topo = platform::scenario_topology(s);
  nlohmann::json j;
  j["scenario"] = s.name;
  j["gpus"] = s.gpus;
  j["system"] = s.system.name;
  j["nvlink_domains"] = topo.domains();
  j["gpus_per_domain"] = topo.gpus_per_domain;
  j["placement"] = s.placement;
  j["layout"] = {{"tp", l.tp}, {"cp", l.cp}, {"pp", l.pp}, {"vpp", l.vpp}, {"ep", l.ep},
                 {"etp", l.etp}, {"dp", l.dp}, {"edp", l.edp}, {"microbatches", l.microbatches},
                 {"schedule", plan::to_string(l.schedule)},
                 {"pipeline_layout", l.pipeline_layout},
                 {"pipeline_layout_generated", l.pipeline_layout_generated}};
  j["stages"] = nlohmann::json::array();
  for (const auto& v : l.stages)
    j["stages"].push_back({{"pp_rank", v.pp_rank}, {"chunk", v.chunk}, {"first_layer", v.first_layer},
                           {"layers", v.layers}, {"embedding", v.embedding}, {"output", v.output},
                           {"mtp_layers", v.mtp_layers}});
  j["groups"] = nlohmann::json::array();
  for (int p = 0; p < l.pp; ++p)
    for (const auto& g : groups_of(l, p)) {
      const platform::GroupPlacement pl = platform::placement(topo, platform::Group{g.ranks});
      j["groups"].push_back({{"pp_rank", p}, {"kind", g.name}, {"size", pl.size},
                             {"ranks", g.ranks}, {"domains_spanned", pl.domains_spanned},
                             {"within_domain", pl.domains_spanned <= 1},
                             {"bottleneck", std::string(pl.bottleneck_tier)}});
    }
  bool fits = true;
  j["memory"] = nlohmann::json::array();
  for (const auto& m : memory) {
    fits = fits && m.fits();
    j["memory"].push_back(memory_json(l, m));
  }
  j["fits_in_memory"] = fits;
  if (fits_if) j["fits_if"] = fit_json(*fits_if);
  return j;
}

std::string plan_table(const Scenario& s, const plan::Layout& l,
                       const std::vector<plan::MemoryBreakdown>& memory, const driver::FitReport* fits_if) {
  const platform::Topology topo = platform::scenario_topology(s);
  std::string out = fmt::format("{}\n", s.name);
  out += fmt::format("  {} GPUs on {}: {} NVLink domain(s) of {} GPUs used{}\n", s.gpus, s.system.name,
                     topo.domains(), topo.gpus_per_domain,
                     s.placement == "in_order" ? "" : fmt::format(", nodes placed {}", s.placement));
  out += fmt::format("  TP{} CP{} PP{} VPP{} EP{} ETP{} -> DP{} EDP{}; {} micro-batches of {} per step, {} schedule\n",
                     l.tp, l.cp, l.pp, l.vpp, l.ep, l.etp, l.dp, l.edp, l.microbatches, l.micro_batch,
                     plan::to_string(l.schedule));
  out += fmt::format("  pipeline layout{}: {}\n\n", l.pipeline_layout_generated ? " (generated)" : "",
                     l.pipeline_layout);
  out += "  groups of the first GPU of each pipeline rank\n";
  out += fmt::format("  {:<6}{:<6}{:>6}  {:<24}{:>9}  {}\n", "pp", "group", "size", "ranks", "domains",
                     "bottleneck");
  for (int p = 0; p < l.pp; ++p)
    for (const auto& g : groups_of(l, p)) {
      const platform::GroupPlacement pl = platform::placement(topo, platform::Group{g.ranks});
      out += fmt::format("  {:<6}{:<6}{:>6}  {:<24}{:>9}  {}\n", p, g.name, pl.size, rank_span(g.ranks),
                         pl.domains_spanned,
                         pl.domains_spanned <= 1 ? fmt::format("{} (stays in its domain)", pl.bottleneck_tier)
                                                 : std::string(pl.bottleneck_tier));
    }
  out += memory_table(l, memory);
  if (fits_if) out += fit_table(*fits_if);
  return out;
}

}  // namespace moesim::report
