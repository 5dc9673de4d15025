// Call signatures (core/call.h) and the mismatch check: before a call's
// first message, the ranks allgather their signatures (recursive doubling,
// ceil(log2 P) rounds of 88-byte records) and all compare them, so a
// mismatch is one scInvalidUsage on every rank, naming who called what,
// instead of a call that fails on some ranks only or, inside an MPI library's
// own collective, corrupts the process. Which calls are checked:
// scConfig_t.check / SPARCOLL_CHECK (README, "Reliability").
#include "core/call.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <type_traits>

#include "algo/dense.h"
#include "core/comm.h"

namespace sc {
namespace {

// FNV-1a over 8-byte words (the last one zero-padded, with its length), one
// multiply per word rather than per byte: the hash runs on every call. The
// tags use its low bits, so it ends with a full avalanche (MurmurHash3's
// finalizer): every input bit reaches them.
void mix(uint64_t& h, const void* p, size_t n) {
  const char* b = static_cast<const char*>(p);
  for (; n >= 8; b += 8, n -= 8) {
    uint64_t w;
    std::memcpy(&w, b, 8);
    h = (h ^ w) * 0x100000001b3ull;
  }
  if (n) {
    uint64_t w = 0;
    std::memcpy(&w, b, n);
    h = (h ^ w ^ (uint64_t(n) << 56)) * 0x100000001b3ull;
  }
}

}  // namespace

uint32_t CallSig::hash() const {
  uint64_t h = 0xcbf29ce484222325ull;
  mix(h, name, std::strlen(name));
  const uint64_t fields[] = {count, uint64_t(uint32_t(dtype)) << 32 | uint32_t(op), extra};
  mix(h, fields, sizeof fields);
  if (algo) mix(h, algo, std::strlen(algo));
  h ^= h >> 33;
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 33;
  return uint32_t(h);
}

std::string CallSig::text() const {
  std::string t = std::string(name) + "(";
  auto add = [&](const std::string& s) { t += (t.back() == '(' ? "" : ", ") + s; };
  if (count != kNoCount) add("count=" + std::to_string(count));
  if (dtype >= 0) add(dtypeName(scDataType_t(dtype)));
  if (op >= 0) add(opName(scRedOp_t(op)));
  if (algo) add(algo);
  // scBroadcast's extra is its root, named even when 0.
  if (std::strcmp(name, "scBroadcast") == 0) add("root=" + std::to_string(extra));
  else if (extra) add("#" + std::to_string(extra));
  return t + ")";
}

namespace {

// A signature as it travels: fixed size, names truncated.
struct Wire {
  uint64_t seq, count, extra;
  int32_t dtype, op;
  char name[32];
  char algo[24];
  bool operator<(const Wire& o) const { return std::memcmp(this, &o, sizeof(Wire)) < 0; }
};
static_assert(sizeof(Wire) == 88, "Wire is packed by hand");

Wire toWire(const CallSig& s, uint64_t seq) {
  Wire w;
  std::memset(&w, 0, sizeof w);
  w.seq = seq;
  w.count = s.count;
  w.extra = s.extra;
  w.dtype = s.dtype;
  w.op = s.op;
  std::strncpy(w.name, s.name, sizeof w.name - 1);
  if (s.algo) std::strncpy(w.algo, s.algo, sizeof w.algo - 1);
  return w;
}

std::string wireText(const Wire& w) {
  CallSig s;
  s.name = w.name;
  s.count = w.count;
  s.dtype = w.dtype;
  s.op = w.op;
  s.algo = w.algo[0] ? w.algo : nullptr;
  s.extra = w.extra;
  return s.text() + " as call #" + std::to_string(w.seq);
}

// "ranks 0, 1, 3" / "rank 2" / "ranks 0-5" for a sorted list.
std::string rankList(const std::vector<int>& r) {
  std::string t = r.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < r.size();) {
    size_t j = i;
    while (j + 1 < r.size() && r[j + 1] == r[j] + 1) ++j;
    t += (i ? ", " : "") + std::to_string(r[i]) +
         (j > i + 1 ? "-" + std::to_string(r[j])
          : j > i   ? ", " + std::to_string(r[j])
                    : "");
    i = j + 1;
  }
  return t;
}

bool wanted(const scComm& comm, const CallSig& sig) {
  if (comm.size() < 2) return false;
  switch (comm.cfg.check) {
    case scCheckAll: return true;
    case scCheckOff: return false;
    // Default: the calls whose mismatch nothing else catches, on host
    // communicators (a device stream would have to be synchronised): those
    // that run the underlying library's own collective (sparcoll's schedules
    // tag their messages, so a mismatch there is seen at the first message
    // received), and broadcast, where a rank that takes itself for the root
    // only sends: with roots that disagree, no message of it is ever refused
    // and every such rank would return success, the others' data unsent.
    default:
      return !comm.device() &&
             ((sig.algo && std::strcmp(sig.algo, "native") == 0) || std::strcmp(sig.name, "scBroadcast") == 0);
  }
}

// The check itself. Its traffic is not the collective's: it is left out of
// scStats_t.
void verify(scComm& comm, const CallSig& sig) {
  SC_REQUIRE(!comm.device(), scInvalidUsage,
             "the mismatch check (SPARCOLL_CHECK=1) is not available on device communicators yet");
  const int P = comm.size();
  const Wire mine = toWire(sig, comm.seq);
  std::vector<Wire> all(static_cast<size_t>(P));
  const scStats_t kept = comm.stats;
  std::vector<uint64_t> keptLinks;  // the topology's link counters (topology/topology.h)
  if (comm.topo) keptLinks = comm.topo->linkBytes;
  comm.transport->beginCall(comm.seq, CallSig{"check"}.hash());
  {
    Ctx c(comm, scUint8, scSum, nullptr);
    doublingAllGather(c, &mine, all.data(), sizeof(Wire));
  }
  comm.stats = kept;
  if (comm.topo) comm.topo->linkBytes = std::move(keptLinks);
  std::map<Wire, std::vector<int>> groups;
  for (int q = 0; q < P; ++q) groups[all[size_t(q)]].push_back(q);
  if (groups.size() == 1) return;
  // Every rank builds the same message: the groups in order of their first rank.
  std::vector<std::pair<int, std::string>> parts;
  for (const auto& g : groups)
    parts.emplace_back(g.second.front(), rankList(g.second) + " called " + wireText(g.first));
  std::sort(parts.begin(), parts.end());
  std::string msg;
  for (const auto& p : parts) msg += (msg.empty() ? "" : "; ") + p.second;
  SC_THROW(scInvalidUsage, "mismatched calls: ", msg);
}

}  // namespace

void setCall(scComm& comm, const CallSig& sig) {
  ++comm.seq;
  comm.call = sig;
  comm.recorder->begin(comm.seq, sig, comm.stats);
  if (wanted(comm, sig)) verify(comm, sig);
  // Names and algorithms are string literals, so equal pointers mean equal
  // text, and a signature is its bytes (no padding): one compare of them.
  static_assert(std::has_unique_object_representations_v<CallSig>, "CallSig compares as bytes");
  if (comm.sigHash == 0 || std::memcmp(&comm.hashedSig, &sig, sizeof sig) != 0) {
    comm.hashedSig = sig;
    comm.sigHash = sig.hash();
  }
  comm.transport->beginCall(comm.seq, comm.sigHash);
}

}  // namespace sc
