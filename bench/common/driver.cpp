// Transport launch: one rank per MPI process (mpi, nccl under mpirun), one
// thread per rank (local), or one single-process NCCL rank (nccl without
// mpirun or without MPI), each with its own communicator, stream and buffers;
// then the same per-rank sweep (sweep.cpp) everywhere.
#include "common/driver.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

namespace scbench {

namespace {

[[maybe_unused]] bool g_mpiActive = false;  // read only in MPI builds

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

// Bytes each of send/recv must hold: the largest layout over the run's types,
// including the in-place windows at recv + offset * rank.
size_t bufferBytes(const Options& o, Collective& coll, int nranks) {
  size_t need = 0;
  for (scDataType_t dt : o.dtypes) {
    const size_t esz = sc::dtypeSize(dt);
    const Layout L = coll.layout(o.maxBytes / esz, esz, nranks);
    const size_t last = size_t(nranks - 1);
    need = std::max({need, L.sendCount * esz, L.recvCount * esz, (L.sendInplaceOffset * last + L.sendCount) * esz,
                     (L.recvInplaceOffset * last + L.recvCount) * esz});
  }
  return need;
}

std::string rankLine(const RankState& rs, const std::string& host, const char* transport) {
  char line[512];
  if (rs.device) {
    int pci = 0;
    const std::string name = deviceName(rs.cudaDevice, &pci);
    std::snprintf(line, sizeof line, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s", rs.rank, 0,
                  int(getpid()), host.c_str(), rs.cudaDevice, pci, name.c_str());
  } else {
    std::snprintf(line, sizeof line, "#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] CPU (%s transport)",
                  rs.rank, 0, int(getpid()), host.c_str(), -1, 0, transport);
  }
  return line;
}

long long rankBody(Group& g, RankState& rs, const SweepContext& ctx) {
  const size_t bytes = bufferBytes(ctx.o, ctx.coll, rs.nranks);
  const int dev = rs.device ? rs.cudaDevice : -1;
  rs.send = Buffer(bytes, dev);
  rs.recv = Buffer(bytes, dev);
  const auto lines = g.allgather(rankLine(rs, hostName(), transportName(ctx.info.transport)));
  if (g.rank() == 0) {
    if (!ctx.o.jsonFile.empty() && !std::ofstream(ctx.o.jsonFile))
      fatal("cannot open '" + ctx.o.jsonFile + "' for writing (-J); the directory must exist");
    Report(ctx.o, ctx.info).header(lines);
  }
  return runRank(g, rs, ctx);
}

// Rank rs works on CUDA device dev with a stream of its own.
void useDevice(RankState& rs, int dev) {
  rs.device = true;
  rs.cudaDevice = dev;
  setDevice(dev);
  rs.stream = createStream();
}

scConfig_t configFor(const Options& o) {
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.transport = o.transport;
  cfg.timeoutSeconds = o.timeoutSeconds;
  return cfg;
}

[[noreturn]] void initFailed(const char* what, scResult_t r) {
  fatal(std::string(what) + " failed: " + scGetErrorString(r) + ": " + scGetLastError(nullptr));
}

long long runMpi(const Options& o, SweepContext& ctx, int* argc, char*** argv) {
#ifdef SPARCOLL_HAVE_MPI
#ifndef SPARCOLL_HAVE_NCCL
  if (o.transport == scTransportNccl)
    throw UsageError{"-t nccl needs a build with CUDA and NCCL (SPARCOLL_CUDA=ON SPARCOLL_NCCL=ON)"};
#endif
  MPI_Init(argc, argv);
  g_mpiActive = true;
  long long failed = 0;
  {
    auto g = makeMpiGroup();
    RankState rs;
    rs.rank = g->rank();
    rs.nranks = g->size();
    scConfig_t cfg = configFor(o);
    if (o.transport == scTransportNccl) {
      // One GPU per rank, chosen by node-local rank.
      MPI_Comm node;
      int localRank = 0;
      MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rs.rank, MPI_INFO_NULL, &node);
      MPI_Comm_rank(node, &localRank);
      MPI_Comm_free(&node);
      const int ndev = deviceCount();
      if (ndev == 0) fatal("rank " + std::to_string(rs.rank) + ": the nccl transport needs a GPU; none is visible");
      useDevice(rs, localRank % ndev);
      cfg.device = rs.cudaDevice;
    }
    ctx.info.nranks = rs.nranks;
    ctx.info.device = rs.device;
    const scResult_t r = scCommInitMpi(&rs.comm, nullptr, &cfg);
    if (r != scSuccess) initFailed("scCommInitMpi", r);
    try {
      failed = rankBody(*g, rs, ctx);
    } catch (const UsageError& e) {
      fatal("rank " + std::to_string(rs.rank) + ": " + e.msg);
    }
    scCommDestroy(rs.comm);
    destroyStream(rs.stream);
  }
  MPI_Finalize();
  g_mpiActive = false;
  return failed;
#else
  (void)o, (void)ctx, (void)argc, (void)argv;
  throw UsageError{std::string("-t ") + transportName(o.transport) +
                   " needs an MPI build of sparcoll (SPARCOLL_MPI=ON); use -t local"};
#endif
}

// -t nccl outside mpirun (or in a build without MPI): one rank on GPU 0, its
// communicator made NCCL-style (scGetUniqueId + scCommInitRank), so a GPU
// machine without Open MPI still benchmarks the nccl transport.
long long runNcclSingle(const Options& o, SweepContext& ctx) {
#ifndef SPARCOLL_HAVE_NCCL
  (void)o, (void)ctx;
  throw UsageError{"-t nccl needs a build with CUDA and NCCL (SPARCOLL_CUDA=ON SPARCOLL_NCCL=ON)"};
#else
#ifndef SPARCOLL_HAVE_MPI
  // Without MPI each process of an mpirun launch would benchmark alone.
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char* n = std::getenv(v); n && std::atoi(n) > 1)
      throw UsageError{"this build has no MPI: -t nccl runs one rank in one process; launch it without mpirun"};
#endif
  if (deviceCount() == 0) throw UsageError{"-t nccl: no CUDA device is visible"};
  ThreadHub hub(1);
  ThreadGroup g(hub, 0);
  RankState rs;
  rs.rank = 0;
  rs.nranks = 1;
  useDevice(rs, 0);
  ctx.info.nranks = 1;
  ctx.info.device = true;
  scConfig_t cfg = configFor(o);
  cfg.device = rs.cudaDevice;
  scUniqueId id;
  scResult_t r = scGetUniqueId(&id);
  if (r != scSuccess) initFailed("scGetUniqueId", r);
  r = scCommInitRank(&rs.comm, 1, id, 0, &cfg);
  if (r != scSuccess) initFailed("scCommInitRank", r);
  long long failed = 0;
  try {
    failed = rankBody(g, rs, ctx);
  } catch (const UsageError& e) {
    fatal(e.msg);
  }
  scCommDestroy(rs.comm);
  destroyStream(rs.stream);
  return failed;
#endif
}

