// dsop_perf: the DSOP algorithms with the methodology of Enderlin et al.
// ("Optimization of Distributed Sum of Outer Products", Sec. 5.1):
//  - a barrier (scBarrier) before every iteration; an iteration's time is from
//    the barrier's exit to the end of the call on each rank (device: after the
//    stream is synchronised), and the run's time is the maximum over ranks;
//  - the first iteration of every repetition is a warm-up and is discarded;
//  - a repetition's observation is the median of its iterations; statistics
//    (median, 10th and 90th percentile) are over the repetitions, with 95 %
//    percentile-bootstrap confidence intervals (2000 resamples);
//  - speedup of each algorithm over the allreduce baseline, paired by
//    repetition (the algorithms of one repetition run back to back, in an
//    order rotated every repetition so no algorithm always runs first);
//  - one JSON line per iteration (-J), a markdown summary (-S).
// The allreduce baseline is scDsopAllReduce on a communicator whose dense
// algorithm is -B (default native: MPI_Allreduce, as in the paper).
//
// Kernel mode (-K): the local kernel alone — host, and on a GPU both the
// custom kernel and cuBLAS — as written GB/s next to memset's bandwidth.
//
//   mpirun -np 4 bench/dsop_perf -n 1000,2000,4000 -r 10 -i 25 -J out.jsonl -S out.md
//   bench/dsop_perf -t local -p 4 -D 1 ...          (device buffers, local transport)
//   bench/dsop_perf -K -n 8192 -k 1,4,8,64,256       (kernel bandwidth)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif
#ifdef SPARCOLL_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#include "common/group.h"
#include "common/options.h"
#include "core/dtype.h"
#include "dsop/kernels.h"
#include "sparcoll/sparcoll.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Args {
  scTransport_t transport = scTransportLocal;
  int localRanks = 4;
  bool device = false;
  std::vector<size_t> sizes{1000, 2000, 4000};
  size_t m = 0;  // 0: m = n
  scDataType_t dtype = scFloat32;
  std::vector<scDsopAlgo_t> algos{scDsopAllReduce, scDsopAllGather, scDsopAllReduceRing, scDsopGRabenseifner,
                                  scDsopAllScatter, scDsopAuto};
  scAlgo_t baseline = scAlgoNative;
  int iters = 25, reps = 10;
  std::string json, summary;
  bool check = true;
  bool kernel = false;
  std::vector<size_t> kernelK{1, 4, 8, 64, 256};
};

[[noreturn]] void usage(const std::string& msg) {
  std::fprintf(stderr,
               "%s\nusage: dsop_perf [-t mpi|local] [-p ranks] [-D 0|1] [-n N,N,...] [-m M] [-d float|double|half|"
               "bfloat16]\n  [-A algo,...] [-B native|ring|rabenseifner|recdbl|auto] [-i iters] [-r reps] "
               "[-c 0|1]\n  [-J out.jsonl] [-S summary.md] [-K] [-k K,K,...]\n",
               msg.c_str());
  std::exit(2);
}

std::vector<size_t> parseList(const char* s) {
  std::vector<size_t> out;
  std::stringstream ss(s);
  std::string tok;
  while (std::getline(ss, tok, ','))
    if (!tok.empty()) out.push_back(scbench::parseSize(tok, "size"));
  return out;
}

