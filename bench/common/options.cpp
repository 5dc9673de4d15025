#include "common/options.h"

#include <algorithm>
#include <cstdlib>

namespace scbench {
namespace {

const char* kCombineNames[] = {"rank0", "mean", "min", "max"};

[[noreturn]] void usageError(const std::string& m) { throw UsageError{m}; }

// The names and aliases of the C API (scDataTypeFromName: nccl-tests' names,
// float32, f16, bf16, ...).
bool parseType(const std::string& s, scDataType_t* t) { return scDataTypeFromName(s.c_str(), t) == scSuccess; }

std::vector<scDataType_t> acceptedTypes(const ToolSpec& spec) {
  if (!spec.types.empty()) return spec.types;
  std::vector<scDataType_t> all;
  for (int t = 0; t < scNumTypes; ++t) all.push_back(scDataType_t(t));
  return all;
}

std::string join(const std::vector<std::string>& v, const std::string& sep, const std::string& last) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? last : sep) + v[i];
  return s;
}

void setTypes(Options& o, const ToolSpec& spec, const std::string& v) {
  const auto ok = acceptedTypes(spec);
  std::vector<std::string> names;
  for (auto t : ok) names.emplace_back(typeName(t));
  o.dtypes.clear();
  if (v == "all" && !spec.oneType) {
    o.dtypes = ok;
    return;
  }
  for (const auto& n : splitList(v)) {
    scDataType_t t;
    if (!parseType(n, &t))
      usageError("unknown data type '" + n + "' for -d (" + join(names, " ", " ") + (spec.oneType ? "" : " all") + ")");
    if (std::find(ok.begin(), ok.end(), t) == ok.end())
      usageError("data type '" + n + "' is not supported by " + spec.name + " (accepted: " + join(names, " ", " ") +
                 ")");
    o.dtypes.push_back(t);
  }
  if (o.dtypes.empty()) usageError("-d needs a data type");
  if (spec.oneType && o.dtypes.size() > 1) usageError(std::string("-d takes one data type in ") + spec.name);
}

void setOps(Options& o, const std::string& v) {
  o.ops.clear();
  if (v == "all") {
    for (int p = 0; p < scNumOps; ++p) o.ops.push_back(scRedOp_t(p));
    return;
  }
  for (const auto& n : splitList(v)) {
    scRedOp_t op;
    if (scRedOpFromName(n.c_str(), &op) != scSuccess) {
      std::string all;
      for (int p = 0; p < scNumOps; ++p) all += std::string(scRedOpName(scRedOp_t(p))) + " ";
      usageError("unknown reduction op '" + n + "' for -o (" + all + "all)");
    }
    o.ops.push_back(op);
  }
  if (o.ops.empty()) usageError("-o needs an op");
}

void setAlgorithms(Options& o, const ToolSpec& spec, const std::string& v) {
  std::vector<std::string> algos;
  for (const auto& n : splitList(v)) {
    if (std::find(spec.algorithms.begin(), spec.algorithms.end(), n) == spec.algorithms.end())
      usageError("algorithm '" + n + "' is not available in " + spec.name +
                 " (accepted: " + join(spec.algorithms, " ", " ") + ")");
    if (std::find(algos.begin(), algos.end(), n) == algos.end()) algos.push_back(n);
  }
  if (algos.empty()) usageError("-A needs at least one algorithm");
  o.algorithms = algos;
}

void setTransport(Options& o, const ToolSpec& spec, const std::string& v) {
  std::vector<std::string> names;
  for (auto t : spec.transports) {
    names.emplace_back(transportName(t));
    if (v == names.back()) {
      o.transport = t;
      return;
    }
  }
  usageError("-t takes " + join(names, ", ", " or ") + ", got '" + v +
             "' (nccl-tests' -t is the thread count; sparcoll's local ranks are set with -p)");
}

}  // namespace

