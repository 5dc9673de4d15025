// sparse_all_reduce_perf: the sparse allreduce (sparcoll/sparse.h) against the
// dense baseline, in the flag style of the nccl-tests tools.
//
// For every vector size (-b..-e, x -f; bytes of the dense vector, N = size /
// element size), density (-D list, k = density * N non-zeros per rank), index
// distribution (-I) and algorithm (-A) it prints the time per call (max over
// ranks of the mean of -n calls after -w warm-ups), the bytes sent per rank
// (sparcoll's counters; "-" for native, whose traffic the library cannot see),
// the density of the result K / N, the speedup over native in the same run,
// the number of wrong result elements (integer-valued data: every algorithm
// must match native exactly) and what scSparseAuto chose.
//
//   native   MPI_Allreduce (mpi transport) / scAllReduce(native) (local; on
//            device buffers, which have no native collective, scAllReduce(auto))
//            on the densified vector; the densification is not timed
//   dense    scSparseDense: densify + the library's dense allreduce
//   auto, ssar_recdbl, ssar_split_allgather, dsar_split_allgather, dsar_early_switch
//
//   mpirun -np 4 bench/sparse_all_reduce_perf -b 64M -e 64M -D 0.001,0.01,0.1,0.5
//   bench/sparse_all_reduce_perf -t local -p 8 -b 1M -e 64M -f 4 -I powerlaw -O sparse
#include <getopt.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/buffer.h"
#include "common/group.h"
#include "common/options.h"
#include "core/dtype.h"
#include "sparcoll/sparcoll.h"

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif
#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

namespace {

using scbench::UsageError;

const char* kAlgoNames[] = {"native", "dense", "auto", "ssar_recdbl", "ssar_split_allgather",
                            "dsar_split_allgather", "dsar_early_switch"};

struct Args {
  size_t minBytes = size_t(64) << 20, maxBytes = size_t(64) << 20, factor = 2;
  std::vector<double> densities{0.001, 0.01, 0.1, 0.5};
  std::string dist = "uniform";  // uniform | powerlaw | overlap:F
  double overlap = 0;
  std::vector<std::string> algos{std::begin(kAlgoNames), std::end(kAlgoNames)};
  bool sparseOut = false;
  scDataType_t dt = scFloat32;
  scIndexType_t it = scIndexU32;
  int iters = 5, warmup = 1, check = 1;
  scTransport_t transport = scTransportLocal;
  int localRanks = 4;
  bool device = false;
  std::string json;
  double timeout = 0, switchDensity = 0;
  int group = 0;
  // Device-local communicators have no native collective: the "native"
  // baseline is then the library's dense allreduce (auto).
  bool baselineIsAuto() const { return device && transport == scTransportLocal; }
};

[[noreturn]] void usage(const std::string& msg) { throw UsageError{msg}; }

const char* kHelp =
    "usage: sparse_all_reduce_perf [options]\n"
    "  -b SIZE -e SIZE -f F   dense vector sizes in bytes (K, M, G), x F (default 64M..64M)\n"
    "  -D d1,d2,...           densities k/N per rank (default 0.001,0.01,0.1,0.5)\n"
    "  -I DIST                uniform | powerlaw | overlap:F (F of each rank's indices shared by all)\n"
    "  -A a1,a2,...           native,dense,auto,ssar_recdbl,ssar_split_allgather,\n"
    "                         dsar_split_allgather,dsar_early_switch (default: all)\n"
    "  -O dense|sparse        output: dense vector (scSparseAllReduce) or scSparseResult_t\n"
    "  -d TYPE                value type (float, double, half, bfloat16, int32, ...)\n"
    "  -x u32|u64             index type\n"
    "  -n N -w N              timed iterations, warm-ups (default 5, 1)\n"
    "  -c 0|1                 check results against native (default 1)\n"
    "  -t mpi|local -p P      transport (default: mpi under mpirun, else local) and local ranks\n"
    "  -g 0|1                 local transport on device buffers (CUDA build)\n"
    "  -s DENSITY             scSparseOptions_t.switchDensity (0: size rule)\n"
    "  -G N                   scSparseOptions_t.earlyGroupSize (0: model)\n"
    "  -T SECONDS             per-call deadline\n"
    "  -J FILE                JSON lines, one per measurement\n";

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string tok; std::getline(ss, tok, ',');)
    if (!tok.empty()) out.push_back(tok);
  return out;
}