Args parse(int argc, char** argv) {
  Args a;
  a.transport = scbench::launchedByMpi() ? scTransportMpi : scTransportLocal;
  for (int i = 1; i < argc; ++i) {
    const std::string f = argv[i];
    auto val = [&]() -> const char* {
      if (i + 1 >= argc) usage("missing value for " + f);
      return argv[++i];
    };
    try {
      if (f == "-t") {
        const std::string t = val();
        if (t == "mpi") a.transport = scTransportMpi;
        else if (t == "local") a.transport = scTransportLocal;
        else usage("-t takes mpi or local");
      } else if (f == "-p") a.localRanks = std::stoi(val());
      else if (f == "-D") a.device = std::stoi(val()) != 0;
      else if (f == "-n") a.sizes = parseList(val());
      else if (f == "-m") a.m = scbench::parseSize(val(), "-m");
      else if (f == "-d") { if (!sc::parseDtype(val(), &a.dtype)) usage("unknown dtype"); }
      else if (f == "-i") a.iters = std::stoi(val());
      else if (f == "-r") a.reps = std::stoi(val());
      else if (f == "-c") a.check = std::stoi(val()) != 0;
      else if (f == "-J") a.json = val();
      else if (f == "-S") a.summary = val();
      else if (f == "-K") a.kernel = true;
      else if (f == "-k") a.kernelK = parseList(val());
      else if (f == "-B") {
        const std::string b = val();
        const char* names[] = {"auto", "ring", "rabenseifner", "recdbl", "native"};
        bool ok = false;
        for (int k = 0; k < scNumAlgos; ++k)
          if (b == names[k]) { a.baseline = scAlgo_t(k); ok = true; }
        if (!ok) usage("unknown -B " + b);
      } else if (f == "-A") {
        a.algos.clear();
        std::stringstream ss(val());
        std::string tok;
        while (std::getline(ss, tok, ',')) {
          bool ok = false;
          for (int k = 0; k < scNumDsopAlgos; ++k)
            if (tok == scDsopAlgoName(scDsopAlgo_t(k))) { a.algos.push_back(scDsopAlgo_t(k)); ok = true; }
          if (!ok) usage("unknown algorithm " + tok);
        }
      } else if (f == "-h" || f == "--help") usage("dsop_perf: DSOP benchmark");
      else usage("unknown flag " + f);
    } catch (const scbench::UsageError& e) {
      usage(e.msg);
    } catch (const std::exception&) {
      usage("bad value for " + f);
    }
  }
  if (a.iters < 2 || a.reps < 1 || a.sizes.empty() || a.algos.empty()) usage("need -i >= 2, -r >= 1, sizes, algos");
  // The baseline comes first: speedups are paired with its repetitions.
  a.algos.erase(std::remove(a.algos.begin(), a.algos.end(), scDsopAllReduce), a.algos.end());
  a.algos.insert(a.algos.begin(), scDsopAllReduce);
  return a;
}

// --- statistics ----------------------------------------------------------------
// numpy's default (linear) percentile, p in [0, 1].
double percentile(std::vector<double> v, double p) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double h = (v.size() - 1) * p;
  const size_t lo = size_t(std::floor(h)), hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (h - lo) * (v[hi] - v[lo]);
}

struct Stat {
  double value, lo, hi;  // statistic and its 95 % percentile-bootstrap interval
};

Stat bootstrap(const std::vector<double>& obs, double p) {
  std::mt19937 rng(42);
  std::uniform_int_distribution<size_t> pick(0, obs.size() - 1);
  std::vector<double> stats(2000), sample(obs.size());
  for (auto& s : stats) {
    for (auto& x : sample) x = obs[pick(rng)];
    s = percentile(sample, p);
  }
  return {percentile(obs, p), percentile(stats, 0.025), percentile(stats, 0.975)};
}

// --- data ------------------------------------------------------------------------
double aValue(int r, size_t x) { return double(int((r * 7 + x * 3 + 1) % 9) - 4); }
double bValue(int r, size_t y) { return double(int((r * 5 + y * 11 + 2) % 7) - 3); }

std::vector<char> encode(const std::vector<double>& v, scDataType_t dt) {
  const size_t es = sc::dtypeSize(dt);
  std::vector<char> out(v.size() * es);
  for (size_t i = 0; i < v.size(); ++i) {
    char* p = out.data() + i * es;
    if (dt == scFloat64) std::memcpy(p, &v[i], 8);
    else if (dt == scFloat32) { const float f = float(v[i]); std::memcpy(p, &f, 4); }
    else { const uint16_t h = dt == scFloat16 ? sc::floatToHalf(float(v[i])) : sc::floatToBf16(float(v[i])); std::memcpy(p, &h, 2); }
  }
  return out;
}

