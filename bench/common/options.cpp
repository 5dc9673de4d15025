#include "common/options.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace scbench {
namespace {

const char* kTypeNames[scNumTypes] = {"int8", "uint8", "int32", "uint32", "int64",
                                      "uint64", "half", "float", "double", "bfloat16"};
const char* kOpNames[scNumOps] = {"sum", "prod", "max", "min", "avg"};

[[noreturn]] void usageError(const std::string& m) { throw UsageError{m}; }

long parseInt(const char* s, const char* what, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s, &end, 0);
  if (errno || !end || *end || end == s || v < lo || v > hi) {
    std::ostringstream os;
    os << "invalid value '" << s << "' for " << what << " (expected an integer in [" << lo << ", " << hi << "])";
    usageError(os.str());
  }
  return v;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (ch != ' ') {
      cur += ch;
    }
  }
  return out;
}

// nccl-tests names first, then sparcoll's (float32, f16, bf16, ...).
bool parseType(const std::string& s, scDataType_t* t) {
  static const struct { const char* n; scDataType_t t; } aliases[] = {
      {"char", scInt8},     {"int", scInt32},        {"float16", scFloat16}, {"f16", scFloat16},
      {"fp16", scFloat16},  {"float32", scFloat32},  {"f32", scFloat32},     {"fp32", scFloat32},
      {"float64", scFloat64}, {"f64", scFloat64},    {"fp64", scFloat64},    {"bf16", scBfloat16}};
  for (int i = 0; i < scNumTypes; ++i)
    if (s == kTypeNames[i]) { *t = scDataType_t(i); return true; }
  for (const auto& a : aliases)
    if (s == a.n) { *t = a.t; return true; }
  return false;
}

std::string usage(const ToolSpec& spec) {
  std::ostringstream os;
  os << "USAGE: " << spec.name << " [options]   (nccl-tests compatible; sizes accept K/M/G)\n"
     << "  -b,--minbytes <size>        smallest size (default 32M)\n"
     << "  -e,--maxbytes <size>        largest size (default 32M)\n"
     << "  -i,--stepbytes <size>       fixed increment (used when -f is not given)\n"
     << "  -f,--stepfactor <n>         multiplication factor between sizes (default 2)\n"
     << "  -n,--iters <n>              timed iterations (default 20)\n"
     << "  -w,--warmup_iters <n>       warmup iterations (default 5)\n"
     << "  -m,--agg_iters <n>          calls per timed iteration (default 1)\n"
     << "  -c,--check <n>              checked iterations per size, 0 = no check (default 1)\n"
     << "  -d,--datatype <type|all>    int8 uint8 int32 uint32 int64 uint64 half float double bfloat16\n"
     << "  -o,--op <op|all>            sum prod max min avg (default sum)\n"
     << "  -r,--root <n>               accepted for compatibility (no root in these collectives)\n"
     << "  -a,--average <0|1|2|3>      combine per-rank times: rank0, mean, min, max (default 3 = max)\n"
     << "  -z,--blocking <0|1>         accepted; ignored\n"
     << "  -g,--ngpus <1>              GPUs per rank; must be 1\n"
     << "  -G,--cudagraph <0>          CUDA graphs are not supported; must be 0\n"
     << "  -C,--report_cputime <0|1>   report the time until the calls return (before the stream sync)\n"
     << "  -T,--timeout <s>            deadline of each call in seconds (default: library's, 300)\n"
     << "  -J,--output_file <file>     JSON lines, one per (algorithm, type, op, size, in-place)\n"
     << "sparcoll options:\n"
     << "  -t,--transport <mpi|nccl|local>  default: mpi under mpirun, else local; nccl outside\n"
     << "                              mpirun: one rank on GPU 0 (scGetUniqueId + scCommInitRank)\n"
     << "  -p,--nranks <n>             ranks (threads) of the local transport (default 4)\n"
     << "  -D,--device_buffers <0|1>   local transport on GPU buffers (default 0)\n"
     << "  -A,--algorithms <list>      comma-separated, one block each; accepted:";
  for (const auto& a : spec.algorithms) os << ' ' << a;
  os << " (default " << spec.algorithms.front() << ")\n"
     << "  -h,--help\n";
  return os.str();
}

}  // namespace

const char* typeName(scDataType_t t) { return t >= 0 && t < scNumTypes ? kTypeNames[t] : "?"; }
const char* opName(scRedOp_t op) { return op >= 0 && op < scNumOps ? kOpNames[op] : "?"; }
const char* transportName(scTransport_t t) {
  return t == scTransportMpi ? "mpi" : t == scTransportNccl ? "nccl" : t == scTransportLocal ? "local" : "?";
}