FlagSet commonFlags(Options& o, const ToolSpec& spec) {
  auto num = [](long v) { return std::to_string(v); };
  const bool nccl = std::find(spec.transports.begin(), spec.transports.end(), scTransportNccl) != spec.transports.end();
  std::vector<std::string> types, transports;
  for (auto t : acceptedTypes(spec)) types.emplace_back(typeName(t));
  for (auto t : spec.transports) transports.emplace_back(transportName(t));
  FlagSet f;
  f.add({'b', "minbytes", "<size>", "smallest size (default " + formatSize(o.minBytes) + ")",
         [&o](const std::string& v) { o.minBytes = parseSize(v, "-b (minbytes)"); }});
  f.add({'e', "maxbytes", "<size>", "largest size (default " + formatSize(o.maxBytes) + ")",
         [&o](const std::string& v) { o.maxBytes = parseSize(v, "-e (maxbytes)"); }});
  f.add({'i', "stepbytes", "<size>", "fixed increment (used when -f is not given)",
         [&o](const std::string& v) { o.stepBytes = parseSize(v, "-i (stepbytes)"); }});
  f.add({'f', "stepfactor", "<n>", "multiplication factor between sizes (default " + num(long(o.stepFactor)) + ")",
         [&o](const std::string& v) { o.stepFactor = size_t(parseInt(v, "-f (stepfactor)", 1, 1 << 20)); }});
  f.add({'n', "iters", "<n>", "timed iterations (default " + num(o.iters) + ")",
         [&o](const std::string& v) { o.iters = int(parseInt(v, "-n (iters)", 1, 1 << 30)); }});
  f.add({'w', "warmup_iters", "<n>", "warmup iterations (default " + num(o.warmupIters) + ")",
         [&o](const std::string& v) { o.warmupIters = int(parseInt(v, "-w (warmup_iters)", 0, 1 << 30)); }});
  f.add({'m', "agg_iters", "<n>", "calls per timed iteration (default " + num(o.aggIters) + ")",
         [&o](const std::string& v) { o.aggIters = int(parseInt(v, "-m (agg_iters)", 1, 1 << 20)); }});
  f.add({'c', "check", "<n>", "checked iterations per size, 0 = no check (default " + num(o.check) + ")",
         [&o](const std::string& v) { o.check = int(parseInt(v, "-c (check)", 0, 1 << 20)); }});
  f.add({'d', "datatype", spec.oneType ? "<type>" : "<type|all>", join(types, " ", " "),
         [&o, &spec](const std::string& v) { setTypes(o, spec, v); }});
  f.add({'o', "op", "<op|all>", std::string("sum prod max min avg (default ") + opName(o.ops.front()) + ")",
         [&o](const std::string& v) { setOps(o, v); }});
  f.add({'r', "root", "<n>", "root of broadcast_perf (default 0); accepted and ignored by the other tools",
         [&o](const std::string& v) { o.root = int(parseInt(v, "-r (root)", -1, 1 << 30)); }});
  f.add({'a', "average", "<0|1|2|3>",
         "combine per-rank times: rank0, mean, min, max (default " + num(int(o.combine)) + " = " +
             kCombineNames[int(o.combine)] + ")",
         [&o](const std::string& v) { o.combine = Combine(parseInt(v, "-a (average)", 0, 3)); }});
  f.add({'z', "blocking", "<0|1>", "accepted; ignored",
         [&o](const std::string& v) { o.blocking = int(parseInt(v, "-z (blocking)", 0, 1)); }});
  f.add({'g', "ngpus", "<1>", "GPUs per rank; must be 1", [&o](const std::string& v) {
           o.ngpus = int(parseInt(v, "-g (ngpus)", 1, 1 << 20));
           if (o.ngpus != 1)
             usageError("-g must be 1: sparcoll runs one rank per GPU (use more MPI ranks, or -t local -p N -D 1)");
         }});
  f.add({'G', "cudagraph", "<0>", "CUDA graphs are not supported; must be 0", [&o](const std::string& v) {
           o.cudaGraph = int(parseInt(v, "-G (cudagraph)", 0, 1 << 20));
           if (o.cudaGraph) usageError("-G: CUDA graph capture is not supported (sparcoll calls may wait on the host)");
         }});
  f.add({'C', "report_cputime", "<0|1>", "report the time until the calls return (before the stream sync)",
         [&o](const std::string& v) { o.reportCpuTime = int(parseInt(v, "-C (report_cputime)", 0, 1)); }});
  f.add({'T', "timeout", "<s>", "deadline of each call in seconds (default: library's, 300)",
         [&o](const std::string& v) { o.timeoutSeconds = parseNumber(v, "-T (timeout)", 0, 1 << 30); }});
  f.add({'J', "output_file", "<file>", "JSON lines, one per (algorithm, type, op, size, in-place)",
         [&o](const std::string& v) { o.jsonFile = v; }});
  f.section("sparcoll options:");
  f.add({'t', "transport", "<" + join(transports, "|", "|") + ">",
         nccl ? "default: mpi under mpirun, else local; nccl outside\n"
                "mpirun: one rank on GPU 0 (scGetUniqueId + scCommInitRank)"
              : "default: mpi under mpirun, else local",
         [&o, &spec](const std::string& v) { setTransport(o, spec, v); }});
  f.add({'p', "nranks", "<n>", "ranks (threads) of the local transport (default " + num(o.localRanks) + ")",
         [&o](const std::string& v) { o.localRanks = int(parseInt(v, "-p (nranks)", 1, 4096)); }});
  f.add({'D', "device_buffers", "<0|1>", "local transport on GPU buffers (default " + num(o.deviceBuffers) + ")",
         [&o](const std::string& v) { o.deviceBuffers = parseInt(v, "-D (device_buffers)", 0, 1) != 0; }});
  std::string algos = "comma-separated, one block each; accepted:";
  for (const auto& a : spec.algorithms) algos += " " + a;
  std::string defaults;
  for (const auto& a : o.algorithms) defaults += (defaults.empty() ? "" : ",") + a;
  f.add({'A', "algorithms", "<list>", algos + " (default " + defaults + ")",
         [&o, &spec](const std::string& v) { setAlgorithms(o, spec, v); }});
  f.keepOnly(spec.flags);
  return f;
}

