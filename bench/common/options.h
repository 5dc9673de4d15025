// Command line of the benchmark tools, compatible with nccl-tests
// (-b -e -i -f -n -w -m -c -d -o -r -a -z -g -G -C -T -J, same defaults, same
// size syntax) plus sparcoll's own flags:
//   -t mpi|nccl|local   transport (default: mpi under mpirun, else local)
//   -p N                ranks of the local transport (threads), default 4
//   -A a,b,...          algorithms to compare, one block each (default: the
//                       tool's first algorithm, "auto" for the dense tools)
//   -D 0|1              local transport on device buffers (one GPU per rank,
//                       round robin over the visible GPUs)
//   --inject-error      debug: corrupt one result element before each check,
//                       to prove that the checker and the exit status work
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "sparcoll/sparcoll.h"

namespace scbench {

// Thrown for bad command lines and setup failures; main() prints it and exits 2.
struct UsageError {
  std::string msg;
};

// How per-rank times are combined (nccl-tests -a): rank 0, mean, min, max.
enum class Combine { Rank0 = 0, Avg = 1, Min = 2, Max = 3 };

// What a tool accepts; the driver validates the command line against it.
struct ToolSpec {
  const char* name;                     // program name for usage, e.g. "all_reduce_perf"
  const char* collective;               // for headers and messages, e.g. "AllReduce"
  std::vector<std::string> algorithms;  // accepted by -A; the first is the default
  bool hasOp = true;                    // false: -o is ignored, redop prints "none"
  const char* baseline = "native";      // the summary's and JSON's ratios are relative to it
};

struct Options {
  // Sizes (bytes): nccl-tests semantics; factor > 1 wins over stepBytes.
  size_t minBytes = size_t(32) << 20;
  size_t maxBytes = size_t(32) << 20;
  size_t stepBytes = size_t(1) << 20;
  size_t stepFactor = 2;
  int iters = 20, warmupIters = 5, aggIters = 1;
  int check = 1;                 // -c: checked iterations per size (0: no check)
  std::vector<scDataType_t> dtypes{scFloat32};
  std::vector<scRedOp_t> ops{scSum};
  int root = 0;                  // -r: accepted for compatibility, unused by these collectives
  int blocking = 0;              // -z: accepted; host calls are blocking anyway
  int ngpus = 1;                 // -g: must be 1 (one rank per GPU)
  int cudaGraph = 0;             // -G: must be 0
  int reportCpuTime = 0;         // -C: time until the calls return, before the stream sync
  Combine combine = Combine::Max;  // -a: default max over ranks (nccl-tests' default is mean)
  double timeoutSeconds = 0;     // -T: per-call deadline; 0 = library default
  std::string jsonFile;          // -J: JSON lines, one per (algorithm, size, in-place)

  scTransport_t transport = scTransportLocal;  // -t
  int localRanks = 4;                          // -p
  bool deviceBuffers = false;                  // -D (local transport); always true for nccl
  std::vector<std::string> algorithms;         // -A
  bool injectError = false;                    // --inject-error
};

// "64M" -> 67108864 (K, M, G are powers of 1024, as in nccl-tests). Throws UsageError.
size_t parseSize(const std::string& s, const char* what);

// Parses argv. Throws UsageError with a clear message; sets *help when -h was given
// (the usage text is then in *helpText).
Options parseArgs(int argc, char** argv, const ToolSpec& spec, bool* help, std::string* helpText);

// nccl-tests' names: int8 uint8 int32 uint32 int64 uint64 half float double bfloat16.
const char* typeName(scDataType_t t);
const char* opName(scRedOp_t op);
const char* transportName(scTransport_t t);

// True when this process was started by mpirun/srun (Open MPI, MPICH/PMI, PMIx).
bool launchedByMpi();

}  // namespace scbench