bool launchedByMpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "PMI_RANK", "MPI_LOCALNRANKS"})
    if (std::getenv(v)) return true;
  return false;
}

size_t parseSize(const std::string& s, const char* what) {
  // nccl-tests' parsesize: a number and an optional K/M/G suffix (powers of 1024).
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  double unit = 1;
  if (end && *end) {
    switch (*end) {
      case 'k': case 'K': unit = 1024.0; break;
      case 'm': case 'M': unit = 1024.0 * 1024; break;
      case 'g': case 'G': unit = 1024.0 * 1024 * 1024; break;
      default: unit = -1;
    }
    if (end[1] != '\0' && !(end[1] == 'B' && end[2] == '\0')) unit = -1;
  }
  if (errno || end == s.c_str() || unit < 0 || !(v >= 0) || v * unit > 1e18)
    usageError("invalid size '" + s + "' for " + what + " (examples: 8, 1K, 64M, 1G)");
  return size_t(v * unit);
}

Options parseArgs(int argc, char** argv, const ToolSpec& spec, bool* help, std::string* helpText) {
  Options o;
  *help = false;
  bool factorGiven = false, stepGiven = false, transportGiven = false;
  std::vector<std::string> algos;
  static const option longopts[] = {
      {"minbytes", required_argument, nullptr, 'b'},   {"maxbytes", required_argument, nullptr, 'e'},
      {"stepbytes", required_argument, nullptr, 'i'},  {"stepfactor", required_argument, nullptr, 'f'},
      {"iters", required_argument, nullptr, 'n'},      {"warmup_iters", required_argument, nullptr, 'w'},
      {"agg_iters", required_argument, nullptr, 'm'},  {"check", required_argument, nullptr, 'c'},
      {"datatype", required_argument, nullptr, 'd'},   {"op", required_argument, nullptr, 'o'},
      {"root", required_argument, nullptr, 'r'},       {"average", required_argument, nullptr, 'a'},
      {"blocking", required_argument, nullptr, 'z'},   {"ngpus", required_argument, nullptr, 'g'},
      {"cudagraph", required_argument, nullptr, 'G'},  {"report_cputime", required_argument, nullptr, 'C'},
      {"timeout", required_argument, nullptr, 'T'},    {"output_file", required_argument, nullptr, 'J'},
      {"transport", required_argument, nullptr, 't'},  {"nranks", required_argument, nullptr, 'p'},
      {"device_buffers", required_argument, nullptr, 'D'}, {"algorithms", required_argument, nullptr, 'A'},
      {"inject-error", no_argument, nullptr, 1000},    {"help", no_argument, nullptr, 'h'},
      {nullptr, 0, nullptr, 0}};
  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, ":b:e:i:f:n:w:m:c:d:o:r:a:z:g:G:C:T:J:t:p:D:A:h", longopts, nullptr)) != -1) {
    switch (c) {
      case 'b': o.minBytes = parseSize(optarg, "-b (minbytes)"); break;
      case 'e': o.maxBytes = parseSize(optarg, "-e (maxbytes)"); break;
      case 'i': o.stepBytes = parseSize(optarg, "-i (stepbytes)"); stepGiven = true; break;
      case 'f': o.stepFactor = size_t(parseInt(optarg, "-f (stepfactor)", 1, 1 << 20)); factorGiven = true; break;
      case 'n': o.iters = int(parseInt(optarg, "-n (iters)", 1, 1 << 30)); break;
      case 'w': o.warmupIters = int(parseInt(optarg, "-w (warmup_iters)", 0, 1 << 30)); break;
      case 'm': o.aggIters = int(parseInt(optarg, "-m (agg_iters)", 1, 1 << 20)); break;
      case 'c': o.check = int(parseInt(optarg, "-c (check)", 0, 1 << 20)); break;
      case 'd': {
        o.dtypes.clear();
        if (std::strcmp(optarg, "all") == 0) {
          for (int t = 0; t < scNumTypes; ++t) o.dtypes.push_back(scDataType_t(t));
          break;
        }
        for (const auto& n : splitList(optarg)) {
          scDataType_t t;
          if (!parseType(n, &t))
            usageError("unknown data type '" + n + "' for -d (int8 uint8 int32 uint32 int64 uint64 half float double bfloat16 all)");
          o.dtypes.push_back(t);
        }
        if (o.dtypes.empty()) usageError("-d needs a data type");
        break;
      }
      case 'o': {
        o.ops.clear();
        if (std::strcmp(optarg, "all") == 0) {
          for (int p = 0; p < scNumOps; ++p) o.ops.push_back(scRedOp_t(p));
          break;
        }
        for (const auto& n : splitList(optarg)) {
          int found = -1;
          for (int p = 0; p < scNumOps; ++p)
            if (n == kOpNames[p]) found = p;
          if (found < 0) usageError("unknown reduction op '" + n + "' for -o (sum prod max min avg all)");
          o.ops.push_back(scRedOp_t(found));
        }
        if (o.ops.empty()) usageError("-o needs an op");
        break;
      }
      case 'r': o.root = int(parseInt(optarg, "-r (root)", -1, 1 << 30)); break;
      case 'a': o.combine = Combine(parseInt(optarg, "-a (average)", 0, 3)); break;
      case 'z': o.blocking = int(parseInt(optarg, "-z (blocking)", 0, 1)); break;
      case 'g':
        o.ngpus = int(parseInt(optarg, "-g (ngpus)", 1, 1 << 20));
        if (o.ngpus != 1) usageError("-g must be 1: sparcoll runs one rank per GPU (use more MPI ranks, or -t local -p N -D 1)");
        break;
      case 'G':
        o.cudaGraph = int(parseInt(optarg, "-G (cudagraph)", 0, 1 << 20));
        if (o.cudaGraph) usageError("-G: CUDA graph capture is not supported (sparcoll calls may wait on the host)");
        break;
      case 'C': o.reportCpuTime = int(parseInt(optarg, "-C (report_cputime)", 0, 1)); break;
      case 'T': o.timeoutSeconds = double(parseInt(optarg, "-T (timeout)", 0, 1 << 30)); break;
      case 'J': o.jsonFile = optarg; break;
      case 't':
        transportGiven = true;
        if (std::strcmp(optarg, "mpi") == 0) o.transport = scTransportMpi;
        else if (std::strcmp(optarg, "nccl") == 0) o.transport = scTransportNccl;
        else if (std::strcmp(optarg, "local") == 0) o.transport = scTransportLocal;
        else
          usageError(std::string("-t takes mpi, nccl or local, got '") + optarg +
                     "' (nccl-tests' -t is the thread count; sparcoll's local ranks are set with -p)");
        break;
      case 'p': o.localRanks = int(parseInt(optarg, "-p (nranks)", 1, 4096)); break;
      case 'D': o.deviceBuffers = parseInt(optarg, "-D (device_buffers)", 0, 1) != 0; break;
      case 'A':
        for (const auto& n : splitList(optarg)) {
          bool ok = false;
          for (const auto& a : spec.algorithms) ok = ok || a == n;
          if (!ok) {
            std::string list;
            for (const auto& a : spec.algorithms) list += " " + a;
            usageError("algorithm '" + n + "' is not available in " + spec.name + " (accepted:" + list + ")");
          }
          bool dup = false;
          for (const auto& a : algos) dup = dup || a == n;
          if (!dup) algos.push_back(n);
        }
        if (algos.empty()) usageError("-A needs at least one algorithm");
        break;
      case 1000: o.injectError = true; break;
      case 'h': *help = true; *helpText = usage(spec); return o;
      case ':':
        usageError(std::string("option '") + argv[optind - 1] + "' needs a value (see -h)");
      default:
        usageError(std::string("unknown option '") + (optind > 0 && optind <= argc ? argv[optind - 1] : "?") +
                   "' (see -h)");
    }
  }
  if (optind < argc) usageError(std::string("unexpected argument '") + argv[optind] + "' (see -h)");
  if (o.minBytes > o.maxBytes) usageError("invalid sizes: minbytes (-b) is larger than maxbytes (-e)");
  if (stepGiven && !factorGiven) o.stepFactor = 1;  // -i alone: fixed increments, as in nccl-tests
  if (o.stepFactor <= 1 && o.stepBytes == 0 && o.minBytes != o.maxBytes)
    usageError("-i 0 with -f 1 would never reach maxbytes");
  if (!spec.hasOp) o.ops = {scSum};
  o.algorithms = algos.empty() ? std::vector<std::string>{spec.algorithms.front()} : algos;
  if (!transportGiven) o.transport = launchedByMpi() ? scTransportMpi : scTransportLocal;
  if (o.transport == scTransportNccl) o.deviceBuffers = true;
  if (o.transport == scTransportMpi && o.deviceBuffers)
    usageError("-D 1 needs the local or nccl transport (the mpi transport works on host buffers)");
  return o;
}

}  // namespace scbench
