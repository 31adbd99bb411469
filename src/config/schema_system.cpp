#include "schema.hpp"

namespace moesim::config {

namespace {

void describe_fabric(Reader& r, FabricSpec& f) {
  r.choice(key("topology", "scale-out topology: a two-tier fat tree, rail-optimised: each GPU's NIC on the leaf of its rail (its "
                                   "index in its NVLink domain)")
               .optional(),
           f.topology, {"rail_optimized_fat_tree"});
  r.integer(key("gpus_per_leaf", "GPU NIC ports per leaf switch (half the switch radix at 1:1): one per domain on its "
                                     "rail, so traffic among this many consecutive domains stays under the leaves").at_least(1).at_most(65536),
            f.gpus_per_leaf);
  r.number(key("oversubscription", "leaf downlink : uplink bandwidth ratio, met by traffic between leaf groups; "
                                        "1 = non-blocking").at_least(1).at_most(1024),
           f.oversubscription);
  r.number(key("switch_latency_us", "latency of one switch hop").in("us", 1e-6).at_least(0).at_most(1000),
           f.switch_latency_s);
  r.choice(key("routing", "how a leaf spreads traffic over its uplinks: adaptive (InfiniBand adaptive routing, "
                          "packet spraying: every uplink evenly loaded) or ecmp (each flow hashed onto one uplink, "
                          "the busiest sets the pace)")
               .optional(),
           f.routing, {"adaptive", "ecmp"});
  r.integer(key("ecmp_flows_per_nic", "ecmp: flows each NIC sends across the spine at once; 0 = NCCL's channels "
                                      "spread over a domain's NICs, one queue pair each (NCCL_IB_QPS_PER_CONNECTION=1)")
                .optional()
                .at_least(0)
                .at_most(1024),
            f.ecmp_flows_per_nic);
}

void describe_nccl(Reader& r, NcclSpec& n) {
  r.choice(key("arch", "GPU architecture whose NCCL tuning tables apply (latencies, per-channel caps)"), n.arch,
           {"hopper", "blackwell"});
  r.number(efficiency_key("nvlink_efficiency", "fraction of the NVLink port a ring or point-to-point transfer "
                                               "reaches with the Simple protocol (nccl-tests bus bandwidth / link rate)"),
           n.nvlink_efficiency);
  r.number(efficiency_key("nvls_efficiency", "fraction of the NVLink port an NVLS (NVLink SHARP) collective reaches; "
                                             "0 = the switches have no NVLS")
               .or_exactly(0),
           n.nvls_efficiency);
  r.number(efficiency_key("net_efficiency", "fraction of the NIC a Simple-protocol transfer reaches"),
           n.net_efficiency);
  r.integer(key("channels", "CTAs (one SM each) a ring, tree or point-to-point collective runs on").at_least(1).at_most(64),
            n.channels);
  r.integer(key("nvls_channels", "CTAs an NVLS collective runs on inside one NVLink domain (NCCL's count for a "
                                  "communicator within one node or MNNVL clique)")
                .at_least(1)
                .at_most(64),
            n.nvls_channels);
  r.integer(key("nvls_tree_channels", "CTAs an NVLS-tree collective runs on across NVLink domains (NCCL's count for "
                                       "a communicator over several nodes or cliques; 0 = nvls_channels)")
                .optional()
                .at_least(0)
                .at_most(64),
            n.nvls_tree_channels);
  r.number(key("call_overhead_us", "fixed time each NCCL collective takes beyond NCCL's own latency model, in "
                                   "microseconds (0 = none)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.call_overhead_us);
  r.number(key("p2p_ll_channel_gbytes_per_s", "data rate of one channel of a point-to-point transfer on the LL "
                                              "protocol, GB/s (0 = NCCL's LL model: half the Simple protocol's rate, capped)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.p2p_ll_channel_gbytes_per_s);
  r.number(key("p2p_simple_channel_gbytes_per_s", "most one channel (one CTA copying through its FIFOs) sends to "
                                                  "other GPUs on the Simple protocol, GB/s, whatever the number of "
                                                  "point-to-point transfers it runs at once (0 = no limit below the "
                                                  "port's)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.p2p_simple_channel_gbytes_per_s);
  r.number(key("p2p_simple_warp_gbytes_per_s", "what one copying warp of a point-to-point transfer moves on the "
                                               "Simple protocol, GB/s: a channel running several transfers at once "
                                               "splits its 20 warps between them, and a receiver copies its last "
                                               "step out at its warps' rate (0 = no limit per warp; the last step "
                                               "then drains at a channel's share of the port)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.p2p_simple_warp_gbytes_per_s);
  r.number(key("p2p_ll_latency_us", "fixed time of one point-to-point transfer on the LL protocol inside one NVLink "
                                    "domain, beyond one NVLink hop, in microseconds (0 = NCCL's ring latency, "
                                    "borrowed: NCCL's tuning model has none for point-to-point)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.p2p_ll_latency_us);
  r.number(key("p2p_simple_latency_us", "fixed time of one point-to-point transfer on the Simple protocol inside "
                                        "one NVLink domain, beyond one NVLink hop and its last step's drain, in "
                                        "microseconds (0 = NCCL's ring latency, borrowed)")
               .optional()
               .at_least(0)
               .at_most(1000),
           n.p2p_simple_latency_us);
  r.number(key("p2p_host_call_us", "host time of one ncclSend or ncclRecv of a grouped all-to-all (one of each per "
                                   "peer, itself included), in microseconds: an all-to-all issued back to back takes "
                                   "at least their sum (0 = the host never binds)")
               .optional()
               .at_least(0)
               .at_most(100),
           n.p2p_host_call_us);
}

}  // namespace

void describe_variability(Reader& r, VariabilitySpec& v, bool with_routing) {
  r.number(key("gpu_speed_cv", "spread of GPU speed: each GPU's kernels take N(1, cv) times their nominal time for "
                               "the whole step (coefficient of variation; 0 = identical GPUs)")
               .optional()
               .at_least(0)
               .at_most(0.2),
           v.gpu_speed_cv);
  r.number(key("kernel_jitter_cv", "spread of each kernel's time on top of its GPU's speed, drawn independently per "
                                   "kernel (coefficient of variation; 0 = none)")
               .optional()
               .at_least(0)
               .at_most(0.2),
           v.kernel_jitter_cv);
  if (with_routing)
    r.number(key("expert_load_sigma", "unless the recipe forces balanced routing: log-normal sigma of an expert's share "
                                      "of the routed tokens per step and layer (default: the model's "
                                      "moe.expert_load_sigma); hot experts = a larger sigma")
                 .optional()
                 .at_least(0)
                 .at_most(2),
             v.expert_load_sigma);
  if (with_routing)  // a scenario's what-if, not a system's property
    r.object(key("slow_gpu", "one named GPU that runs slow for the whole step (a throttled or degraded part), on "
                             "top of the spread: {\"rank\": 17, \"speed\": 0.9}; absent = none")
                 .optional(),
             [&](Reader& g) {
               g.integer(key("rank", "the slow GPU's global rank (Megatron's rank order)").at_least(0), v.slow_gpu_rank);
               g.number(key("speed", "its speed relative to its peers: its kernels take 1 / speed times as long")
                            .above(0.05)
                            .at_most(1),
                        v.slow_gpu_speed);
             });
}

void describe_system(Reader& r, SystemSpec& s) {
  r.text(key("name", "display name, e.g. \"GB300 NVL72\""), s.name);
  r.reference(key("gpu", "the GPU: a name in configs/hardware/, or {\"base\": <name>, ...overrides}"), "hardware",
              s.gpu_name, [&](Reader& g) { describe_gpu(g, s.gpu); });
  r.integer(key("nvlink_domain_gpus", "GPUs per NVLink domain (72: an NVL72 rack; 8: an HGX board)")
                .at_least(1).at_most(4096),
            s.domain_gpus);
  r.integer(key("gpus_per_node", "GPUs in the unit a failure takes out of the job and a spare replaces (4: an NVL72 "
                                 "compute tray; 8: an HGX server); 0 (the default) = the NVLink domain")
                .optional()
                .at_least(0)
                .at_most(4096),
            s.gpus_per_node);
  r.number(key("nvlink_gbytes_per_s_per_direction", "NVLink bandwidth of one GPU, each direction")
               .in("GB/s", 1e9).at_least(1).at_most(1e5),
           s.nvlink_bytes_per_s);
  r.number(key("nvlink_latency_us", "one-way latency GPU -> NVSwitch -> GPU").in("us", 1e-6).at_least(0).at_most(1000),
           s.nvlink_latency_s);
  r.number(key("nic_gbits_per_s", "scale-out NIC bandwidth of one GPU, each direction")
               .in("Gb/s", 1e9 / 8).at_least(1).at_most(1e6),
           s.nic_bytes_per_s);
  r.number(key("nic_latency_us", "one-way latency of one NIC end (NIC and cable)").in("us", 1e-6).at_least(0).at_most(1000),
           s.nic_latency_s);
  r.object(key("fabric", "the scale-out network"), [&](Reader& f) { describe_fabric(f, s.fabric); });
  r.object(key("nccl", "how NCCL performs on this system (collective algorithms, see docs/method.md)"),
           [&](Reader& n) { describe_nccl(n, s.nccl); });
  r.integer(key("max_gpus", "largest cluster this file describes (scenarios may use up to this many GPUs)").at_least(1),
            s.max_gpus);
  r.number(key("node_watts_per_gpu",
               "power of the rest of the node per GPU (CPUs, NICs, memory, fans, static), for the cluster's "
               "energy; 0 = GPUs only")
               .in("W")
               .optional()
               .at_least(0)
               .at_most(1e5),
           s.node_watts_per_gpu);
  r.number(key("host_op_time_ratio",
               "the host CPU's time per framework operation (a kernel launch, a Python module call) over the "
               "x86 host the stacks' launch costs were measured on; 1 = x86 (the default), Grace about 2.75")
               .optional()
               .at_least(0.1)
               .at_most(100),
           s.host_op_time_ratio);
  r.number(key("host_link_gbytes_per_s", "each GPU's link to host memory, per direction (NVLink-C2C to Grace, PCIe to "
                                         "an x86 host): what offloaded activations cross; 0 (the default) = not "
                                         "described, offloading refused")
               .in("GB/s", 1e9)
               .optional()
               .at_least(0)
               .at_most(1e4),
           s.host_link_bytes_per_s);
  r.object(key("variability", "how much its GPUs and kernels differ in speed (the defaults of a scenario's "
                              "\"variability\"); absent = identical GPUs")
               .optional(),
           [&](Reader& v) { describe_variability(v, s.variability, false); });
  r.sources(sources_key(), s.sources);
}

}  // namespace moesim::config