double parseDouble(const std::string& s, const char* what) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end) usage(std::string(what) + ": '" + s + "' is not a number");
  return v;
}

Args parse(int argc, char** argv) {
  Args a;
  a.transport = scbench::launchedByMpi() ? scTransportMpi : scTransportLocal;
  int c;
  opterr = 0;
  while ((c = getopt(argc, argv, "b:e:f:D:I:A:O:d:x:n:w:c:t:p:g:s:G:T:J:h")) != -1) {
    const std::string v = optarg ? optarg : "";
    switch (c) {
      case 'b': a.minBytes = scbench::parseSize(v, "-b"); break;
      case 'e': a.maxBytes = scbench::parseSize(v, "-e"); break;
      case 'f': a.factor = size_t(parseDouble(v, "-f")); break;
      case 'D':
        a.densities.clear();
        for (const auto& t : splitList(v)) a.densities.push_back(parseDouble(t, "-D"));
        break;
      case 'I':
        a.dist = v;
        if (v.rfind("overlap:", 0) == 0) a.overlap = parseDouble(v.substr(8), "-I overlap");
        else if (v != "uniform" && v != "powerlaw") usage("-I: uniform, powerlaw or overlap:F");
        break;
      case 'A': a.algos = splitList(v); break;
      case 'O':
        if (v != "dense" && v != "sparse") usage("-O: dense or sparse");
        a.sparseOut = v == "sparse";
        break;
      case 'd':
        if (!sc::parseDtype(v.c_str(), &a.dt)) usage("-d: unknown type '" + v + "'");
        break;
      case 'x':
        if (v != "u32" && v != "u64") usage("-x: u32 or u64");
        a.it = v == "u64" ? scIndexU64 : scIndexU32;
        break;
      case 'n': a.iters = std::atoi(v.c_str()); break;
      case 'w': a.warmup = std::atoi(v.c_str()); break;
      case 'c': a.check = std::atoi(v.c_str()); break;
      case 't':
        if (v == "mpi") a.transport = scTransportMpi;
        else if (v == "local") a.transport = scTransportLocal;
        else usage("-t: mpi or local");
        break;
      case 'p': a.localRanks = std::atoi(v.c_str()); break;
      case 'g': a.device = std::atoi(v.c_str()) != 0; break;
      case 's': a.switchDensity = parseDouble(v, "-s"); break;
      case 'G': a.group = std::atoi(v.c_str()); break;
      case 'T': a.timeout = parseDouble(v, "-T"); break;
      case 'J': a.json = v; break;
      case 'h': std::fputs(kHelp, stdout); std::exit(0);
      default: usage(std::string("unknown option or missing value: -") + char(optopt) + "\n" + kHelp);
    }
  }
  if (a.iters < 1 || a.warmup < 0 || a.localRanks < 1 || a.factor < 2 || a.minBytes > a.maxBytes)
    usage("bad -n/-w/-p/-f/-b/-e");
  for (const auto& al : a.algos)
    if (std::find(std::begin(kAlgoNames), std::end(kAlgoNames), al) == std::end(kAlgoNames))
      usage("-A: unknown algorithm '" + al + "'");
  for (double d : a.densities)
    if (!(d >= 0 && d <= 1)) usage("-D: densities must be in [0, 1]");
  return a;
}

scSparseAlgo_t sparseAlgo(const std::string& s) {
  for (int i = 0; i < scNumSparseAlgos; ++i)
    if (s == scSparseAlgoName(scSparseAlgo_t(i))) return scSparseAlgo_t(i);
  return scSparseAuto;
}

