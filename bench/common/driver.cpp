// Command line and transport launch: one rank per MPI process (mpi, nccl under
// mpirun), one thread per rank (local), one single-process NCCL rank (nccl
// without mpirun or without MPI), or one rank without a communicator (tools
// without transports), each with its own stream and buffers; then the tool's
// per-rank benchmark everywhere.
#include "common/driver.h"

#include <algorithm>
#include <unistd.h>

#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <new>
#include <thread>

#include "common/json.h"
#include "common/table.h"

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

namespace scbench {

namespace {

const char* g_tool = "sparcoll bench";  // the running tool's name, for error lines

// One error line on stderr, "<tool>: <msg>", after what stdout holds so far.
void printError(const std::string& msg) {
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %s\n", g_tool, msg.c_str());
  std::fflush(stderr);
}

// The message of the exception being handled (never empty).
std::string currentError() {
  std::string m;
  try {
    throw;
  } catch (const UsageError& e) {
    m = e.msg;
  } catch (const std::bad_alloc&) {
    m = "cannot allocate memory (lower the largest size or the number of ranks)";
  } catch (const std::exception& e) {
    m = e.what();
  } catch (...) {
  }
  return m.empty() ? "unknown error" : m;
}

// A rank's failure as reported: "rank r: " names it when the run has several.
std::string onRank(int rank, int nranks, const std::string& msg) {
  return nranks > 1 ? "rank " + std::to_string(rank) + ": " + msg : msg;
}

// The rank threads of the local transport report here; the main thread waits
// for all of them or for the first failure. A failed rank can leave the others
// waiting for it (in a barrier, or in a call until its deadline), so the main
// thread then reports and exits without joining them.
class RankOutcomes {
 public:
  explicit RankOutcomes(int nranks) : running_(nranks) {}
  void finished(std::string failure) {
    std::lock_guard<std::mutex> lk(m_);
    if (first_.empty()) first_ = std::move(failure);
    --running_;
    cv_.notify_all();
  }
  // The first failure ("" if none), once every rank finished or one failed.
  std::string wait(bool* allFinished) {
    std::unique_lock<std::mutex> lk(m_);
    cv_.wait(lk, [&] { return running_ == 0 || !first_.empty(); });
    *allFinished = running_ == 0;
    return first_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int running_;
  std::string first_;
};

// Ends the process from the main thread while rank threads may still run:
// no destructors, no atexit handlers (they would race with those threads).
[[noreturn]] void exitNow(const std::string& msg) {
  printError(msg);
  std::_Exit(2);
}

std::string hostName() {
  char h[256] = "?";
  gethostname(h, sizeof h - 1);
  return h;
}

// Rank 0 of an mpirun launch, read before MPI_Init (for usage errors).
bool envRankZero() {
  for (const char* v : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"})
    if (const char* s = std::getenv(v)) return std::atoi(s) == 0;
  return true;
}

// MemAvailable of /proc/meminfo in bytes; 0 when unknown (no check then).
double availableHostBytes() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  double kb = 0;
  while (f >> key >> kb) {
    if (key == "MemAvailable:") return kb * 1024;
    f.ignore(256, '\n');
  }
  return 0;
}

// Empty when `ranksHere` ranks of this tool fit in this machine's available memory.
std::string hostMemoryProblem(const Tool& tool, const Options& o, int nranks, int ranksHere) {
  const double need = tool.hostBytesPerRank(o, nranks) * ranksHere, avail = availableHostBytes();
  if (avail <= 0 || need <= avail) return "";
  return fmt(
      "not enough host memory: %d rank%s on this machine need%s about %.1f GiB, %.1f GiB are available "
      "(lower the largest size or the number of ranks)",
      ranksHere, ranksHere == 1 ? "" : "s", ranksHere == 1 ? "s" : "", need / (1 << 30), avail / (1 << 30));
}

long long rankBody(Tool& tool, Group& g, RankState& rs, const Options& o, const RunInfo& info) {
  if (g.rank() == 0 && !o.jsonFile.empty()) {  // fail before the run, not after it
    JsonLines probe;
    std::string err;
    if (!probe.open(o.jsonFile, &err)) fatal(err);
  }
  return tool.runRank(g, rs, Context{o, info});
}

// Rank rs works on CUDA device dev with a stream of its own.
void useDevice(RankState& rs, int dev) {
  rs.device = true;
  rs.cudaDevice = dev;
  setDevice(dev);
  rs.stream = createStream();
}

// The mismatch check is off unless SPARCOLL_CHECK asks for it: a benchmark's
// calls match by construction, and the library's default (checking native
// calls) would add one small exchange to the baseline, native, which stands
// for the underlying library's own collective.
scConfig_t configFor(const Tool& tool, const Options& o) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.transport = o.transport;
  cfg.timeoutSeconds = o.timeoutSeconds;
  if (const char* v = std::getenv("SPARCOLL_CHECK"); !v || !*v) cfg.check = scCheckOff;
  tool.configure(cfg, o);
  return cfg;
}

// "<what> failed: <message>". The library's message starts with the error's
// name (scGetErrorString) already: it is taken whole, never prefixed again;
// the communicator's first, else the thread's (failures the library records
// without the communicator). A message that does not start with the name is
// an older failure's, and only the name is reported.
std::string failure(const std::string& what, scResult_t r, scComm_t comm) {
  const std::string err = scGetErrorString(r);
  for (const char* m : {scGetLastError(comm), scGetLastError(nullptr)})
    if (m && std::string(m).rfind(err, 0) == 0) return what + " failed: " + m;
  return what + " failed: " + err;
}

[[noreturn]] void initFailed(const char* what, scResult_t r) { fatal(failure(what, r, nullptr)); }

long long runMpi(Tool& tool, const Options& o, RunInfo& info, int* argc, char*** argv) {
#ifdef SPARCOLL_HAVE_MPI
#ifndef SPARCOLL_HAVE_NCCL
  if (o.transport == scTransportNccl)
    throw UsageError{"-t nccl needs a build with CUDA and NCCL (SPARCOLL_CUDA=ON SPARCOLL_NCCL=ON)"};
#endif
  MPI_Init(argc, argv);
  long long failed = 0;
  std::string problem;
  {
    auto g = makeMpiGroup();
    RankState rs;
    rs.rank = g->rank();
    rs.nranks = g->size();
    MPI_Comm node;
    int localRank = 0, localSize = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rs.rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_size(node, &localSize);
    MPI_Comm_free(&node);
    // Every rank decides the same: the first problem any rank sees.
    for (const auto& p : g->allgather(hostMemoryProblem(tool, o, rs.nranks, localSize)))
      if (problem.empty()) problem = p;
    if (problem.empty()) {
      try {
        scConfig_t cfg = configFor(tool, o);
        if (o.transport == scTransportNccl) {  // one GPU per rank, chosen by node-local rank
          const int ndev = deviceCount();
          if (ndev == 0) fatal("the nccl transport needs a GPU; none is visible");
          useDevice(rs, localRank % ndev);
          cfg.device = rs.cudaDevice;
        }
        info.nranks = rs.nranks;
        info.device = rs.device;
        const scResult_t r = scCommInitMpi(&rs.comm, nullptr, &cfg);
        if (r != scSuccess) initFailed("scCommInitMpi", r);
        failed = rankBody(tool, *g, rs, o, info);
      } catch (...) {
        // The other ranks may be waiting for this one: the whole job ends.
        printError(onRank(rs.rank, rs.nranks, currentError()));
        MPI_Abort(MPI_COMM_WORLD, 2);
      }
      scCommDestroy(rs.comm);
      destroyStream(rs.stream);
    }
  }
  MPI_Finalize();
  if (!problem.empty()) throw UsageError{problem};
  return failed;
#else
  (void)tool, (void)o, (void)info, (void)argc, (void)argv;
  throw UsageError{std::string("-t ") + transportName(o.transport) +
                   " needs an MPI build of sparcoll (SPARCOLL_MPI=ON); use -t local"};
#endif
}

// -t nccl outside mpirun (or in a build without MPI): one rank on GPU 0, its
// communicator made NCCL-style (scGetUniqueId + scCommInitRank), so a GPU
// machine without Open MPI still benchmarks the nccl transport.
long long runNcclSingle(Tool& tool, const Options& o, RunInfo& info) {
#ifndef SPARCOLL_HAVE_NCCL
  (void)tool, (void)o, (void)info;
  throw UsageError{"-t nccl needs a build with CUDA and NCCL (SPARCOLL_CUDA=ON SPARCOLL_NCCL=ON)"};
#else
#ifndef SPARCOLL_HAVE_MPI
  // Without MPI each process of an mpirun launch would benchmark alone.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* n = std::getenv(v); n && std::atoi(n) > 1)
      throw UsageError{"this build has no MPI: -t nccl runs one rank in one process; launch it without mpirun"};
#endif
  if (deviceCount() == 0) throw UsageError{"-t nccl: no CUDA device is visible"};
  if (const auto p = hostMemoryProblem(tool, o, 1, 1); !p.empty()) throw UsageError{p};
  ThreadHub hub(1);
  ThreadGroup g(hub, 0);
  RankState rs;
  useDevice(rs, 0);
  info.nranks = 1;
  info.device = true;
  scConfig_t cfg = configFor(tool, o);
  cfg.device = rs.cudaDevice;
  scUniqueId id;
  scResult_t r = scGetUniqueId(&id);
  if (r != scSuccess) initFailed("scGetUniqueId", r);
  r = scCommInitRank(&rs.comm, 1, id, 0, &cfg);
  if (r != scSuccess) initFailed("scCommInitRank", r);
  const long long failed = rankBody(tool, g, rs, o, info);  // errors propagate to run()
  scCommDestroy(rs.comm);
  destroyStream(rs.stream);
  return failed;
#endif
}

long long runLocal(Tool& tool, const Options& o, RunInfo& info) {
  const int P = o.localRanks;
  std::vector<int> devices;
  if (o.deviceBuffers) {
    const int ndev = deviceCount();
    if (ndev == 0) throw UsageError{o.deviceFlag + ": no CUDA device is visible"};
    for (int i = 0; i < P; ++i) devices.push_back(i % ndev);
  }
  if (const auto p = hostMemoryProblem(tool, o, P, P); !p.empty()) throw UsageError{p};
  info.nranks = P;
  info.nthreads = P;
  info.device = o.deviceBuffers;
  info.oneDevice =
      !devices.empty() && std::all_of(devices.begin(), devices.end(), [&](int d) { return d == devices[0]; });
  std::vector<scComm_t> comms(P, nullptr);
  scConfig_t cfg = configFor(tool, o);
  const scResult_t r = scCommInitLocal(comms.data(), P, devices.empty() ? nullptr : devices.data(), &cfg);
  if (r != scSuccess) initFailed("scCommInitLocal", r);

  ThreadHub hub(P);
  RankOutcomes outcomes(P);
  std::vector<long long> failed(P, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < P; ++rank) {
    auto body = [&, rank] {
      std::string failure;
      try {
        ThreadGroup g(hub, rank);
        RankState rs;
        rs.rank = rank;
        rs.nranks = P;
        rs.comm = comms[rank];
        if (o.deviceBuffers) useDevice(rs, devices[rank]);
        failed[rank] = rankBody(tool, g, rs, o, info);
        destroyStream(rs.stream);
      } catch (...) {
        failure = onRank(rank, P, currentError());
      }
      outcomes.finished(std::move(failure));
    };
    try {
      threads.emplace_back(body);
    } catch (const std::exception& e) {  // the ranks started wait for this one
      exitNow(fmt("cannot start the thread of rank %d of %d: %s", rank, P, e.what()));
    }
  }
  bool allFinished = false;
  const std::string failure = outcomes.wait(&allFinished);
  if (!allFinished) exitNow(failure);
  for (auto& t : threads) t.join();
  for (auto c : comms) scCommDestroy(c);
  if (!failure.empty()) throw UsageError{failure};
  return failed[0];
}

// Tools without a communicator: one rank in this process; the tool picks
// its memory. Errors propagate to run() like usage errors.
long long runAlone(Tool& tool, const Options& o, RunInfo& info) {
  if (const auto p = hostMemoryProblem(tool, o, 1, 1); !p.empty()) throw UsageError{p};
  ThreadHub hub(1);
  ThreadGroup g(hub, 0);
  RankState rs;
  info.nranks = 1;
  return rankBody(tool, g, rs, o, info);
}

}  // namespace

void fatal(const std::string& msg) { throw UsageError{msg}; }

void callFailed(const RankState& rs, const std::string& what, scResult_t r) { fatal(failure(what, r, rs.comm)); }

std::vector<size_t> sweepSizes(const Options& o) {
  if (!o.sizeList.empty()) return o.sizeList;
  std::vector<size_t> sizes;
  for (size_t s = o.minBytes; s <= o.maxBytes;) {
    sizes.push_back(s);
    const size_t next = o.stepFactor > 1 ? (s ? s * o.stepFactor : 1) : s + o.stepBytes;
    if (next <= s) break;  // overflow, or a zero step with min == max
    s = next;
  }
  return sizes;
}

std::string rankLine(const RankState& rs, const RunInfo& info) {
  const int pid = int(getpid());
  if (rs.device) {
    int pci = 0;
    const std::string name = deviceName(rs.cudaDevice, &pci);
    return fmt("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s", rs.rank, 0, pid, hostName().c_str(),
               rs.cudaDevice, pci, name.c_str());
  }
  return fmt("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] CPU (%s transport)", rs.rank, 0, pid,
             hostName().c_str(), -1, 0, transportName(info.transport));
}

int run(int argc, char** argv, Tool& tool) {
  const ToolSpec spec = tool.spec();
  g_tool = spec.name;
  try {
    Options o;
    if (!spec.algorithms.empty()) o.algorithms = {spec.algorithms.front()};
    FlagSet own;
    tool.addFlags(own, o);
    FlagSet flags = commonFlags(o, spec);
    flags.append(own);
    if (!flags.parse(argc, argv)) {
      if (envRankZero())
        std::printf("%s", flags.usage("USAGE: " + std::string(spec.name) + " [options]   " + spec.about).c_str());
      return 0;
    }
    finishOptions(o, spec, flags);
    tool.validate(o);
    setlinebuf(stdout);
    RunInfo info{spec.name,     spec.collective,           o.transport, 1, 1, false, spec.hasOp,
                 spec.baseline, spec.hasRoot ? o.root : -1};
#ifdef SPARCOLL_HAVE_MPI
    const bool underMpirun = launchedByMpi();
#else
    const bool underMpirun = false;
#endif
    const long long failed = o.noComm                                         ? runAlone(tool, o, info)
                             : o.transport == scTransportLocal                ? runLocal(tool, o, info)
                             : o.transport == scTransportNccl && !underMpirun ? runNcclSingle(tool, o, info)
                                                                              : runMpi(tool, o, info, &argc, &argv);
    return failed ? 1 : 0;
  } catch (...) {
    // Usage errors, and the failures of runs without ranks or of a local
    // run whose ranks all returned; under mpirun every rank has the same.
    if (envRankZero()) printError(currentError());
    return 2;
  }
}

}  // namespace scbench