// Buffers in the communicator's memory.
struct Buf {
  void* p = nullptr;
  bool dev = false;
  Buf(size_t bytes, bool device) : dev(device) {
#ifdef SPARCOLL_HAVE_CUDA
    if (dev) { if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) usage("cudaMalloc failed"); return; }
#endif
    p = std::malloc(bytes ? bytes : 1);
  }
  ~Buf() {
#ifdef SPARCOLL_HAVE_CUDA
    if (dev) { cudaFree(p); return; }
#endif
    std::free(p);
  }
  void upload(const std::vector<char>& h) {
#ifdef SPARCOLL_HAVE_CUDA
    if (dev) { cudaMemcpy(p, h.data(), h.size(), cudaMemcpyHostToDevice); return; }
#endif
    std::memcpy(p, h.data(), h.size());
  }
  std::vector<char> download(size_t bytes) const {
    std::vector<char> h(bytes);
#ifdef SPARCOLL_HAVE_CUDA
    if (dev) { cudaMemcpy(h.data(), p, bytes, cudaMemcpyDeviceToHost); return h; }
#endif
    std::memcpy(h.data(), p, bytes);
    return h;
  }
};

void syncStream(void* stream) {
#ifdef SPARCOLL_HAVE_CUDA
  if (stream) cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
#else
  (void)stream;
#endif
}

// --- the measurement ---------------------------------------------------------------
struct Sample {
  size_t n;
  scDsopAlgo_t algo;
  int rep, iter;
  double seconds;
};

struct Checked {
  size_t n;
  scDsopAlgo_t algo;
  scDsopAlgo_t resolved;
  double wrong, sentMax;
};

struct RankOut {
  std::vector<Sample> samples;
  std::vector<Checked> checks;
};

void fail(scComm_t comm, scResult_t r, const char* what) {
  std::fprintf(stderr, "%s failed: %s: %s\n", what, scGetErrorString(r), scGetLastError(comm));
  // _Exit: other ranks may be threads still inside the library, so no static
  // destructors may run under them.
  std::fflush(nullptr);
  std::_Exit(2);
}

void runRank(scbench::Group& g, scComm_t comm, void* stream, bool device, const Args& A, RankOut& out) {
  const int P = g.size(), r = g.rank();
  const scDataType_t dt = A.dtype;
  scDataType_t odt;
  if (scDsopOutputType(dt, &odt) != scSuccess) usage("dtype not supported by DSOP");
  const size_t si = sc::dtypeSize(dt), so = sc::dtypeSize(odt);
  for (size_t n : A.sizes) {
    const size_t m = A.m ? A.m : n;
    std::vector<double> av(n), bv(m);
    for (size_t x = 0; x < n; ++x) av[x] = aValue(r, x);
    for (size_t y = 0; y < m; ++y) bv[y] = bValue(r, y);
    Buf a(n * si, device), b(m * si, device), G(n * m * so, device);
    a.upload(encode(av, dt));
    b.upload(encode(bv, dt));
    for (int rep = 0; rep < A.reps; ++rep) {
      for (size_t k = 0; k < A.algos.size(); ++k) {
        const scDsopAlgo_t algo = A.algos[(k + rep) % A.algos.size()];
        for (int it = 0; it <= A.iters; ++it) {  // iteration 0: warm-up, discarded
          scResult_t rc = scBarrier(comm, stream);
          if (rc != scSuccess) fail(comm, rc, "scBarrier");
          syncStream(stream);
          const auto t0 = Clock::now();
          rc = scDsop(a.p, n, b.p, m, G.p, dt, algo, comm, stream);
          if (rc != scSuccess) fail(comm, rc, "scDsop");
          syncStream(stream);
          const double t = std::chrono::duration<double>(Clock::now() - t0).count();
          const double tmax = g.max(t);
          if (r == 0) out.samples.push_back({n, algo, rep, it, tmax});
        }
        if (rep == 0 && A.check) {  // correctness and traffic, outside the timed loop
          scCommResetStats(comm);
          scResult_t rc = scDsop(a.p, n, b.p, m, G.p, dt, algo, comm, stream);
          if (rc != scSuccess) fail(comm, rc, "scDsop");
          syncStream(stream);
          scStats_t st;
          scCommGetStats(comm, &st);
          const auto h = G.download(n * m * so);
          std::vector<double> Aall(size_t(P) * n), Ball(size_t(P) * m);
          for (int q = 0; q < P; ++q) {
            for (size_t x = 0; x < n; ++x) Aall[q * n + x] = aValue(q, x);
            for (size_t y = 0; y < m; ++y) Ball[q * m + y] = bValue(q, y);
          }
          double wrong = 0;
          for (size_t x = 0; x < n; ++x)
            for (size_t y = 0; y < m; ++y) {
              double want = 0;
              for (int q = 0; q < P; ++q) want += Aall[q * n + x] * Ball[q * m + y];
              double got;
              if (odt == scFloat64) std::memcpy(&got, h.data() + (x * m + y) * 8, 8);
              else { float f; std::memcpy(&f, h.data() + (x * m + y) * 4, 4); got = f; }
              wrong += got != want;
            }
          scDsopAlgo_t resolved = algo;
          scDsopAlgoFor(comm, n, m, dt, &resolved);
          const double wrongAll = g.sum(wrong), sent = g.max(double(st.bytesSent));
          out.checks.push_back({n, algo, algo == scDsopAuto ? resolved : algo, wrongAll, sent});
        }
      }
    }
  }
}