uint64_t mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// This rank's sorted unique indices: k of N under the distribution.
std::vector<uint64_t> makeIndices(const Args& a, uint64_t N, uint64_t k, int rank, uint64_t seed) {
  std::vector<uint64_t> out;
  uint64_t s = mix(seed * 7919 + uint64_t(rank) + 1);
  auto unit = [&] { return double((s = mix(s)) >> 11) * 0x1.0p-53; };
  auto selection = [&](uint64_t kk, std::vector<char>& mark) {  // Knuth's selection sampling
    for (uint64_t i = 0; i < N && kk > 0; ++i)
      if (unit() * double(N - i) < double(kk)) { mark[i] = 1; --kk; }
  };
  std::vector<char> mark(N, 0);
  if (a.dist == "powerlaw") {
    uint64_t have = 0;
    for (uint64_t t = 0; have < k && t < 20 * k + 1000; ++t) {
      const double u = unit();
      const uint64_t x = std::min<uint64_t>(N - 1, uint64_t(double(N) * u * u * u));
      if (!mark[x]) { mark[x] = 1; ++have; }
    }
    for (uint64_t x = 0; have < k && x < N; ++x)
      if (!mark[x]) { mark[x] = 1; ++have; }
  } else {
    const uint64_t shared = uint64_t(std::llround(a.overlap * double(k)));
    if (shared) {
      const uint64_t keep = s;
      s = mix(seed * 7919);  // the same stream on every rank
      selection(shared, mark);
      s = keep;
    }
    selection(k - shared, mark);
  }
  for (uint64_t x = 0; x < N; ++x)
    if (mark[x]) out.push_back(x);
  return out;
}

struct Row {
  size_t N = 0;
  double density = 0;
  std::string algo;
  double timeUs = 0, sentAvg = -1, sentMax = -1, msgs = -1, resultDensity = 0, speedup = 0;
  long long wrong = -1;
  std::string autoChoice;
};

// Copies of device data for checking.
std::vector<char> toHost(const void* p, size_t bytes, bool device) {
  std::vector<char> h(bytes);
  scbench::copyFromBuffer(h.data(), p, bytes, device);
  return h;
}

void fail(scComm_t comm, scResult_t rc, const char* what) {
  std::fprintf(stderr, "%s failed: %s: %s\n", what, scGetErrorString(rc), scGetLastError(comm));
#ifdef SPARCOLL_HAVE_MPI
  int init = 0;
  MPI_Initialized(&init);
  if (init) MPI_Abort(MPI_COMM_WORLD, 2);
#endif
  std::_Exit(2);
}

#ifdef SPARCOLL_HAVE_MPI
bool mpiType(scDataType_t t, MPI_Datatype* out) {
  switch (t) {
    case scInt8: *out = MPI_INT8_T; return true;
    case scUint8: *out = MPI_UINT8_T; return true;
    case scInt32: *out = MPI_INT32_T; return true;
    case scUint32: *out = MPI_UINT32_T; return true;
    case scInt64: *out = MPI_INT64_T; return true;
    case scUint64: *out = MPI_UINT64_T; return true;
    case scFloat32: *out = MPI_FLOAT; return true;
    case scFloat64: *out = MPI_DOUBLE; return true;
    default: return false;
  }
}
#endif

