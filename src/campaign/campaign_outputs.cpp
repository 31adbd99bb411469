// moesim campaign's files: CSV rows, the gnuplot files of goodput and time to train against the
// GPU count, and one sample's timeline as a Perfetto trace.
#include <fmt/format.h>

#include "moesim/batch/table_text.hpp"
#include "moesim/campaign/campaign.hpp"

namespace moesim::campaign {

namespace {

// campaign_json's figures, flat: {"wall_s": {"mean": ...}} -> wall_s_mean.
std::vector<std::pair<std::string, batch::Json>> flat_figures(const CampaignResult& r) {
  std::vector<std::pair<std::string, batch::Json>> out;
  const batch::Json figures = batch::Json::parse(campaign_json(r).dump());  // the writers' JSON type
  for (const auto& [key, value] : figures.items()) {
    if (!value.is_object()) {
      out.emplace_back(key, value);
      continue;
    }
    for (const char* part : {"mean", "p5", "p95"}) out.emplace_back(key + "_" + part, value.at(part));
  }
  return out;
}

}  // namespace

std::string campaign_csv(const std::vector<CampaignResult>& rows) {
  std::vector<std::vector<std::string>> lines;
  for (const CampaignResult& r : rows) {
    const auto figures = flat_figures(r);
    if (lines.empty()) {
      lines.emplace_back();
      for (const auto& [key, value] : figures) lines.back().push_back(key);
    }
    lines.emplace_back();
    for (const auto& [key, value] : figures) lines.back().push_back(batch::plain_value(value));
  }
  return batch::csv_text(lines);
}

std::vector<batch::PlotFile> campaign_plot_files(const std::vector<CampaignResult>& rows) {
  std::string data = "# gpus days days_p5 days_p95 goodput_pct\n";
  for (const CampaignResult& r : rows) {
    const Spread& w = r.samples.wall_s;
    data += fmt::format("{} {} {} {} {}\n", r.gpus, w.mean / 86400, w.p5 / 86400, w.p95 / 86400,
                        100 * r.samples.goodput);
  }
  const std::string title = rows.empty() ? std::string() : rows.front().scenario;
  std::string script = "set terminal pngcairo size 900,560 noenhanced\nset grid\nset logscale x 2\n"
                       "set xlabel 'GPUs'\nset key top right\n";
  script += fmt::format("set title {}\n", batch::gnuplot_quoted(title + ": time to train (5 % - 95 %)"));
  script += "set ylabel 'days'\n";
  script += batch::png_and_svg("campaign-days", "plot 'campaign.dat' using 1:2:3:4 with yerrorlines title 'days to train'\n");
  script += fmt::format("set title {}\n", batch::gnuplot_quoted(title + ": goodput"));
  script += "set ylabel 'goodput (%)'\n";
  script += batch::png_and_svg("campaign-goodput", "plot 'campaign.dat' using 1:5 with linespoints title 'goodput'\n");
  return {{"campaign.dat", data}, {"campaign.gp", script}};
}

std::vector<std::string> campaign_plot_images() {
  return {"campaign-days.png", "campaign-days.svg", "campaign-goodput.png", "campaign-goodput.svg"};
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::training: return "training";
    case Phase::checkpoint: return "checkpoint";
    case Phase::lost_work: return "training lost to an interruption";
    case Phase::recovery: return "recovery";
    case Phase::interrupted_recovery: return "recovery cut short by an interruption";
    case Phase::checkpoint_drain: return "checkpoint draining to storage";
  }
  return "?";
}

nlohmann::json campaign_trace(const CampaignResult& r) {
  nlohmann::json events = nlohmann::json::array();
  // One track per kind of phase, named once (Perfetto's metadata events).
  const Phase phases[] = {Phase::training, Phase::checkpoint, Phase::lost_work, Phase::recovery,
                          Phase::interrupted_recovery, Phase::checkpoint_drain};
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", r.scenario + " campaign"}}}});
  for (const Phase p : phases)
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", static_cast<int>(p) + 1},
                      {"args", {{"name", to_string(p)}}}});
  for (const PhaseSpan& span : r.samples.timeline) {
    const int track = static_cast<int>(span.phase) + 1;
    events.push_back({{"name", to_string(span.phase)}, {"ph", "X"}, {"pid", 1}, {"tid", track},
                      {"ts", span.start_s * 1e6}, {"dur", span.duration_s * 1e6}});
  }
  for (const double at_s : r.samples.interruption_times_s)  // process-wide instants
    events.push_back({{"name", "interruption"}, {"ph", "i"}, {"s", "p"}, {"pid", 1}, {"tid", 1}, {"ts", at_s * 1e6}});
  return {{"traceEvents", events},
          {"displayTimeUnit", "ms"},
          {"otherData",
           {{"scenario", r.scenario}, {"gpus", r.gpus}, {"sample", 0}, {"seed", r.inputs.seed},
            {"truncated", r.samples.timeline_truncated}}}};
}

}  // namespace moesim::campaign
