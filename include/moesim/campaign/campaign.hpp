#pragma once
// A training campaign (issue 39): the simulated step turned into a whole run of a token budget,
// with failures drawn over its timeline, periodic checkpoints, lost work and recovery, in a plain
// event loop (one sample per seed; the step itself is simulated once by driver::run_scenario).
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "moesim/batch/gnuplot.hpp"
#include "moesim/driver/run.hpp"

namespace moesim::campaign {

// configs/reliability/<name>.json: how often a cluster's jobs are interrupted, and what a
// checkpoint and a recovery cost there, each figure with its published source.
struct FailureCause {
  std::string name;
  double per_gpu_hour = 0;  // interruptions this cause brings, per GPU-hour of job runtime
};

struct ReliabilitySpec {
  std::string name;
  std::string file;                      // where it was read from, for messages
  std::vector<FailureCause> causes;
  double detection_s = 0;                // from the failure to the job's teardown
  double restart_s = 0;                  // requeue, launch, NCCL initialisation (not the load)
  double storage_write_bytes_per_s = 0;  // the cluster's sustained checkpoint bandwidth, aggregate
  double storage_read_bytes_per_s = 0;
  std::map<std::string, std::string> sources;

  double per_gpu_hour() const;           // all causes
};

ReliabilitySpec load_reliability(const std::string& name_or_file, const std::filesystem::path& configs_dir);

// What the event loop needs, all in seconds of wall-clock time.
struct CampaignInputs {
  double train_s = 0;               // the token budget's steps back to back, no failure
  double step_s = 0;
  double failures_per_s = 0;        // the whole job's interruption rate (Poisson)
  double checkpoint_s = 0;          // a synchronous save: the step waits for it
  double checkpoint_interval_s = 0; // training time between two saves
  double recovery_s = 0;            // detection, restart and the checkpoint's load
  int samples = 1;
  std::uint64_t seed = 1;
  bool record_timeline = false;     // keep the first sample's phases (CampaignSamples::timeline)
};

// What a campaign's wall clock is doing: training that counts, saving, training an interruption
// throws away, recovering (detection, restart, load), a recovery an interruption cut short.
enum class Phase { training, checkpoint, lost_work, recovery, interrupted_recovery };
const char* to_string(Phase p);

struct PhaseSpan {
  double start_s = 0, duration_s = 0;
  Phase phase = Phase::training;
};

// A timeline keeps at most this many phases (a 54-day campaign saving every 4 minutes has about
// 20,000); the rest is left out and the trace says so.
inline constexpr std::size_t kMaxTimelineEvents = 1'000'000;

struct Spread {
  double mean = 0, p5 = 0, p95 = 0;
};

struct CampaignSamples {
  Spread wall_s;                    // time to train
  Spread interruptions;
  double lost_work_s = 0;           // mean over samples: training redone after interruptions
  double checkpoint_total_s = 0;    // mean: time spent saving
  double recovery_total_s = 0;      // mean: detection, restart, load (cut-short attempts included)
  double recovery_interruptions = 0;  // mean: interruptions that fell inside a recovery
  double goodput = 0;               // train_s over mean wall_s
  std::vector<PhaseSpan> timeline;  // the first sample's, when CampaignInputs::record_timeline
  bool timeline_truncated = false;
};

// Young/Daly's checkpoint interval (Daly, FGCS 22(3), 2006, the higher-order form): training time
// between saves that minimises the expected run time, for a save of `checkpoint_s` and a mean time
// between interruptions `mtbf_s`.
double daly_interval_s(double checkpoint_s, double mtbf_s);

// The expected wall time of `work_s` of training saved every `interval_s` (a save costs
// `checkpoint_s`, none after the last segment), Poisson interruptions at `failures_per_s` during
// work and saves, each costing `recovery_s` and the segment's work so far:
// segment by segment (1/rate + recovery') (e^{rate x segment} - 1), where a recovery interrupted
// by failures of its own takes recovery' = (e^{rate x recovery} - 1) / rate. The event loop's
// closed form.
double expected_wall_s(const CampaignInputs& in);

CampaignSamples simulate(const CampaignInputs& in);

// A campaign of `tokens` with the scenario's simulated step, on its cluster's reliability.
struct CampaignOptions {
  double tokens = 0;
  double checkpoint_interval_s = 0;  // 0: Young/Daly's
  double price_per_gpu_hour = 0;     // 0: no cost
  int samples = 200;
  std::uint64_t seed = 1;
  bool record_timeline = false;      // --trace
};

struct CampaignResult {
  std::string scenario;
  std::string reliability;
  int gpus = 0;
  double tokens = 0;
  double steps = 0;
  double step_s = 0;
  double tokens_per_s_per_gpu = 0;
  double checkpoint_bytes = 0;      // unique: parameters' master copy and optimizer state
  double mtbf_s = 0;                // the whole job's
  CampaignInputs inputs;
  CampaignSamples samples;
  double gpu_hours = 0;             // mean wall time x GPUs
  double energy_j = 0;              // the steps run, redone ones included
  double price_per_gpu_hour = 0;
  double cost = 0;                  // gpu_hours x price; 0 without a price
};

CampaignResult plan_campaign(const driver::RunResult& run, const ReliabilitySpec& reliability,
                             const CampaignOptions& options);

// What `moesim campaign` prints: a table, or the same figures as JSON (SI units, seconds).
std::string campaign_table(const CampaignResult& r);
nlohmann::json campaign_json(const CampaignResult& r);
// The same campaign at several GPU counts (moesim campaign --gpus): one row each.
std::string campaign_scaling_table(const std::vector<CampaignResult>& rows);
// One CSV row per campaign: campaign_json's figures, spreads as <name>_mean, _p5, _p95.
std::string campaign_csv(const std::vector<CampaignResult>& rows);
// The gnuplot files of goodput and days to train against the GPU count (moesim campaign --plot).
std::vector<batch::PlotFile> campaign_plot_files(const std::vector<CampaignResult>& rows);
// The images campaign.gp draws.
std::vector<std::string> campaign_plot_images();
// The first sample's timeline as a Perfetto (Chrome trace event) document: one track per phase.
nlohmann::json campaign_trace(const CampaignResult& r);

}  // namespace moesim::campaign