void runRank(scbench::Group& g, scComm_t comm, void* stream, const Args& A, std::vector<Row>* rows, bool mpi) {
  const size_t esz = sc::dtypeSize(A.dt), isz = A.it == scIndexU64 ? 8 : 4;
  const int dev = A.device ? 0 : -1;
  const int P = g.size(), rank = g.rank();
  scSparseOptions_t opts = SC_SPARSE_OPTIONS_INITIALIZER;
  opts.switchDensity = A.switchDensity;
  opts.earlyGroupSize = A.group;
  scSparseResult_t res = nullptr;
  if (A.sparseOut && scSparseResultCreate(comm, &res) != scSuccess) fail(comm, scInvalidUsage, "scSparseResultCreate");
  auto sync = [&] {
#ifdef SPARCOLL_HAVE_CUDA
    if (stream) cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
#endif
  };
  uint64_t seed = 1;
  for (size_t bytes = A.minBytes; bytes <= A.maxBytes; bytes *= A.factor) {
    const size_t N = bytes / esz;
    scbench::Buffer denseIn(N * esz, dev), out(N * esz, dev), ref(N * esz, dev);
    for (double d : A.densities) {
      ++seed;
      const uint64_t k = d > 0 ? std::max<uint64_t>(1, uint64_t(std::llround(d * double(N)))) : 0;
      const std::vector<uint64_t> idx = makeIndices(A, N, std::min<uint64_t>(k, N), rank, seed);
      std::vector<char> hi(idx.size() * isz), hv(idx.size() * esz), hd(N * esz, 0);
      for (size_t i = 0; i < idx.size(); ++i) {
        if (isz == 8) std::memcpy(&hi[i * 8], &idx[i], 8);
        else { const uint32_t x = uint32_t(idx[i]); std::memcpy(&hi[i * 4], &x, 4); }
        // Small positive integers: exact sums in any order, no cancellation.
        sc::dispatchDtype(A.dt, [&](auto tag) {
          using T = decltype(tag);
          T v;
          const double x = double(1 + mix(idx[i] ^ uint64_t(rank) << 40) % 4);
          if constexpr (std::is_same_v<T, sc::Half>) v.bits = sc::floatToHalf(float(x));
          else if constexpr (std::is_same_v<T, sc::BFloat16>) v.bits = sc::floatToBf16(float(x));
          else v = T(x);
          std::memcpy(&hv[i * esz], &v, esz);
          std::memcpy(&hd[idx[i] * esz], &v, esz);
        });
      }
      scbench::Buffer bi(hi.size(), dev), bv(hv.size(), dev);
      scbench::copyToBuffer(bi.data(), hi.data(), hi.size(), A.device);
      scbench::copyToBuffer(bv.data(), hv.data(), hv.size(), A.device);
      scbench::copyToBuffer(denseIn.data(), hd.data(), hd.size(), A.device);
      const auto nnzAll = g.allgather(std::to_string(idx.size()));
      std::vector<size_t> nnz;
      for (const auto& s : nnzAll) nnz.push_back(std::stoull(s));
      scSparseAlgo_t choice = scSparseAuto;
      scSparseAlgoFor(comm, nnz.data(), N, A.it, A.dt, &opts, A.sparseOut ? 0 : 1, &choice);

      // The baseline first: its result is the reference of every check.
      auto native = [&] {
#ifdef SPARCOLL_HAVE_MPI
        MPI_Datatype t;
        if (mpi && mpiType(A.dt, &t)) {
          MPI_Allreduce(denseIn.data(), ref.data(), int(N), t, MPI_SUM, MPI_COMM_WORLD);
          return;
        }
#endif
        (void)mpi;
        const scAlgo_t base = A.baselineIsAuto() ? scAlgoAuto : scAlgoNative;
        const scResult_t rc = scAllReduce(denseIn.data(), ref.data(), N, A.dt, scSum, base, comm, stream);
        if (rc != scSuccess) fail(comm, rc, base == scAlgoAuto ? "scAllReduce(auto)" : "scAllReduce(native)");
      };
      std::vector<std::string> order{"native"};
      for (const auto& al : A.algos)
        if (al != "native") order.push_back(al);
      double nativeUs = 0;
      std::vector<char> want;
      double resultDensity = 0;
      for (const auto& name : order) {
        const scSparseAlgo_t sa = sparseAlgo(name);
        auto call = [&] {
          if (name == "native") return native();
          const scResult_t rc =
              A.sparseOut ? scSparseAllReduceToSparse(bi.data(), bv.data(), idx.size(), N, A.it, A.dt, scSum, sa,
                                                      &opts, res, comm, stream)
                          : scSparseAllReduceEx(bi.data(), bv.data(), idx.size(), N, A.it, A.dt, scSum, sa, &opts,
                                                out.data(), comm, stream);
          if (rc != scSuccess) fail(comm, rc, "sparse allreduce");
        };
        for (int w = 0; w < A.warmup; ++w) call();
        sync();
        scCommResetStats(comm);
        g.barrier();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < A.iters; ++i) call();
        sync();
        const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / A.iters;
        scStats_t st{};
        scCommGetStats(comm, &st);
        Row r;
        r.N = N;
        r.density = d;
        r.algo = name;
        r.timeUs = g.max(us);
        if (name != "native") {
          r.sentAvg = g.combine(double(st.bytesSent) / A.iters, scbench::Combine::Avg);
          r.sentMax = g.max(double(st.bytesSent) / A.iters);
          r.msgs = g.max(double(st.msgsSent) / A.iters);
        }
        if (name == "native") {
          nativeUs = r.timeUs;
          want = toHost(ref.data(), N * esz, A.device);
          uint64_t nz = 0;
          for (size_t i = 0; i < N; ++i)
            for (size_t b = 0; b < esz; ++b)
              if (want[i * esz + b]) { ++nz; break; }
          resultDensity = double(nz) / double(N);
        }
        r.resultDensity = resultDensity;
        r.speedup = nativeUs / r.timeUs;
        r.autoChoice = scSparseAlgoName(choice);
        if (A.check && name != "native") {
          long long wrong = 0;
          std::vector<char> got;
          if (!A.sparseOut) {
            got = toHost(out.data(), N * esz, A.device);
          } else {
            int isDense = 0;
            size_t n = 0;
            const void *ri = nullptr, *rv = nullptr;
            scSparseAlgo_t used;
            scSparseResultIsDense(res, &isDense);
            scSparseResultNnz(res, &n);
            scSparseResultIndices(res, &ri);
            scSparseResultValues(res, &rv);
            scSparseResultAlgo(res, &used);
            if (name == "auto") r.autoChoice = scSparseAlgoName(used);
            if (isDense) {
              got = toHost(rv, N * esz, A.device);
            } else {
              got.assign(N * esz, 0);
              const std::vector<char> gi = toHost(ri, n * isz, A.device), gv = toHost(rv, n * esz, A.device);
              for (size_t i = 0; i < n; ++i) {
                uint64_t x = 0;
                std::memcpy(&x, &gi[i * isz], isz);
                if (x < N) std::memcpy(&got[x * esz], &gv[i * esz], esz);
                else ++wrong;
              }
            }
          }
          for (size_t i = 0; i < N; ++i)
            if (std::memcmp(&got[i * esz], &want[i * esz], esz) != 0) ++wrong;
          r.wrong = (long long)g.sum(double(wrong));
        }
        rows->push_back(r);
        if (rank == 0) {
          std::printf("%12zu %9.4g  %-22s %12.1f %14s %6s %8.4f %9.2f %7s  %s\n", r.N, r.density, r.algo.c_str(),
                      r.timeUs, r.sentAvg < 0 ? "-" : std::to_string(llround(r.sentAvg)).c_str(),
                      r.msgs < 0 ? "-" : std::to_string(llround(r.msgs)).c_str(), r.resultDensity, r.speedup,
                      r.wrong < 0 ? "-" : std::to_string(r.wrong).c_str(),
                      r.algo == "auto" ? ("-> " + r.autoChoice).c_str() : "");
          std::fflush(stdout);
        }
      }
    }
    if (bytes > A.maxBytes / A.factor) break;
  }
  if (res) scSparseResultDestroy(res);
  (void)P;
}