// --- reporting (rank 0) ------------------------------------------------------------------
std::string fmtMs(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", s * 1e3);
  return b;
}
std::string fmtX(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f", x);
  return b;
}

int report(const Args& A, const RankOut& out, int P, const char* transport) {
  std::string baseName = "native";
  const char* names[] = {"auto", "ring", "rabenseifner", "recdbl", "native"};
  baseName = names[A.baseline];
  if (!A.json.empty()) {
    std::ofstream js(A.json);
    for (const Sample& s : out.samples)
      js << "{\"bench\":\"dsop_perf\",\"transport\":\"" << transport << "\",\"device\":" << (A.device ? "true" : "false")
         << ",\"P\":" << P << ",\"n\":" << s.n << ",\"m\":" << (A.m ? A.m : s.n) << ",\"dtype\":\""
         << sc::dtypeName(A.dtype) << "\",\"algo\":\"" << scDsopAlgoName(s.algo) << "\",\"dense_algo\":\"" << baseName
         << "\",\"rep\":" << s.rep << ",\"iter\":" << s.iter << ",\"warmup\":" << (s.iter == 0 ? "true" : "false")
         << ",\"seconds\":" << s.seconds << "}\n";
    if (!js) { std::fprintf(stderr, "cannot write %s\n", A.json.c_str()); return 2; }
  }
  std::ostringstream md;
  md << "# dsop_perf: P = " << P << " (" << transport << (A.device ? ", device buffers" : ", host buffers")
     << "), dtype " << sc::dtypeName(A.dtype) << ", " << A.reps << " repetitions x " << A.iters
     << " iterations (+1 warm-up), allreduce baseline = scDsopAllReduce over dense '" << baseName << "'\n\n"
     << "Times: max over ranks from barrier exit to completion; per repetition the median of its iterations; "
        "statistics over repetitions with 95 % bootstrap CIs. Speedup = baseline / algorithm per repetition.\n\n"
     << "| N | M | algorithm | median ms [95% CI] | p10 ms | p90 ms | speedup median [95% CI] | speedup p10 | "
        "speedup p90 | sent MB/rank | wrong |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  int bad = 0;
  for (size_t n : A.sizes) {
    auto perRep = [&](scDsopAlgo_t algo) {
      std::vector<double> obs;
      for (int rep = 0; rep < A.reps; ++rep) {
        std::vector<double> it;
        for (const Sample& s : out.samples)
          if (s.n == n && s.algo == algo && s.rep == rep && s.iter > 0) it.push_back(s.seconds);
        obs.push_back(percentile(it, 0.5));
      }
      return obs;
    };
    const auto base = perRep(scDsopAllReduce);
    for (scDsopAlgo_t algo : A.algos) {
      const auto obs = perRep(algo);
      std::vector<double> sp(obs.size());
      for (size_t i = 0; i < obs.size(); ++i) sp[i] = base[i] / obs[i];
      const Stat med = bootstrap(obs, 0.5), p10 = bootstrap(obs, 0.1), p90 = bootstrap(obs, 0.9);
      const Stat smed = bootstrap(sp, 0.5), s10 = bootstrap(sp, 0.1), s90 = bootstrap(sp, 0.9);
      std::string name = scDsopAlgoName(algo), sent = "-", wrong = "-";
      for (const Checked& c : out.checks)
        if (c.n == n && c.algo == algo) {
          if (algo == scDsopAuto) name += std::string(" (") + scDsopAlgoName(c.resolved) + ")";
          sent = fmtX(c.sentMax / 1e6);
          wrong = std::to_string(int64_t(c.wrong));
          bad += c.wrong != 0;
        }
      md << "| " << n << " | " << (A.m ? A.m : n) << " | " << name << " | " << fmtMs(med.value) << " ["
         << fmtMs(med.lo) << ", " << fmtMs(med.hi) << "] | " << fmtMs(p10.value) << " | " << fmtMs(p90.value) << " | "
         << fmtX(smed.value) << " [" << fmtX(smed.lo) << ", " << fmtX(smed.hi) << "] | " << fmtX(s10.value) << " | "
         << fmtX(s90.value) << " | " << sent << " | " << wrong << " |\n";
    }
  }
  std::fputs(md.str().c_str(), stdout);
  if (!A.summary.empty()) {
    std::ofstream f(A.summary);
    f << md.str();
  }
  if (bad) std::fprintf(stderr, "dsop_perf: %d configurations gave WRONG results\n", bad);
  return bad ? 1 : 0;
}