void finishOptions(Options& o, const ToolSpec& spec, const FlagSet& flags) {
  if (o.minBytes > o.maxBytes) usageError("invalid sizes: minbytes (-b) is larger than maxbytes (-e)");
  if (flags.given('i') && !flags.given('f')) o.stepFactor = 1;  // -i alone: fixed increments, as in nccl-tests
  if (o.sizeList.empty() && o.stepFactor <= 1 && o.minBytes != o.maxBytes) {
    if (!flags.has('i')) usageError("-f must be at least 2 (there is no fixed increment -i here)");
    if (o.stepBytes == 0) usageError("-i 0 with -f 1 would never reach maxbytes");
  }
  if (!spec.hasOp) o.ops = {scSum};
  if (spec.transports.empty()) {
    o.noComm = true;
    return;
  }
  if (!flags.given('t')) o.transport = launchedByMpi() ? scTransportMpi : scTransportLocal;
  if (o.transport == scTransportNccl) o.deviceBuffers = true;
  const bool nccl = std::find(spec.transports.begin(), spec.transports.end(), scTransportNccl) != spec.transports.end();
  if (o.transport == scTransportMpi && o.deviceBuffers)
    usageError(o.deviceFlag + (nccl ? " needs the local or nccl transport" : " needs the local transport") +
               " (the mpi transport works on host buffers)");
}

const char* typeName(scDataType_t t) { return scDataTypeName(t); }
const char* opName(scRedOp_t op) { return scRedOpName(op); }
const char* transportName(scTransport_t t) {
  return t == scTransportMpi ? "mpi" : t == scTransportNccl ? "nccl" : t == scTransportLocal ? "local" : "?";
}

bool launchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

}  // namespace scbench