long long runLocal(const Options& o, SweepContext& ctx) {
  const int P = o.localRanks;
  std::vector<int> devices;
  if (o.deviceBuffers) {
    const int ndev = deviceCount();
    if (ndev == 0) throw UsageError{"-D 1: no CUDA device is visible"};
    for (int i = 0; i < P; ++i) devices.push_back(i % ndev);
  }
  ctx.info.nranks = P;
  ctx.info.nthreads = P;
  ctx.info.device = o.deviceBuffers;
  std::vector<scComm_t> comms(P, nullptr);
  scConfig_t cfg = configFor(o);
  const scResult_t r = scCommInitLocal(comms.data(), P, devices.empty() ? nullptr : devices.data(), &cfg);
  if (r != scSuccess) initFailed("scCommInitLocal", r);

  ThreadHub hub(P);
  std::vector<long long> failed(P, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < P; ++rank) {
    threads.emplace_back([&, rank] {
      try {
        ThreadGroup g(hub, rank);
        RankState rs;
        rs.rank = rank;
        rs.nranks = P;
        rs.comm = comms[rank];
        if (o.deviceBuffers) useDevice(rs, devices[rank]);
        failed[rank] = rankBody(g, rs, ctx);
        destroyStream(rs.stream);
      } catch (const UsageError& e) {
        fatal("rank " + std::to_string(rank) + ": " + e.msg);
      }
    });
  }
  for (auto& t : threads) t.join();
  for (auto c : comms) scCommDestroy(c);
  return failed[0];
}

}  // namespace

void fatal(const std::string& msg) {
  std::fflush(stdout);
  std::fprintf(stderr, "sparcoll bench: error: %s\n", msg.c_str());
  std::fflush(stderr);
#ifdef SPARCOLL_HAVE_MPI
  if (g_mpiActive) MPI_Abort(MPI_COMM_WORLD, 2);
#endif
  std::_Exit(2);
}

int run(int argc, char** argv, Collective& coll) {
  const ToolSpec spec = coll.spec();
  Options o;
  try {
    bool help = false;
    std::string text;
    o = parseArgs(argc, argv, spec, &help, &text);
    if (help) {
      if (envRankZero()) std::printf("%s", text.c_str());
      return 0;
    }
    setlinebuf(stdout);
    SweepContext ctx{o, coll,
                     RunInfo{spec.name, spec.collective, o.transport, 1, 1, false, spec.hasOp, spec.baseline}};
#ifdef SPARCOLL_HAVE_MPI
    const bool underMpirun = launchedByMpi();
#else
    const bool underMpirun = false;
#endif
    const long long failed = o.transport == scTransportLocal                 ? runLocal(o, ctx)
                             : o.transport == scTransportNccl && !underMpirun ? runNcclSingle(o, ctx)
                                                                              : runMpi(o, ctx, &argc, &argv);
    return failed ? 1 : 0;
  } catch (const UsageError& e) {
    if (envRankZero()) std::fprintf(stderr, "%s: %s\n", spec.name, e.msg.c_str());
    return 2;
  }
}

}  // namespace scbench
