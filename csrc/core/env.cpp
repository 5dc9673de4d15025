#include "core/env.h"

#include <strings.h>

#include <cstdlib>
#include <cstring>
#include <sstream>

#include "core/names.h"

namespace sc::env {
namespace {

using V = Var;

// The one table of the library's environment variables. A variable that is
// added here is documented by it; one that is read without it fails
// tests/core/env_test.cpp, which looks for getenv calls in csrc/ and kernels/.
constexpr Info kTable[] = {
    {V::Timeout, "SPARCOLL_TIMEOUT", "seconds, or `inf`",
     "300 s (`scConfig_t.timeoutSeconds` = 0 means \"this variable, else 300\")",
     "deadline of every blocking wait; on expiry the call returns `scTimeout` and the communicator is aborted",
     "`core/comm.cpp`; also `python/sparcoll/comm.py`, `_torch_work.py`"},
    {V::Algo, "SPARCOLL_ALGO", "an algorithm name (`scAlgoFromName`): ALGO_NAMES", "`auto` (the cost model's pick)",
     "forces the dense algorithm of every call that asks for `auto`", "`core/comm.cpp`"},
    {V::Check, "SPARCOLL_CHECK", "`0`/`off`, `1`/`all`, `native`", "`native` (`scConfig_t.check` = `scCheckDefault`)",
     "the cross-rank mismatch check of each call ([Reliability](reliability.md))", "`core/comm.cpp`"},
    {V::PipelineBytes, "SPARCOLL_PIPELINE_BYTES", "bytes: 0, or 8 B … 1 GiB", "0: the built-in slice",
     "the ring's slice size", "`core/comm.cpp`"},
    {V::TuningFile, "SPARCOLL_TUNING_FILE", "a path", "none: built-in constants",
     "a tuning file written by `sparcoll-tune` ([Cost model](cost-model.md)); `scConfig_t.tuningFile` first",
     "`core/comm.cpp`, `model/tuning.cpp`; also `python/sparcoll/model.py`, `comm.py`"},
    {V::Alpha, "SPARCOLL_ALPHA", "seconds ≥ 0", "per transport ([Cost model](cost-model.md))",
     "the cost model's α (latency per message); beats the tuning file, which beats the built-in value",
     "`core/comm.cpp`; also `python/sparcoll/model.py`"},
    {V::Beta, "SPARCOLL_BETA", "seconds per byte ≥ 0", "per transport",
     "the cost model's β (time per byte on a link); beats the tuning file",
     "`core/comm.cpp`; also `python/sparcoll/model.py`"},
    {V::Gamma, "SPARCOLL_GAMMA", "seconds per byte ≥ 0", "per transport",
     "the cost model's γ (time per byte reduced); beats the tuning file",
     "`core/comm.cpp`; also `python/sparcoll/model.py`"},
    {V::BetaShared, "SPARCOLL_BETA_SHARED", "seconds per byte ≥ 0", "0",
     "the cost model's β_s, the time per byte of a medium all ranks share; beats the tuning file",
     "`core/comm.cpp`; also `python/sparcoll/model.py`"},
    {V::MessageOverhead, "SPARCOLL_MESSAGE_OVERHEAD", "seconds ≥ 0", "α/12",
     "the neighbourhood collectives' per-message overhead o; beats the tuning file",
     "`core/comm.cpp`; also `python/sparcoll/model.py`"},
    {V::Machines, "SPARCOLL_MACHINES", "a positive integer", "found with `MPI_Comm_split_type` (mpi) or by host name",
     "the machine count the cost model assumes; `sparcoll-tune` takes the ranks as M blocks of consecutive ranks",
     "`core/comm.cpp`; also `tools/tune`"},
    {V::TopologyFile, "SPARCOLL_TOPOLOGY_FILE", "a path (JSON, version 1)",
     "none: rings in rank order (`scConfig_t.topologyFile` first)",
     "the network's tree, `scripts/cluster`'s format: rings run in its depth-first order and each link's bytes are "
     "counted ([Topology files](topology.md)); host communicators only",
     "`core/comm.cpp`, `topology/`"},
    {V::Hostname, "SPARCOLL_HOSTNAME", "a name, or a comma list with one name per rank", "`gethostname()`",
     "this process's machine name for the topology file's matching; a list gives local ranks (threads) distinct "
     "simulated machines",
     "`topology/setup.cpp`"},
    {V::RingOrder, "SPARCOLL_RING_ORDER", "`topology` or `rank`", "`topology`",
     "with a topology file, `rank` keeps rank order (the links are still counted), to compare the two",
     "`topology/setup.cpp`"},
    {V::ModelTransport, "SPARCOLL_MODEL_TRANSPORT", "one of `mpi nccl local`", "the communicator's own transport",
     "prices a communicator as one of another transport", "`core/comm.cpp`"},
    {V::FlightRecorder, "SPARCOLL_FLIGHT_RECORDER", "calls, 0 … 1000000", "32",
     "how many calls each rank's flight recorder keeps (0: off)", "`core/comm.cpp`, `core/trace.h`"},
    {V::Trace, "SPARCOLL_TRACE", "an existing directory", "off",
     "every rank writes a trace of every call there (merge with `sparcoll-trace-merge`)",
     "`core/comm.cpp`, `core/trace.cpp`"},
    {V::Membarrier, "SPARCOLL_MEMBARRIER", "`0`/`off` or `1`/`on`", "on",
     "`off`: each call's entry fences; `on`: destroys fence, by `membarrier` (Linux ≥ 4.14); read once, at the "
     "process's first communicator",
     "`core/entry.cpp`, `core/comm.cpp`"},
    {V::MpiShm, "SPARCOLL_MPI_SHM", "`0`/`off` or `1`/`on`", "on",
     "`off` turns the mpi transport's shared-memory queues off (every message through MPI)", "`transport/mpi/shm.cpp`"},
    {V::MpiCma, "SPARCOLL_MPI_CMA", "`0`/`off` or `1`/`on`", "on, where the kernel allows it",
     "`off` turns single copy (`process_vm_readv`) for large messages between ranks of a node off",
     "`transport/mpi/shm.cpp`"},
    {V::MpiShmMaxBytes, "SPARCOLL_MPI_SHM_MAX_BYTES", "bytes, with `K` or `M`, at most `16M`",
     "16 KiB where larger messages go by single copy; otherwise 32 KiB where ranks outnumber cores, else 16 KiB",
     "the largest message through the queues; the node's ranks take the smallest", "`transport/mpi/shm.cpp`"},
    {V::LocalPlanned, "SPARCOLL_LOCAL_PLANNED", "`0`/`off`, `1`/`on` or `one-stream`", "on",
     "`off`: the local transport's dense schedules on device buffers meet at every message instead of once per call "
     "(planned calls, [GPUs](gpus.md)), the baseline planned calls are measured against; `one-stream`: ranks on one "
     "device also run a call's work on one stream, with no event between ranks; read when the ranks are created",
     "`transport/local/transport.cpp`"},
    {V::RanksPerNode, "SPARCOLL_RANKS_PER_NODE", "a positive integer", "the real nodes",
     "virtual nodes of k consecutive ranks for the neighbourhood collectives (hierarchical schedule, model)",
     "`neighbor/validate.cpp`"},
    {V::NbrK, "SPARCOLL_NBR_K", "an integer ≥ 1", "chosen by the cost model",
     "the combining schedule's friend-group size (1 = no groups) ([Neighbourhood collectives](neighbor.md))",
     "`neighbor/validate.cpp`"},
    {V::NbrTheta, "SPARCOLL_NBR_THETA", "an integer ≥ 0", "chosen by the cost model",
     "the combining schedule's threshold", "`neighbor/validate.cpp`"},
    {V::SparseOwnerSum, "SPARCOLL_SPARSE_OWNER_SUM", "`merge` or `sort`", "`sort` on the device, `merge` on the host",
     "how a sparse allreduce sums an owner's pieces", "`sparse/split.cpp`"},
    {V::DsopGemm, "SPARCOLL_DSOP_GEMM", "one of `auto custom cublas`",
     "`auto` (custom kernel for small K, cuBLAS above)", "the device DSOP's local product (CUDA builds)",
     "`dsop/kernels.cpp`"},
    {V::TopkKernel, "SPARCOLL_TOPK_KERNEL", "`split` or `block`", "`split`",
     "the approx top-k kernel design on the GPU (CUDA builds)", "`kernels/topk_approx.cu`"},
    {V::TopkTile, "SPARCOLL_TOPK_TILE", "one of `auto 128x4 64x8 256x8`", "`auto`",
     "the block design's tile shape (CUDA builds)", "`kernels/topk_approx.cu`"},
};

constexpr bool inOrder() {
  for (size_t i = 0; i < sizeof kTable / sizeof kTable[0]; ++i)
    if (size_t(kTable[i].var) != i) return false;
  return sizeof kTable / sizeof kTable[0] == size_t(Var::Count);
}
static_assert(inOrder(), "env::kTable must list every Var once, in the enum's order");

}  // namespace

const Info* table(size_t* count) {
  *count = size_t(Var::Count);
  return kTable;
}

const Info& info(Var v) { return kTable[size_t(v)]; }

const char* get(Var v) {
  const char* value = std::getenv(info(v).name);
  return value && *value ? value : nullptr;
}

int onOff(Var v) {
  const char* e = get(v);
  if (!e || !std::strcmp(e, "1") || !strcasecmp(e, "on")) return 1;
  if (!std::strcmp(e, "0") || !strcasecmp(e, "off")) return 0;
  return -1;
}

std::string setting(Var v) {
  const char* value = get(v);
  return value ? std::string(name(v)) + "='" + value + "'" : std::string(name(v)) + " unset";
}

std::string markdown() {
  std::ostringstream o;
  o << "| variable | value | what it does | default | read by |\n|---|---|---|---|---|\n";
  for (const Info& e : kTable) {
    // The algorithm names come from their own table (core/names.h).
    std::string kind = e.kind;
    if (const size_t at = kind.find("ALGO_NAMES"); at != std::string::npos)
      kind.replace(at, 10, std::string("`") + algoNameList() + "`");
    o << "| `" << e.name << "` | " << kind << " | " << e.meaning << " | " << e.dflt << " | " << e.readBy << " |\n";
  }
  return o.str();
}

}  // namespace sc::env
