// NCCL's choice of algorithm and protocol, its latencies and rates (nccl.hpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "collective_load.hpp"
#include "nccl_tuning_model.hpp"

namespace moesim::platform {

using detail::GroupLayout;

std::string_view to_string(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::ring: return "ring";
    case NcclAlgorithm::tree: return "tree";
    case NcclAlgorithm::nvls: return "nvls";
    case NcclAlgorithm::nvls_tree: return "nvls_tree";
    case NcclAlgorithm::pat: return "pat";
    case NcclAlgorithm::p2p: return "p2p";
  }
  return "?";
}

std::optional<NcclAlgorithm> nccl_algorithm_named(std::string_view name) {
  for (NcclAlgorithm a : kForceableNcclAlgorithms)
    if (to_string(a) == name) return a;
  if (name == to_string(NcclAlgorithm::p2p)) return NcclAlgorithm::p2p;
  return std::nullopt;
}

std::string_view to_string(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::ll: return "LL";
    case NcclProtocol::ll128: return "LL128";
    case NcclProtocol::simple: return "Simple";
  }
  return "?";
}

namespace {

// What a protocol moves of the Simple protocol's rate, and the cap NCCL's model puts on its bus
// bandwidth (ncclTopoTuneModel's refinements, NCCL-TUNE at v2.30.7): LL at most llMaxBws in all,
// LL128 and the tree's Simple at most perChMax*Bws per channel it runs on. NCCL indexes the caps
// by node count: one node, two, three or more; across nodes its LL cap is the CPU's, not the
// GPU's (the row of hosts other than AMD's: Intel, and Grace). moesim plans no tree inside one
// node, so the tree's LL128 factor is NCCL's multi-node 120/128.
struct ProtocolRate {
  double factor = 1.0;
  double cap_bytes_per_s = std::numeric_limits<double>::infinity();
};
ProtocolRate protocol_rate(NcclAlgorithm a, NcclProtocol p, int domains, int channels, bool blackwell) {
  constexpr double GBps = 1e9;
  const bool tree = a == NcclAlgorithm::tree;
  const detail::NcclTunerCaps caps = detail::nccl_tuner_caps(blackwell, domains);
  switch (p) {
    case NcclProtocol::ll: return {tree ? 1.0 / 3.8 : 0.5, caps.ll_max * GBps};
    case NcclProtocol::ll128:
      return {tree ? 120.0 / 128 : 0.92,
              channels * (tree ? caps.tree_ll128_per_channel : caps.ring_ll128_per_channel) * GBps};
    case NcclProtocol::simple:
      if (tree) return {1.0, channels * caps.tree_per_channel * GBps};
      return {};
  }
  return {};
}

// The channels a ring or tree collective of `bytes` runs on (topoGetAlgoInfo, NCCL-KERN): NCCL
// drops channels while each would get less than its threads' threshold (threads x bytes per
// thread: Simple 512 x 64, LL128 640 x 8, LL 512 x 8, the ring's LL times the rank count). PAT,
// whose thread count NCCL's tuning leaves at 0, and NVLS keep all of theirs.
int ring_tree_channels(NcclAlgorithm a, NcclProtocol p, int ranks, double bytes, int max_channels) {
  const double threads = p == NcclProtocol::ll128 ? 640 : 512;
  const double per_thread = p == NcclProtocol::simple ? 64 : p == NcclProtocol::ll128 ? 8
                                                        : 8.0 * (a == NcclAlgorithm::ring ? ranks : 1);
  int nc = max_channels;
  while (nc >= 2 && bytes < nc * threads * per_thread) --nc;
  return nc;
}

struct Candidate {
  NcclAlgorithm algorithm;
  NcclProtocol protocol;
};

constexpr double KiB = 1024;

// How NCCL runs an all-to-all inside one NVLink domain (NCCL 2.28.7, NCCL-P2P: addP2pToPlan,
// scheduleP2pTasksToPlan, src/device/sendrecv.h). Round r sends to rank + r and receives from
// rank - r (round 0: the rank itself, which nccl-tests and PyTorch include). Every peer's transfer
// gets the same number of channels, at most the channels over the rank count (halved from all of
// them), fewer when it is small (one per eighth of a step), doubled while a channel's part is
// over 32 steps; LL up to 16 KiB per channel of the peer limit, Simple above it (the rank's own
// copy is always Simple). Round r's parts go to consecutive channels from the bit reversal of r
// (ncclP2pChannelBaseForRound). A channel batches the works of one group of 8 rounds (an epoch):
// a batch's works run at once and split the CTA's warps; the batches run one after another.
struct P2pWork {
  bool self = false;  // the rank's own copy: local, never on the port
  double part_bytes = 0;
};
using P2pBatch = std::vector<P2pWork>;
struct P2pSchedule {
  NcclProtocol protocol = NcclProtocol::simple;
  int channels_used = 0;                     // channels with a transfer
  std::vector<std::vector<P2pBatch>> batches;  // per channel, in order
};
constexpr int kP2pRoundsPerEpoch = 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH

int reverse_low_bits(int x, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

P2pSchedule one_domain_all_to_all(int ranks, double peer_bytes, int channels) {
  P2pSchedule out;
  int per_peer_max = channels;  // nChannelsMin: halved while the peers would need more than all
  while (per_peer_max > 1 && per_peer_max * ranks > channels) per_peer_max /= 2;
  const bool ll = peer_bytes <= channels * 16 * KiB;  // NCCL_P2P_LL_THRESHOLD per channel
  out.protocol = ll ? NcclProtocol::ll : NcclProtocol::simple;
  int bits = 0;  // log2Up(p2pnChannels)
  while ((1 << bits) < channels) ++bits;
  out.batches.resize(channels);
  std::vector<int> epoch_of_last(channels, -1);
  for (int round = 0; round < ranks; ++round) {
    const bool self = round == 0;
    // A step: LL's buffer over NCCL_STEPS, Simple's NCCL_P2P_NVL_CHUNKSIZE; inside one node a part
    // is at least 1/8 and at most 32 steps.
    const double step = ll && !self ? 64 * KiB : 512 * KiB;
    int per_peer = std::clamp(static_cast<int>(std::ceil(peer_bytes / (step / 8))), 1, per_peer_max);
    while (std::ceil(peer_bytes / per_peer) > 32 * step && per_peer <= channels / 2) per_peer *= 2;
    const int base = reverse_low_bits(round, bits);  // NCCL's low bits of the round
    const int epoch = round / kP2pRoundsPerEpoch;
    for (int part = 0; part < per_peer; ++part) {
      const int c = (base + part) & ((1 << bits) - 1);
      if (c >= channels) continue;  // channel counts are powers of two in NCCL
      auto& batches = out.batches[c];
      if (batches.empty() || epoch_of_last[c] != epoch || batches.back().size() == kP2pRoundsPerEpoch)
        batches.emplace_back();
      batches.back().push_back({self, peer_bytes / per_peer});
      epoch_of_last[c] = epoch;
    }
  }
  out.channels_used = static_cast<int>(
      std::count_if(out.batches.begin(), out.batches.end(), [](const auto& b) { return !b.empty(); }));
  return out;
}

// How a point-to-point CTA's 20 warps (NCCL_MAX_NTHREADS 640) split between the works of a
// batch (sendrecv.h): per work, the receive warps, and the send warps that copy (a send group of
// 3 or more gives one warp to the fence and flag, prims_simple.h's nworkers).
struct P2pWarps {
  int receive = 0;
  int send_copying = 0;
};
P2pWarps p2p_warps_per_work(int works) {
  constexpr int kWarps = 20;
  const int per_work = kWarps / std::max(1, works);
  P2pWarps w;
  w.receive = per_work <= 4 ? per_work / 2 : (per_work - 1) / 2;
  const int send = per_work <= 4 ? w.receive : w.receive + 1;
  w.send_copying = send - (send >= 3 ? 1 : 0);
  return w;
}
bool scheduled_in_one_domain(const Topology& t, CollectiveKind kind, const GroupLayout& l) {
  return t.nccl.modelled && kind == CollectiveKind::all_to_all && l.domains == 1 && l.size > 1;
}

// One collective to plan: what it is, where its members sit, NCCL's byte count, and, for an
// all-to-all inside one domain, NCCL's schedule of it, built once and shared by the choice, the
// channel count and the pricing.
struct Request {
  CollectiveKind kind;
  const GroupLayout& layout;
  double bytes;
  std::optional<P2pSchedule> one_domain_p2p;
  Request(const Topology& t, CollectiveKind k, const GroupLayout& l, double b) : kind(k), layout(l), bytes(b) {
    if (scheduled_in_one_domain(t, k, l)) one_domain_p2p = one_domain_all_to_all(l.size, b, t.nccl.channels);
  }
};

// The algorithms NCCL would consider for this collective and placement.
std::vector<Candidate> candidates(const Topology& t, const Request& r) {
  const CollectiveKind kind = r.kind;
  const GroupLayout& l = r.layout;
  std::vector<Candidate> out;
  const bool modelled = t.nccl.modelled;
  const std::vector<NcclProtocol> protocols =
      modelled ? std::vector<NcclProtocol>{NcclProtocol::ll, NcclProtocol::ll128, NcclProtocol::simple}
               : std::vector<NcclProtocol>{NcclProtocol::simple};
  auto all = [&](NcclAlgorithm a) {
    for (NcclProtocol p : protocols) out.push_back({a, p});
  };
  switch (kind) {
    case CollectiveKind::all_to_all:
    case CollectiveKind::send_recv:
      // NCCL picks the protocol of a point-to-point transfer by its size, not by a time model;
      // across nodes it is Simple (the network's connections have no LL buffers).
      out.push_back({NcclAlgorithm::p2p, r.one_domain_p2p ? r.one_domain_p2p->protocol : NcclProtocol::simple});
      break;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter:
      all(NcclAlgorithm::ring);
      if (modelled && t.nccl.nvls && l.domains == 1) out.push_back({NcclAlgorithm::nvls, NcclProtocol::simple});
      if (modelled && l.domains > 1 && l.max_per_domain == 1) out.push_back({NcclAlgorithm::pat, NcclProtocol::simple});
      break;
    case CollectiveKind::all_reduce:
      all(NcclAlgorithm::ring);
      if (modelled && l.domains > 1) all(NcclAlgorithm::tree);
      if (modelled && t.nccl.nvls && l.domains == 1) out.push_back({NcclAlgorithm::nvls, NcclProtocol::simple});
      if (modelled && t.nccl.nvls && l.domains > 1) out.push_back({NcclAlgorithm::nvls_tree, NcclProtocol::simple});
      break;
  }
  if (const auto forced = t.nccl.forced_algorithm) {
    std::erase_if(out, [&](const Candidate& c) { return c.algorithm != *forced; });
    if (out.empty())
      throw std::invalid_argument(std::string("NCCL_ALGO=") + std::string(to_string(*forced)) + " cannot run this " +
                                  std::string(to_string(kind)) + " (group shape or system)");
  }
  return out;
}

// NCCL's NVLS kernels (NCCL-KERN: src/device/all_reduce.h, reduce_scatter.h, all_gather.h at
// v2.30.7) split each channel's warps into stages linked by Simple-protocol FIFOs, and a channel
// walks its share of the buffer in iterations of heads x chunk bytes. The stages overlap only
// once iterations follow one another: (iterations + stages - 1) iteration times, the bandwidth
// time plus (stages - 1) iterations of filling and draining, or every stage in turn when the
// share is less than one iteration. This is the ramp of NVLS's bus bandwidth from megabytes to
// gigabytes.
double pipeline_fill_s(int stages, double iterations, double bandwidth_s) {
  return (stages - 1) * bandwidth_s / std::max(1.0, iterations);
}

// NCCL's NVLS chunk (calcCollChunking, NCCL-KERN enqueue.cc): NCCL_NVLS_CHUNKSIZE 128 KiB, halved
// to 64, 32 and 16 KiB while `bytes` is below 64, 8 and 2 rounds of the concurrent operations it is
// given (channels x heads).
double nvls_chunk_bytes(double bytes, double concurrent_ops) {
  double chunk = 128 * KiB;
  if (bytes < 64 * concurrent_ops * chunk) chunk = 64 * KiB;
  if (bytes < 8 * concurrent_ops * chunk) chunk = 32 * KiB;
  if (bytes < 2 * concurrent_ops * chunk) chunk = 16 * KiB;
  return chunk;
}

double align_up(double bytes, double alignment) { return std::ceil(bytes / alignment) * alignment; }

// The busiest channel of an NVLS all-reduce of `bytes` on `channels` channels: its share of the
// buffer and the bytes of its largest iteration (heads x chunk). Each NCCL version cuts the buffer
// its own way (NCCL-KERN enqueue.cc and device/all_reduce.h at each tag):
// - up to 2.19 the channels take turns of heads x chunk bytes (offset gridOffset + bid x heads x
//   chunk), so below channels x heads x chunk channel 0 carries up to a whole iteration alone;
// - 2.20 and 2.21 give each channel a contiguous run of ceil(bytes / channels) (16-byte aligned,
//   at least 4 KiB and in 4 KiB steps: maxBytesPerChannel);
// - from 2.22 on the bytes are spread by traffic in cells (16 B in 2.22, 8 KiB from 2.23, the
//   16 KiB MinTrafficPerChannel of an all-reduce's 2 bytes of traffic per byte), and each
//   channel's chunk is sized on its own share (nChannels 1).
struct NvlsChannelShare {
  double bytes = 0;
  double iteration_bytes = 0;
};
NvlsChannelShare nvls_busiest_channel(int nccl_version, double bytes, int channels, int heads) {
  const double concurrent_ops = double(channels) * heads;
  if (nccl_version < 220) {
    const double iteration = heads * nvls_chunk_bytes(bytes, concurrent_ops);
    const double rounds = std::ceil(bytes / (channels * iteration));
    const double last_round = bytes - (rounds - 1) * channels * iteration;
    return {(rounds - 1) * iteration + std::min(iteration, last_round), std::min(iteration, bytes)};
  }
  double share = 0;
  if (nccl_version < 222) {
    share = std::min(bytes, align_up(bytes / channels, 4 * KiB));  // 4 KiB steps keep the 16-B alignment
    return {share, std::min(share, heads * nvls_chunk_bytes(bytes, concurrent_ops))};
  }
  const double cell = nccl_version < 223 ? 16 : 8 * KiB;
  const double least = nccl_version < 223 ? 256 : 8 * KiB;  // MinTrafficPerChannel / 2
  share = std::min(bytes, align_up(std::max(least, bytes / channels), cell));
  return {share, std::min(share, heads * nvls_chunk_bytes(share, heads))};
}

// Inside one domain an all-reduce scatters its input into the switch's buffers, reduces and
// multicasts it (multimem), then gathers the result (3 stages); a reduce-scatter scatters and
// reduces, an all-gather multicasts and gathers (2 stages). The busiest channel sets the time: its
// iterations pass the stages at its share of the rate (the channels split the port), plus
// (stages - 1) of its largest iteration to fill and drain. A reduce-scatter or all-gather is taken
// as evenly cut, in iterations of all channels' heads x NCCL's chunk.
double nvls_pipeline_fill_s(CollectiveKind kind, const GroupLayout& l, double bytes, int channels,
                            double bandwidth_s, int nccl_version) {
  if (channels <= 0 || bytes <= 0) return 0;
  const int heads = detail::nvls_heads(l.size, nccl_version);
  if (kind == CollectiveKind::all_reduce) {
    const NvlsChannelShare busiest = nvls_busiest_channel(nccl_version, bytes, channels, heads);
    const double channel_s_per_byte = bandwidth_s * channels / bytes;
    return (busiest.bytes + 2 * busiest.iteration_bytes) * channel_s_per_byte - bandwidth_s;
  }
  const double concurrent_ops = double(channels) * heads;
  return pipeline_fill_s(2, bytes / (concurrent_ops * nvls_chunk_bytes(bytes, concurrent_ops)), bandwidth_s);
}

// Across domains (RunWorkColl NVLS_TREE) a chunk passes the scatter warps, the reduce warps of
// its head and of each ancestor up the tree, which send it over the network, the root's
// reduce-and-broadcast, the broadcast warps of each node back down, and the gather warps: 2D + 3
// stages for a tree of depth D = ceil(log2 domains) (ncclGetBtree). The chunk (enqueue.cc):
// 128 KiB, at most 64 KiB from 4 domains on (NCCL_NVLS_TREE_MAXCHUNKSIZE), halved to 64 and
// 32 KiB below 4 and 1 rounds of all channels' heads (NCCL's 256 and 128 KiB steps for larger
// chunks never apply to the default 128 KiB).
double nvls_tree_pipeline_fill_s(const GroupLayout& l, double bytes, int channels, double bandwidth_s,
                                 int nccl_version) {
  if (channels <= 0 || bytes <= 0) return 0;
  int depth = 0;
  while ((1 << depth) < l.domains) ++depth;
  const double concurrent_ops = double(channels) * detail::nvls_heads(l.max_per_domain, nccl_version);
  double chunk = l.domains >= 4 ? 64 * KiB : 128 * KiB;
  if (bytes < 4 * concurrent_ops * chunk && chunk > 64 * KiB) chunk = 64 * KiB;
  if (bytes < 1 * concurrent_ops * chunk && chunk > 32 * KiB) chunk = 32 * KiB;
  return pipeline_fill_s(2 * depth + 3, bytes / (concurrent_ops * chunk), bandwidth_s);
}

// An all-to-all inside one domain as NCCL schedules it (one_domain_all_to_all). The busiest
// channel sets the time: each of its batches pays a transfer's fixed time, and moves its largest
// remote part at the CTA's rate over its remote works. On LL that is the measured rate per channel.
// On Simple a CTA sends to other GPUs at most its ceiling, and at most its copying warps' rate
// (with 4 works at once a work keeps 2 copying warps of 20); the receiver copies the last step out
// (at most NCCL_P2P_NVL_CHUNKSIZE, 512 KiB) after the sender's fence and flag, at its receive
// warps' rate. The rank's own copy is local: it takes its warps, never the port. The port carries
// the remote bytes at most at its rate.
void price_one_domain_all_to_all(const Topology& t, const GroupLayout& l, const P2pSchedule& plan, TierLoad& load) {
  const NcclParams& nc = t.nccl;
  const bool ll = plan.protocol == NcclProtocol::ll;
  // A measured LL rate per channel replaces NCCL's LL model (half the port, capped): the port
  // itself then binds at the Simple protocol's rate.
  const double port_bytes_per_s = ll && nc.p2p_ll_channel_bytes_per_s > 0 ? t.nvlink_bytes_per_s * nc.nvlink_efficiency
                                                                            : load.nvlink_bytes_per_s;
  const double remote_channels = plan.channels_used * (l.size - 1.0) / l.size;
  const double port_share_bytes_per_s = load.nvlink_bytes_per_s / remote_channels;  // a remote transfer's
  const double configured_latency_s = ll ? nc.p2p_ll_latency_s : nc.p2p_simple_latency_s;
  const double latency_s = configured_latency_s > 0 ? configured_latency_s : load.latency_s;
  double busiest_fixed_s = 0, busiest_copy_s = 0;
  for (const auto& batches : plan.batches) {
    double fixed_s = 0, copy_s = 0;
    for (const P2pBatch& batch : batches) {
      int remote = 0;
      double largest_bytes = 0;
      for (const P2pWork& w : batch)
        if (!w.self) {
          ++remote;
          largest_bytes = std::max(largest_bytes, w.part_bytes);
        }
      if (remote == 0) continue;  // the rank's own copy alone never reaches the port
      fixed_s += latency_s;
      const P2pWarps warps = p2p_warps_per_work(static_cast<int>(batch.size()));
      double cta_bytes_per_s = ll ? remote * nc.p2p_ll_channel_bytes_per_s : nc.p2p_simple_channel_bytes_per_s;
      if (!ll && nc.p2p_simple_warp_bytes_per_s > 0)
        cta_bytes_per_s = std::min(cta_bytes_per_s, nc.p2p_simple_warp_bytes_per_s * warps.send_copying * remote);
      if (cta_bytes_per_s > 0) copy_s += largest_bytes * remote / cta_bytes_per_s;
      if (!ll) {
        const double drain_bytes_per_s = nc.p2p_simple_warp_bytes_per_s > 0
                                             ? nc.p2p_simple_warp_bytes_per_s * warps.receive
                                             : port_share_bytes_per_s;
        fixed_s += std::min(largest_bytes, 512 * KiB) / drain_bytes_per_s;
      }
    }
    if (fixed_s + copy_s > busiest_fixed_s + busiest_copy_s) {
      busiest_fixed_s = fixed_s;
      busiest_copy_s = copy_s;
    }
  }
  const double copy_s = std::max(busiest_copy_s, load.nvlink_bytes / port_bytes_per_s);
  if (copy_s > 0) load.nvlink_bytes_per_s = load.nvlink_bytes / copy_s;
  load.latency_s = busiest_fixed_s;
}

// An all-to-all is one ncclSend and one ncclRecv per peer, itself included, in a group (PyTorch's
// all_to_all_single and nccl-tests alike). The host enqueues each (NCCL-P2P: ncclEnqueueCheck,
// p2pTaskAppend, then addP2pToPlan per peer at the group's end) before the one kernel can run,
// so operations issued back to back take at least the host's time: 2 n calls, which binds only
// at small sizes over many ranks (64 GPUs below about 2 MiB). On an idle platform the plan's
// time is then exactly that floor; its latency carries the difference.
void hold_to_host_floor(const Topology& t, const GroupLayout& l, TierLoad& load) {
  const double host_s = 2.0 * l.size * t.nccl.p2p_host_call_s;
  const double gpu_s = tier_seconds(t, load);
  if (host_s > gpu_s) load.latency_s += host_s - gpu_s;
}

// Rates and latency of one candidate for one member (bytes and steps from algorithm_load).
TierLoad priced(const Topology& t, const Candidate& c, const Request& r, int member, int channels) {
  const CollectiveKind kind = r.kind;
  const GroupLayout& l = r.layout;
  const double bytes = r.bytes;
  TierLoad load = detail::algorithm_load(c.algorithm, kind, l, member, bytes, t.nccl.version);
  if (!t.nccl.modelled) return load;  // ideal: link rates, one hop latency per step
  const NcclParams& nc = t.nccl;
  const bool nvls = c.algorithm == NcclAlgorithm::nvls || c.algorithm == NcclAlgorithm::nvls_tree;
  const ProtocolRate protocol = protocol_rate(c.algorithm, c.protocol, l.domains, channels, nc.blackwell);
  double nvl_rate = t.nvlink_bytes_per_s * (nvls ? nc.nvls_efficiency : nc.nvlink_efficiency * protocol.factor);
  double nic_rate = detail::port_nic_rate(t) * nc.net_efficiency * protocol.factor;
  // NCCL's tuning model also takes 0.92 off the tree's bandwidth; moesim leaves it out, since the
  // tree's NICs carry the double binary tree's real bytes (algorithm_load) at the same transport
  // efficiency as the ring's (NCCL1801: 47.5 against the ring's 49.2 GB/s per NIC).
  if (c.algorithm == NcclAlgorithm::pat) nic_rate *= 0.75;
  if (!nvls) {  // NCCL caps the algorithm's bus bandwidth: each tier's rate is held to it
    nvl_rate = std::min(nvl_rate, protocol.cap_bytes_per_s);
    nic_rate = std::min(nic_rate, protocol.cap_bytes_per_s);
  }
  load.nvlink_bytes_per_s = nvl_rate;
  load.nic_bytes_per_s = nic_rate;
  // The wire hop of each used tier stays; NCCL's model latency comes on top.
  if (load.nvlink_steps > 0) load.nvlink_steps = 1;
  if (load.nic_steps > 0) load.nic_steps = 1;
  load.latency_s = detail::nccl_latency_s(c.algorithm, c.protocol, kind, l.size, l.domains);
  if (c.algorithm == NcclAlgorithm::p2p && r.one_domain_p2p) price_one_domain_all_to_all(t, l, *r.one_domain_p2p, load);
  load.latency_s += nc.call_overhead_s;
  if (c.algorithm == NcclAlgorithm::nvls)  // NVLink only: its bytes at its rate
    load.latency_s +=
        nvls_pipeline_fill_s(kind, l, bytes, channels, load.nvlink_bytes / load.nvlink_bytes_per_s, nc.version);
  if (c.algorithm == NcclAlgorithm::nvls_tree)  // the busier of its two tiers sets the iterations' pace
    load.latency_s += nvls_tree_pipeline_fill_s(
        l, bytes, channels,
        std::max(load.nvlink_bytes / load.nvlink_bytes_per_s, load.nic_bytes / load.nic_bytes_per_s), nc.version);
  if (c.algorithm == NcclAlgorithm::p2p && kind == CollectiveKind::all_to_all)
    hold_to_host_floor(t, l, load);
  return load;
}

// `bytes` is NCCL's byte count for the choice, the larger of a rank's send and receive buffers: S
// for the collectives that run on rings and trees.
int channels_of(const Topology& t, const Candidate& c, const Request& r) {
  if (!t.nccl.modelled) return 0;
  switch (c.algorithm) {
    case NcclAlgorithm::nvls: return t.nccl.nvls_channels;
    case NcclAlgorithm::nvls_tree: return t.nccl.nvls_tree_channels;
    case NcclAlgorithm::p2p:
      return r.one_domain_p2p ? r.one_domain_p2p->channels_used : t.nccl.channels;
    case NcclAlgorithm::pat: return t.nccl.channels;
    case NcclAlgorithm::ring:
    case NcclAlgorithm::tree: break;
  }
  return ring_tree_channels(c.algorithm, c.protocol, r.layout.size, r.bytes, t.nccl.channels);
}

// The busiest member's time under one candidate (a member's load depends only on its domain's
// member count, so one member per domain suffices).
double busiest_seconds(const Topology& t, const Candidate& c, const Request& r, int* busiest_member) {
  double worst = -1;
  const int channels = channels_of(t, c, r);
  for (const auto& members : r.layout.domain_members) {
    const int m = members.front();
    const double s = tier_seconds(t, priced(t, c, r, m, channels));
    if (s > worst) {
      worst = s;
      if (busiest_member) *busiest_member = m;
    }
  }
  return worst;
}

CollectivePlan plan_for(const Topology& t, CollectiveKind kind, const GroupLayout& l, double bytes, int member) {
  if (bytes < 0) throw std::invalid_argument("collective: negative byte count");
  if (kind == CollectiveKind::send_recv && l.size != 2)
    throw std::invalid_argument("send_recv: the group must be {sender, receiver}");
  const Request request(t, kind, l, bytes);
  const std::vector<Candidate> options = candidates(t, request);
  // NCCL chooses by its own model's time (nccl_tuning.hpp); an ideal library, and where NCCL's
  // model has no time (point-to-point) or rules every option out, moesim's time chooses.
  auto least = [&](auto seconds_of) -> const Candidate* {
    const Candidate* pick = nullptr;
    double least_s = std::numeric_limits<double>::infinity();
    for (const Candidate& c : options)
      if (const double s = seconds_of(c); s < least_s) {
        least_s = s;
        pick = &c;
      }
    return pick;
  };
  const bool nccl_chooses = t.nccl.modelled;
  const Candidate* chosen = nullptr;
  if (nccl_chooses) {
    const NcclGraphs graphs = nccl_search_graphs(t, l.max_per_domain, l.domains);
    chosen = least([&](const Candidate& c) {
      return detail::nccl_estimated_seconds(t, l, graphs, c.algorithm, c.protocol, kind, bytes);
    });
  }
  if (!chosen) chosen = least([&](const Candidate& c) { return busiest_seconds(t, c, request, nullptr); });
  CollectivePlan best;
  int busiest = 0;
  if (chosen) {
    best.algorithm = chosen->algorithm;
    best.protocol = chosen->protocol;
    busiest_seconds(t, *chosen, request, &busiest);
  }
  best.channels = channels_of(t, {best.algorithm, best.protocol}, request);
  const int planned = member >= 0 ? member : busiest;
  best.load = priced(t, {best.algorithm, best.protocol}, request, planned, best.channels);
  best.seconds = tier_seconds(t, best.load);
  return best;
}

}  // namespace

CollectivePlan plan_collective(const Topology& t, CollectiveKind kind, const Group& g, double bytes, int rank) {
  const GroupLayout l = detail::analyse_group(t, g);
  return plan_for(t, kind, l, bytes, l.member(rank));
}

CollectivePlan plan_collective(const Topology& t, CollectiveKind kind, const Group& g, double bytes) {
  return plan_for(t, kind, detail::analyse_group(t, g), bytes, -1);
}

CollectivePlan plan_collective(const Platform& p, CollectiveKind kind, const Group& g, double bytes, int rank) {
  const GroupLayout& l = p.group_cache().get(p.topology(), g);
  return plan_for(p.topology(), kind, l, bytes, l.member(rank));
}

double bus_bytes_per_s(CollectiveKind kind, int ranks, double bytes, double seconds) {
  if (seconds <= 0 || ranks < 1) return 0;
  const double n = ranks;
  switch (kind) {
    case CollectiveKind::all_reduce: return bytes / seconds * 2 * (n - 1) / n;
    case CollectiveKind::all_gather:
    case CollectiveKind::reduce_scatter: return bytes / seconds * (n - 1) / n;
    case CollectiveKind::all_to_all: return n * bytes / seconds * (n - 1) / n;
    case CollectiveKind::send_recv: return bytes / seconds;
  }
  return 0;
}

}  // namespace moesim::platform
