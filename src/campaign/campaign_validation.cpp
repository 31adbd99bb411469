// The campaigns on the validation page (issue 39): DeepSeek-V3's published GPU-hours and days on
// 2,048 H800, and Llama 3's published interruptions and effective training time on 16,384 H100,
// each from moesim's own step of the bundled scenario on Llama 3's failure profile.
#include <fmt/format.h>

#include <cmath>

#include "moesim/campaign/campaign.hpp"
#include "moesim/config/loader.hpp"

namespace moesim::campaign {

namespace {

constexpr double kSecondsPerDay = 86400;
constexpr int kSamples = 50;

CampaignResult bundled_campaign(const std::filesystem::path& scenario, double tokens, const ReliabilitySpec& reliability,
                                const driver::RunOptions& ro) {
  CampaignOptions o;
  o.tokens = tokens;
  o.samples = kSamples;
  return plan_campaign(driver::run_scenario(config::load_scenario(scenario, {ro.configs_dir}), ro), reliability, o);
}

CampaignCheck within_5_percent(std::string what, double published, std::string published_shown, double moesim,
                               std::string shown) {
  const double error = moesim / published - 1;
  return {std::move(what), published, moesim, std::move(published_shown), std::move(shown),
          fmt::format("{:+.1f} %", 100 * error), std::abs(error) <= 0.05};
}

}  // namespace

std::vector<CampaignCheck> campaign_checks(const std::filesystem::path& repo_root, const driver::RunOptions& ro) {
  const std::filesystem::path configs =
      ro.configs_dir.empty() ? repo_root / "configs" : std::filesystem::path(ro.configs_dir);
  const ReliabilitySpec llama3 = load_reliability("llama3-405b-h100", configs);
  std::vector<CampaignCheck> checks;
  // DSV3 Table 1 and §1: 2,664K H800 GPU-hours for 14.8T tokens; 180K GPU-hours and 3.7 days per
  // trillion tokens on 2,048 GPUs. DeepSeek publishes no failures: Llama 3's rates.
  const CampaignResult dsv3 =
      bundled_campaign(repo_root / "scenarios" / "deepseek-v3-h800-dualpipe.json", 14.8e12, llama3, ro);
  checks.push_back(within_5_percent("DeepSeek-V3, 14.8T tokens on 2,048 H800: GPU-hours (DSV3 Table 1)", 2.664e6,
                                    "2.664 M", dsv3.gpu_hours, fmt::format("{:.3f} M", dsv3.gpu_hours / 1e6)));
  checks.push_back(within_5_percent("the same, days per trillion tokens (DSV3 §1)", 3.7, "3.7",
                                    dsv3.samples.wall_s.mean / kSecondsPerDay / 14.8,
                                    fmt::format("{:.2f}", dsv3.samples.wall_s.mean / kSecondsPerDay / 14.8)));
  // L3 Table 5 and §3.3.4: 419 unexpected interruptions in 54 days, "higher than 90 %" effective
  // training time, over the campaign of its 15.6T tokens on 16,384 H100.
  const CampaignResult l3 =
      bundled_campaign(repo_root / "scenarios" / "llama3-405b-h100-16k.json", 15.6e12, llama3, ro);
  const double per_54_days = l3.samples.interruptions.mean * 54 * kSecondsPerDay / l3.samples.wall_s.mean;
  const double half_width = 1.96 * std::sqrt(419.0);  // Poisson's 95 % interval around the published count
  checks.push_back({"Llama 3 405B on 16,384 H100: interruptions in 54 days (L3 Table 5)", 419, per_54_days, "419",
                    fmt::format("{:.0f}", per_54_days),
                    fmt::format("interval {:.0f}-{:.0f}", 419 - half_width, 419 + half_width),
                    std::abs(per_54_days - 419) <= half_width});
  checks.push_back({"the same, effective training time (L3 §3.3.4)", 0.90, l3.samples.goodput, "above 90 %",
                    fmt::format("{:.1f} %", 100 * l3.samples.goodput), "above 90 %", l3.samples.goodput > 0.90});
  return checks;
}

std::string campaign_checks_markdown(const std::vector<CampaignCheck>& checks) {
  std::string out =
      "## Training campaigns\n\n"
      "`moesim campaign` on the bundled scenarios' own steps and Llama 3's failure profile "
      "(configs/reliability/llama3-405b-h100.json), " + std::to_string(kSamples) +
      " samples, seed 1; time rows under the same ±5 %, the interruption count inside the Poisson 95 % interval "
      "of the published count (docs/campaigns.md).\n\n"
      "| run | published | moesim | error or rule | |\n|---|---:|---:|---|---|\n";
  for (const CampaignCheck& c : checks)
    out += fmt::format("| {} | {} | {} | {} | {} |\n", c.what, c.published_shown, c.shown, c.rule,
                       c.inside ? "ok" : "**OUTSIDE**");
  return out + "\n";
}

std::string campaign_checks_text(const std::vector<CampaignCheck>& checks) {
  if (checks.empty()) return "";
  std::string out = "\ntraining campaigns (moesim campaign, Llama 3's failure profile)\n";
  for (const CampaignCheck& c : checks)
    out += fmt::format("  {:<72} published {:<10} moesim {:<10} {:<18} {}\n", c.what, c.published_shown, c.shown, c.rule,
                       c.inside ? "ok" : "OUTSIDE");
  return out;
}

}  // namespace moesim::campaign
