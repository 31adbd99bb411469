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
  // Optional, each needed only by what uses it:
  std::map<std::string, double> detection_s_by_cause;  // a cause's own detection (a hang waits for a timeout)
  std::vector<std::string> causes_keeping_nodes;       // software causes: the job restarts on its own nodes
  double warm_restart_s = 0;             // a restart without requeue (a warm spare, or the nodes intact); --spares
  double node_repair_s = 0;              // until a failed node is back in the spare pool; --spares
  double async_drain_slowdown = -1;      // the step's slowdown while an async save drains; --checkpoint async
  std::map<std::string, std::string> sources;

  double per_gpu_hour() const;           // all causes
};

ReliabilitySpec load_reliability(const std::string& name_or_file, const std::filesystem::path& configs_dir);

// One kind of interruption: its share of them all and what recovering from it costs.
struct InterruptionKind {
  std::string name;
  double share = 1;                 // of all interruptions (the kinds' shares sum to 1)
  double recovery_s = 0;            // its detection, a requeued restart, the load
  double warm_recovery_s = 0;       // its detection, a restart without requeue, the load (with spares)
  bool loses_node = true;           // a node leaves the job (hardware); false: a software fault
};

// Warm standby nodes held beside the job: a node-losing interruption takes one (a warm restart)
// and sends the failed node to repair, after which it is a spare again; with none free the job
// requeues. A fault that keeps the nodes restarts warm too.
struct SparePool {
  int nodes = -1;                   // -1: no pool, every restart requeues (the published default)
  double repair_s = 0;
};

// What the event loop needs, all in seconds of wall-clock time.
struct CampaignInputs {
  double train_s = 0;               // the token budget's steps back to back, no failure
  double step_s = 0;
  double failures_per_s = 0;        // the whole job's interruption rate (Poisson)
  double checkpoint_s = 0;          // writing a save to storage: the step waits for it unless async
  double checkpoint_interval_s = 0; // training time between two saves
  double recovery_s = 0;            // detection, restart and the checkpoint's load (without kinds)
  std::vector<InterruptionKind> kinds;  // empty: one kind, recovery_s
  SparePool spares;
  // An asynchronous save: the step waits only for the copy to host memory; the write to storage
  // drains behind the training, which runs drain_slowdown slower meanwhile, and the save counts
  // only once drained (an interruption before loses it). The next save waits for the drain.
  bool async_save = false;
  double checkpoint_blocking_s = 0; // async: the copy to host memory
  double drain_slowdown = 0;        // async: 0.01 = steps 1 % longer while a save drains
  int samples = 1;
  std::uint64_t seed = 1;
  bool record_timeline = false;     // keep the first sample's phases (CampaignSamples::timeline)
};

// What a campaign's wall clock is doing: training that counts, saving (or waiting for a save to
// drain), training an interruption throws away, recovering (detection, restart, load), a recovery
// an interruption cut short; in the background, an asynchronous save draining to storage.
enum class Phase { training, checkpoint, lost_work, recovery, interrupted_recovery, checkpoint_drain };
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
  double warm_restarts = 0;         // mean: recoveries without requeue (with spares)
  double spares_exhausted = 0;      // mean: node-losing interruptions that found no spare free
  double goodput = 0;               // train_s over mean wall_s
  // The first sample's, when CampaignInputs::record_timeline: the foreground phases back to back,
  // then drains (background) where they ran; interruption instants apart.
  std::vector<PhaseSpan> timeline;
  std::vector<double> interruption_times_s;
  bool timeline_truncated = false;
};

// Young/Daly's checkpoint interval (Daly, FGCS 22(3), 2006, the higher-order form): training time
// between saves that minimises the expected run time, for a save of `checkpoint_s` and a mean time
// between interruptions `mtbf_s`.
double daly_interval_s(double checkpoint_s, double mtbf_s);

// The expected wall time of `work_s` of training saved every `interval_s` (a save costs
// `checkpoint_s`, none after the last segment), Poisson interruptions at `failures_per_s` during
// work and saves, each costing a recovery and the segment's work so far:
// segment by segment (1/rate + recovery') (e^{rate x segment} - 1), where a recovery interrupted
// by failures of its own (each restarting it with its own kind's time R) takes
// recovery' = E[1 - e^{-rate R}] / (rate E[e^{-rate R}]), (e^{rate R} - 1) / rate for one kind.
// The event loop's closed form for synchronous saves, with no spare pool, an empty one (0 nodes)
// or one that never runs dry (any other size: repairs fast against the failures).
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
  bool async_save = false;           // --checkpoint async
  int spare_nodes = -1;              // --spares (-1: none, every restart requeues)
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
  int gpus_per_node = 0;            // a spare's GPUs
  CampaignInputs inputs;
  CampaignSamples samples;
  double gpu_hours = 0;             // mean wall time x GPUs, the spares' included
  double spare_gpu_hours = 0;       // of which the spares, held idle
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

// The campaigns `moesim validate` reproduces: a published figure, moesim's, and whether it meets
// its rule (time within +-5 %, an interruption count inside its Poisson 95 % interval).
struct CampaignCheck {
  std::string what;
  double published = 0, moesim = 0;
  std::string published_shown, shown;  // as printed
  std::string rule;                 // the signed error, or the interval it must fall in
  bool inside = false;
};
std::vector<CampaignCheck> campaign_checks(const std::filesystem::path& repo_root, const driver::RunOptions& ro);
std::string campaign_checks_markdown(const std::vector<CampaignCheck>& checks);
std::string campaign_checks_text(const std::vector<CampaignCheck>& checks);

}  // namespace moesim::campaign
