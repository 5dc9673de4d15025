// The command line shared by the benchmark tools, compatible with nccl-tests
// (-b -e -i -f -n -w -m -c -d -o -r -a -z -g -G -C -T -J, same defaults, same
// size syntax) plus sparcoll's own flags:
//   -t mpi|nccl|local   transport (default: mpi under mpirun, else local)
//   -p N                ranks of the local transport (threads), default 4
//   -A a,b,...          algorithms to compare, one block each (default: the
//                       tool's first algorithm, "auto" for the dense tools)
//   -D 0|1              local transport on device buffers (one GPU per rank,
//                       round robin over the visible GPUs)
// A tool takes the subset named in its ToolSpec and adds flags of its own
// (Tool::addFlags); letters it leaves out are free for its own meanings.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/flags.h"
#include "sparcoll/sparcoll.h"

namespace scbench {

// How per-rank times are combined (nccl-tests -a): rank 0, mean, min, max.
enum class Combine { Rank0 = 0, Avg = 1, Min = 2, Max = 3 };

// What a tool accepts; the driver validates the command line against it.
struct ToolSpec {
  const char* name = "";                         // program name for usage, e.g. "all_reduce_perf"
  const char* collective = "";                   // for headers and messages, e.g. "AllReduce"
  std::vector<std::string> algorithms;           // accepted by -A; the first is the default
  bool hasOp = true;                             // false: -o is ignored, redop prints "none"
  const char* baseline = "native";               // the summary's and JSON's ratios are relative to it
  std::string flags = "beifnwmcdorazgGCTJtpDA";  // the shared flags this tool takes, by letter
  // Transports -t accepts; empty: the tool runs once in its own process, without ranks.
  std::vector<scTransport_t> transports{scTransportMpi, scTransportNccl, scTransportLocal};
  std::vector<scDataType_t> types;                                    // accepted by -d; empty: every type
  bool oneType = false;                                               // -d takes one type (no lists, no "all")
  std::string about = "(nccl-tests compatible; sizes accept K/M/G)";  // the usage line's note
  bool hasRoot = false;  // true: -r is the root, printed in the root column (else -1); last, for positional inits
};

struct Options {
  // Sizes (bytes): nccl-tests semantics; factor > 1 wins over stepBytes.
  size_t minBytes = size_t(32) << 20;
  size_t maxBytes = size_t(32) << 20;
  size_t stepBytes = size_t(1) << 20;
  size_t stepFactor = 2;
  std::vector<size_t> sizeList;  // a tool's explicit sizes: when set, the sweep runs these instead
  int iters = 20, warmupIters = 5, aggIters = 1;
  int check = 1;  // -c: checked iterations per size (0: no check)
  std::vector<scDataType_t> dtypes{scFloat32};
  std::vector<scRedOp_t> ops{scSum};
  int root = 0;                    // -r: the root of rooted collectives (broadcast_perf); others accept and ignore it
  int blocking = 0;                // -z: accepted; host calls are blocking anyway
  int ngpus = 1;                   // -g: must be 1 (one rank per GPU)
  int cudaGraph = 0;               // -G: must be 0
  int reportCpuTime = 0;           // -C: time until the calls return, before the stream sync
  Combine combine = Combine::Max;  // -a: default max over ranks (nccl-tests' default is mean)
  double timeoutSeconds = 0;       // -T: per-call deadline; 0 = library default
  std::string jsonFile;            // -J: JSON lines

  scTransport_t transport = scTransportLocal;  // -t
  int localRanks = 4;                          // -p
  bool deviceBuffers = false;                  // -D (local transport); always true for nccl
  std::string deviceFlag = "-D 1";             // the flag that asks for device buffers, for messages
  std::vector<std::string> algorithms;         // -A
  bool injectError = false;                    // --inject-error (dense tools)
  bool noComm = false;  // run once in this process without ranks (no transports, or a tool's mode)
};

// The shared flags of `spec` (its ToolSpec::flags), writing into o; their
// help shows o's current values as the defaults.
FlagSet commonFlags(Options& o, const ToolSpec& spec);
// After parsing: checks across the shared flags and their derived defaults
// (transport from the launcher, -i without -f, ...). Throws UsageError.
void finishOptions(Options& o, const ToolSpec& spec, const FlagSet& flags);

// nccl-tests' names: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16.
const char* typeName(scDataType_t t);
const char* opName(scRedOp_t op);
const char* transportName(scTransport_t t);

// True when this process was started by mpirun/srun (Open MPI, MPICH/PMI, PMIx).
bool launchedByMpi();

}  // namespace scbench