// --- kernel mode -----------------------------------------------------------------
template <typename F>
double bestOf(int iters, F&& f) {
  double best = INFINITY;
  for (int i = 0; i < iters; ++i) best = std::min(best, f());
  return best;
}

int kernelMode(const Args& A) {
  scDataType_t odt;
  if (scDsopOutputType(A.dtype, &odt) != scSuccess) usage("dtype not supported by DSOP");
  const size_t si = sc::dtypeSize(A.dtype), so = sc::dtypeSize(odt);
  std::ofstream js;
  if (!A.json.empty()) js.open(A.json);
  auto line = [&](const char* where, const char* engine, size_t n, size_t m, size_t K, double s, double ref) {
    const double gbs = double(n) * m * so / s / 1e9;
    std::printf("%-6s %-7s n=%-6zu m=%-6zu K=%-4zu %9.3f ms %8.1f GB/s written  (%5.1f %% of memset's %.1f GB/s)\n",
                where, engine, n, m, K, s * 1e3, gbs, 100 * gbs / ref, ref);
    if (js.is_open())
      js << "{\"bench\":\"dsop_kernel\",\"where\":\"" << where << "\",\"engine\":\"" << engine << "\",\"n\":" << n
         << ",\"m\":" << m << ",\"K\":" << K << ",\"dtype\":\"" << sc::dtypeName(A.dtype) << "\",\"seconds\":" << s
         << ",\"written_GBps\":" << gbs << ",\"memset_GBps\":" << ref << "}\n";
  };
  for (size_t n : A.sizes) {
    const size_t m = A.m ? A.m : n, K = *std::max_element(A.kernelK.begin(), A.kernelK.end());
    std::vector<double> av(K * n), bv(K * m);
    for (size_t q = 0; q < K; ++q) {
      for (size_t x = 0; x < n; ++x) av[q * n + x] = aValue(int(q), x);
      for (size_t y = 0; y < m; ++y) bv[q * m + y] = bValue(int(q), y);
    }
    const auto ha = encode(av, A.dtype), hb = encode(bv, A.dtype);
    {  // host
      std::vector<char> G(n * m * so);
      const double ms = bestOf(5, [&] {
        const auto t0 = Clock::now();
        std::memset(G.data(), 1, G.size());
        return std::chrono::duration<double>(Clock::now() - t0).count();
      });
      const double ref = double(G.size()) / ms / 1e9;
      for (size_t k : A.kernelK) {
        if (k * (n + m) * si > size_t(1) << 31) continue;
        const double s = bestOf(5, [&] {
          const auto t0 = Clock::now();
          sc::dsop::hostRect(A.dtype, {ha.data(), n, hb.data(), m, k}, {0, n, 0, m}, G.data(), m, false);
          return std::chrono::duration<double>(Clock::now() - t0).count();
        });
        line("host", "loop", n, m, k, s, ref);
      }
    }
#ifdef SPARCOLL_HAVE_CUDA
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
      cudaGetLastError();
      std::printf("device: no CUDA device present, device kernels not measured\n");
      continue;
    }
    Buf da(ha.size(), true), db(hb.size(), true), dG(n * m * so, true);
    da.upload(ha);
    db.upload(hb);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    auto timed = [&](const std::function<void()>& f) {
      return bestOf(10, [&] {
        cudaEventRecord(e0);
        f();
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float ms = 0;
        cudaEventElapsedTime(&ms, e0, e1);
        return ms / 1e3;
      });
    };
    const double ref = double(n * m * so) / timed([&] { cudaMemsetAsync(dG.p, 1, n * m * so); }) / 1e9;
    for (size_t k : A.kernelK)
      for (auto e : {sc::dsop::Engine::Custom, sc::dsop::Engine::Blas}) {
        const double s = timed([&] {
          sc::dsop::deviceRect(A.dtype, {da.p, n, db.p, m, k}, {0, n, 0, m}, dG.p, m, false, nullptr, e);
        });
        line("device", sc::dsop::engineName(e), n, m, k, s, ref);
      }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
#endif
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args A = parse(argc, argv);
  if (A.kernel) return kernelMode(A);
  scConfig_t cfg = SC_CONFIG_INITIALIZER;
  cfg.algo = A.baseline;
  RankOut out;
  int P = 1, rc = 0;
  if (A.transport == scTransportMpi) {
#ifdef SPARCOLL_HAVE_MPI
    MPI_Init(&argc, &argv);
    {
      auto g = scbench::makeMpiGroup();
      if (A.device) usage("-D applies to the local transport (the nccl transport is not benchmarked here)");
      scComm_t comm = nullptr;
      if (scCommInitMpi(&comm, nullptr, &cfg) != scSuccess) fail(nullptr, scInvalidUsage, "scCommInitMpi");
      runRank(*g, comm, nullptr, false, A, out);
      P = g->size();
      if (g->rank() == 0) rc = report(A, out, P, "mpi");
      scCommDestroy(comm);
    }
    MPI_Finalize();
    return rc;
#else
    usage("this build has no MPI");
#endif
  }
  P = A.localRanks;
  std::vector<int> devices;
#ifdef SPARCOLL_HAVE_CUDA
  int ndev = 0;
  if (A.device && (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0)) usage("-D 1 needs a CUDA device");
  for (int q = 0; A.device && q < P; ++q) devices.push_back(q % ndev);
#else
  if (A.device) usage("-D 1 needs a CUDA build");
#endif
  std::vector<scComm_t> comms(P);
  if (scCommInitLocal(comms.data(), P, devices.empty() ? nullptr : devices.data(), &cfg) != scSuccess)
    fail(nullptr, scInvalidUsage, "scCommInitLocal");
  scbench::ThreadHub hub(P);
  std::vector<RankOut> outs(P);
  std::vector<std::thread> threads;
  for (int q = 0; q < P; ++q)
    threads.emplace_back([&, q] {
      scbench::ThreadGroup g(hub, q);
      void* stream = nullptr;
#ifdef SPARCOLL_HAVE_CUDA
      if (A.device) {
        cudaSetDevice(devices[q]);
        cudaStream_t s;
        cudaStreamCreate(&s);
        stream = s;
      }
#endif
      runRank(g, comms[q], stream, A.device, A, outs[q]);
#ifdef SPARCOLL_HAVE_CUDA
      if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
#endif
    });
  for (auto& t : threads) t.join();
  rc = report(A, outs[0], P, "local");
  for (auto c : comms) scCommDestroy(c);
  return rc;
}