void header(const Args& A, int P, const char* transport) {
  std::printf("# sparse_all_reduce_perf: %s transport, %d ranks%s, %s values, %s indices, %s output, %s indices\n",
              transport, P, A.device ? " (device buffers)" : "", sc::dtypeName(A.dt), A.it == scIndexU64 ? "uint64" : "uint32",
              A.sparseOut ? "sparse" : "dense", A.dist.c_str());
  std::printf("# time: max over ranks of the mean of %d calls (%d warm-up); sent: bytes per rank per call (mean);\n"
              "# speedup: native time / time; #wrong: result elements differing from native%s\n",
              A.iters, A.warmup,
              A.baselineIsAuto()
                  ? "\n# native here = scAllReduce(auto): device-local communicators have no native collective"
                  : "");
  std::printf("#%11s %9s  %-22s %12s %14s %6s %8s %9s %7s  %s\n", "N", "density", "algorithm", "time(us)",
              "sent/rank(B)", "msgs", "K/N", "speedup", "#wrong", "auto");
}

int summary(const Args& A, const std::vector<Row>& rows, int P, const char* transport) {
  long long wrong = 0;
  std::printf("#\n# summary: best sparse algorithm and auto vs native\n");
  for (size_t i = 0; i < rows.size();) {
    size_t j = i;
    const Row* best = nullptr;
    const Row* autoRow = nullptr;
    for (; j < rows.size() && rows[j].N == rows[i].N && rows[j].density == rows[i].density; ++j) {
      const Row& r = rows[j];
      if (r.wrong > 0) wrong += r.wrong;
      if (r.algo == "auto") autoRow = &r;
      else if (r.algo != "native" && r.algo != "dense" && (!best || r.timeUs < best->timeUs)) best = &r;
    }
    std::printf("#  N %zu density %g: ", rows[i].N, rows[i].density);
    if (best) std::printf("best sparse %s %.2fx", best->algo.c_str(), best->speedup);
    else std::printf("no sparse algorithm run");
    if (autoRow) std::printf(", auto (%s) %.2fx", autoRow->autoChoice.c_str(), autoRow->speedup);
    std::printf("\n");
    i = j;
  }
  std::printf("# wrong elements in total: %lld\n", wrong);
  if (!A.json.empty()) {
    FILE* f = std::fopen(A.json.c_str(), "w");
    if (!f) {
      std::fprintf(stderr, "cannot write %s\n", A.json.c_str());
      return 2;
    }
    for (const Row& r : rows)
      std::fprintf(f,
                   "{\"tool\":\"sparse_all_reduce_perf\",\"transport\":\"%s\",\"nranks\":%d,\"dtype\":\"%s\","
                   "\"index\":\"%s\",\"output\":\"%s\",\"dist\":\"%s\",\"N\":%zu,\"density\":%g,\"algorithm\":\"%s\","
                   "\"time_us\":%.3f,\"sent_bytes_avg\":%.1f,\"sent_bytes_max\":%.1f,\"msgs\":%.1f,"
                   "\"result_density\":%.6f,\"speedup_vs_native\":%.4f,\"wrong\":%lld,\"auto_choice\":\"%s\"}\n",
                   transport, P, sc::dtypeName(A.dt), A.it == scIndexU64 ? "u64" : "u32", A.sparseOut ? "sparse" : "dense",
                   A.dist.c_str(), r.N, r.density, r.algo.c_str(), r.timeUs, r.sentAvg, r.sentMax, r.msgs,
                   r.resultDensity, r.speedup, r.wrong, r.autoChoice.c_str());
    std::fclose(f);
  }
  return wrong ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args A;
  try {
    A = parse(argc, argv);
  } catch (const UsageError& e) {
    std::fprintf(stderr, "sparse_all_reduce_perf: %s\n", e.msg.c_str());
    return 2;
  }
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.timeoutSeconds = A.timeout;
  std::vector<Row> rows;
  if (A.transport == scTransportMpi) {
#ifdef SPARCOLL_HAVE_MPI
    MPI_Init(&argc, &argv);
    int rc = 0;
    {
      auto g = scbench::makeMpiGroup();
      scComm_t comm = nullptr;
      if (A.device) fail(nullptr, scInvalidUsage, "-g 1 applies to the local transport");
      const scResult_t r = scCommInitMpi(&comm, nullptr, &cfg);
      if (r != scSuccess) fail(nullptr, r, "scCommInitMpi");
      if (g->rank() == 0) header(A, g->size(), "mpi");
      runRank(*g, comm, nullptr, A, &rows, true);
      if (g->rank() == 0) rc = summary(A, rows, g->size(), "mpi");
      scCommDestroy(comm);
    }
    MPI_Finalize();
    return rc;
#else
    std::fprintf(stderr, "sparse_all_reduce_perf: this build has no MPI\n");
    return 2;
#endif
  }
  const int P = A.localRanks;
  std::vector<int> devices;
  if (A.device) {
#ifdef SPARCOLL_HAVE_CUDA
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) fail(nullptr, scInvalidUsage, "-g 1 needs a CUDA device");
    devices.assign(P, 0);
#else
    fail(nullptr, scInvalidUsage, "-g 1 needs a CUDA build");
#endif
  }
  std::vector<scComm_t> comms(P);
  const scResult_t r = scCommInitLocal(comms.data(), P, devices.empty() ? nullptr : devices.data(), &cfg);
  if (r != scSuccess) fail(nullptr, r, "scCommInitLocal");
  header(A, P, "local");
  scbench::ThreadHub hub(P);
  std::vector<std::vector<Row>> all(P);
  std::vector<std::thread> threads;
  for (int q = 0; q < P; ++q)
    threads.emplace_back([&, q] {
      scbench::ThreadGroup g(hub, q);
      void* stream = nullptr;
#ifdef SPARCOLL_HAVE_CUDA
      cudaStream_t s = nullptr;
      if (A.device) {
        cudaSetDevice(0);
        cudaStreamCreate(&s);
        stream = s;
      }
#endif
      runRank(g, comms[q], stream, A, &all[q], false);
#ifdef SPARCOLL_HAVE_CUDA
      if (s) cudaStreamDestroy(s);
#endif
    });
  for (auto& t : threads) t.join();
  for (auto c : comms) scCommDestroy(c);
  return summary(A, all[0], P, "local");
}
