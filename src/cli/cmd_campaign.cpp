// moesim campaign SCENARIO --tokens 14.8T: the simulated step turned into a whole training run on
// the cluster's published reliability (configs/reliability/): time to train, GPU-hours, goodput,
// interruptions, energy and cost.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <memory>

#include "command_files.hpp"
#include "commands.hpp"
#include "moesim/batch/gnuplot.hpp"
#include "moesim/campaign/campaign.hpp"
#include "moesim/config/error.hpp"
#include "moesim/config/loader.hpp"
#include "moesim/util/suffixed_number.hpp"
#include "shared_options.hpp"

namespace moesim::cli {

namespace {

// A token count: a number with an optional K, M, B (or G) or T suffix (powers of 1000).
double parse_tokens(const std::string& text) {
  const util::SuffixedNumber tokens =
      util::parse_suffixed_number(text, {{"K", 1e3}, {"k", 1e3}, {"M", 1e6}, {"B", 1e9}, {"G", 1e9}, {"T", 1e12}});
  const double v = tokens.value;
  if (tokens.status != util::SuffixedNumber::Status::ok || !std::isfinite(v) || v <= 0 || v > 1e18)
    throw CLI::ValidationError("--tokens", "a token count above 0 and at most 1e18, a number with an optional K, M, "
                                           "B or T suffix (powers of 1000), e.g. 14.8T; got \"" + text + "\"");
  return v;
}

struct CampaignArgs {
  std::string scenario, configs, output, format = "table", reliability = "llama3-405b-h100", tokens, gpus, plot, trace;
  std::string checkpoint = "sync";
  double interval_min = 0, price = 0;
  int samples = 200, spares = -1;
  std::uint64_t seed = 1;
};

}  // namespace

void add_campaign_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("campaign", "Turn the simulated step into a whole training run: time to train, "
                                             "GPU-hours, failures, checkpoints, goodput, energy, cost");
  auto a = std::make_shared<CampaignArgs>();
  cmd->add_option("scenario", a->scenario, "Scenario JSON file")->required();
  cmd->add_option("--tokens", a->tokens, "Tokens to train on, e.g. 14.8T (K, M, B, T: powers of 1000)")->required();
  cmd->add_option("--reliability", a->reliability,
                  "Failure rates, recovery and checkpoint bandwidth: a name in configs/reliability/ or a JSON file")
      ->capture_default_str();
  cmd->add_option("--checkpoint-interval-min", a->interval_min,
                  "Minutes of training between two checkpoints (default: Young/Daly's optimum)")
      ->check(CLI::Range(1e-3, 1e6));
  cmd->add_option("--checkpoint", a->checkpoint,
                  "sync: the step waits for each save's write; async: only for its copy to host memory, the write "
                  "draining behind the training (slower by the reliability file's async_drain_slowdown)")
      ->check(CLI::IsMember({"sync", "async"}))
      ->capture_default_str();
  cmd->add_option("--spares", a->spares,
                  "Warm standby nodes held beside the job (billed): a failed node is replaced without requeue and "
                  "repaired back into the pool; software faults restart in place (0: in place only)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--price-per-gpu-hour", a->price, "Price of one GPU-hour, for the cost (default: none)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--samples", a->samples, "Campaigns drawn (failures differ by sample)")
      ->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--seed", a->seed, "Seed of the failure draws")->capture_default_str();
  cmd->add_option("--gpus", a->gpus, "The same campaign at these GPU counts (weak scaling: the layout kept, the global "
                                     "batch grown with the GPUs), e.g. 256,512,1024");
  cmd->add_option("--format", a->format, "Output format (csv: one row per campaign)")
      ->check(CLI::IsMember({"table", "json", "csv"}));
  auto* gpus_option = cmd->get_option("--gpus");
  cmd->add_option("--plot", a->plot, "With --gpus: a folder for the plots (gnuplot, PNG and SVG) of time to train and "
                                     "goodput against the GPU count, with their data and script")
      ->needs(gpus_option);
  cmd->add_option("--trace", a->trace, "The first sample's timeline (training, checkpoints, interruptions, recoveries) "
                                       "as a Perfetto trace (JSON); one campaign, without --gpus")
      ->excludes(gpus_option);
  cmd->add_option("--configs", a->configs, "configs/ directory (default: found from the scenario)");
  cmd->add_option("-o,--output", a->output, "Write to this file instead of stdout");
  cmd->callback([a] {
    campaign::CampaignOptions o;
    o.tokens = parse_tokens(a->tokens);
    o.checkpoint_interval_s = a->interval_min * 60;
    o.price_per_gpu_hour = a->price;
    o.samples = a->samples;
    o.seed = a->seed;
    o.record_timeline = !a->trace.empty();
    o.async_save = a->checkpoint == "async";
    o.spare_nodes = a->spares;
    config::LoadOptions lo;
    lo.configs_dir = a->configs;
    config::InputRecorder recorder;
    const Scenario s = config::load_scenario(a->scenario, lo);
    const campaign::ReliabilitySpec reliability =
        campaign::load_reliability(a->reliability, config::find_configs_dir(a->scenario, a->configs));
    CommandFiles files;
    files.inputs_read(recorder, "an input");
    files.output(a->output, "--output");
    files.output(a->trace, "--trace");
    if (!a->plot.empty()) {  // the data, the script and the images it draws
      for (const batch::PlotFile& f : campaign::campaign_plot_files({}))
        files.output(std::filesystem::path(a->plot) / f.name, "--plot");
      for (const std::string& image : campaign::campaign_plot_images())
        files.output(std::filesystem::path(a->plot) / image, "--plot");
    }
    files.refuse_clashes();
    driver::RunOptions ro;
    ro.configs_dir = a->configs;
    if (a->gpus.empty()) {
      const campaign::CampaignResult r = campaign::plan_campaign(driver::run_scenario(s, ro), reliability, o);
      if (!a->trace.empty()) emit(campaign::campaign_trace(r).dump() + "\n", a->trace);
      emit(a->format == "json"  ? campaign::campaign_json(r).dump(2) + "\n"
           : a->format == "csv" ? campaign::campaign_csv({r})
                                : campaign::campaign_table(r),
           a->output);
      return;
    }
    std::vector<campaign::CampaignResult> rows;
    nlohmann::json all = nlohmann::json::array();
    for (const Scenario& point : weak_scaling_series(s, a->gpus)) {
      rows.push_back(campaign::plan_campaign(driver::run_scenario(point, ro), reliability, o));
      all.push_back(campaign::campaign_json(rows.back()));
    }
    emit(a->format == "json"  ? nlohmann::json{{"campaigns", all}}.dump(2) + "\n"
         : a->format == "csv" ? campaign::campaign_csv(rows)
                              : campaign::campaign_scaling_table(rows),
         a->output);
    if (!a->plot.empty()) {
      std::filesystem::create_directories(a->plot);
      const batch::PlotOutcome plotted =
          batch::draw_with_gnuplot(a->plot, campaign::campaign_plot_files(rows), "campaign.gp",
                                   campaign::campaign_plot_images(), "no campaign to plot");
      fmt::print(stderr, "{}\n", plotted.message);
    }
  });
}

}  // namespace moesim::cli
