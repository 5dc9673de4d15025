// sparse_all_reduce_perf: the sparse allreduce (sparcoll/sparse.h) against the
// dense baseline, on the shared driver (bench/common/driver.h).
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
//   static   scSparseAllReduceStatic with capacity = the largest rank's count
//            (on device buffers with a status word, so no host read); dense
//            output only, left out with -O sparse
//
//   mpirun -np 4 bench/sparse_all_reduce_perf -b 64M -e 64M -D 0.001,0.01,0.1,0.5
//   bench/sparse_all_reduce_perf -t local -p 8 -b 1M -e 64M -f 4 -I powerlaw -O sparse
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/driver.h"
#include "common/json.h"
#include "common/table.h"
#include "common/timing.h"

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

namespace {

using namespace scbench;

const std::vector<std::string> kAlgos{
    "native", "dense", "auto", "ssar_recdbl", "ssar_split_allgather", "dsar_split_allgather", "dsar_early_switch",
    "static"};

uint64_t splitmix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Small positive integers: exact sums in any order and any type, no cancellation.
double value(uint64_t index, int rank) { return double(1 + splitmix(index ^ uint64_t(rank) << 40) % 4); }

// MPI's own allreduce where the transport is MPI and MPI has the type.
bool mpiAllreduce(const void* in, void* out, size_t n, scDataType_t t) {
#ifdef SPARCOLL_HAVE_MPI
  MPI_Datatype m;
  switch (t) {
    case scInt8: m = MPI_INT8_T; break;
    case scUint8: m = MPI_UINT8_T; break;
    case scInt32: m = MPI_INT32_T; break;
    case scUint32: m = MPI_UINT32_T; break;
    case scInt64: m = MPI_INT64_T; break;
    case scUint64: m = MPI_UINT64_T; break;
    case scFloat32: m = MPI_FLOAT; break;
    case scFloat64: m = MPI_DOUBLE; break;
    default: return false;
  }
  return MPI_Allreduce(in, out, int(n), m, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS;
#else
  (void)in, (void)out, (void)n, (void)t;
  return false;
#endif
}

struct Row {
  size_t N = 0;
  double density = 0;
  std::string algo;
  double timeUs = 0, sentAvg = -1, sentMax = -1, msgs = -1, resultDensity = 0, speedup = 0;
  long long wrong = -1;
  std::string autoChoice;
};

const Table kTable({{"N", 12, 0},
                    {"density", 9},
                    {"algorithm", 22, 2, true},
                    {"time(us)", 12},
                    {"sent/rank(B)", 14},
                    {"msgs", 6},
                    {"K/N", 8},
                    {"speedup", 9},
                    {"#wrong", 7},
                    {"auto", 0, 2, true}});

class SparseAllReduce final : public Tool {
 public:
  ToolSpec spec() const override {
    return {"sparse_all_reduce_perf",
            "SparseAllReduce",
            kAlgos,
            /*hasOp=*/true,
            "native",
            /*flags=*/"befnwcdtpTJA",
            {scTransportMpi, scTransportLocal},
            /*types: all*/ {},
            /*oneType=*/true,
            "(sparse allreduce against the dense baseline; sizes accept K/M/G)"};
  }

  void addFlags(FlagSet& f, Options& o) override {
    o.minBytes = o.maxBytes = size_t(64) << 20;
    o.iters = 5;
    o.warmupIters = 1;
    o.algorithms = kAlgos;
    o.deviceFlag = "-g 1";
    f.add({'b', "", "", "smallest dense vector size in bytes (default 64M)", nullptr});
    f.add({'e', "", "", "largest dense vector size in bytes (default 64M)", nullptr});
    f.add({'c', "", "<0|1>", "check every result against native (default 1)", nullptr});
    f.add({'A', "", "",
           "comma-separated; native always runs first, as the reference; accepted:\n"
           "native dense auto ssar_recdbl ssar_split_allgather dsar_split_allgather\n"
           "dsar_early_switch (default: all)",
           nullptr});
    f.add({'J', "", "", "JSON lines, one per (size, density, algorithm)", nullptr});
    f.section("sparse allreduce options:");
    f.add({'D', "densities", "<list>", "densities k/N per rank (default 0.001,0.01,0.1,0.5)",
           [this](const std::string& v) {
             densities_.clear();
             for (const auto& d : splitList(v)) densities_.push_back(parseNumber(d, "-D (densities)", 0, 1));
             if (densities_.empty()) throw UsageError{"-D needs at least one density"};
           }});
    f.add({'I', "indices", "<dist>", "uniform | powerlaw | overlap:F (F of each rank's indices shared by all)",
           [this](const std::string& v) {
             if (v.rfind("overlap:", 0) == 0) overlap_ = parseNumber(v.substr(8), "-I overlap:F", 0, 1);
             else if (v != "uniform" && v != "powerlaw") throw UsageError{"-I takes uniform, powerlaw or overlap:F"};
             dist_ = v;
           }});
    f.add({'O', "output", "<dense|sparse>", "dense vector (scSparseAllReduce) or scSparseResult_t",
           [this](const std::string& v) {
             if (v != "dense" && v != "sparse") throw UsageError{"-O takes dense or sparse"};
             sparseOut_ = v == "sparse";
           }});
    f.add({'x', "index_type", "<u32|u64>", "index type (default u32)", [this](const std::string& v) {
             if (v != "u32" && v != "u64") throw UsageError{"-x takes u32 or u64"};
             it_ = v == "u64" ? scIndexU64 : scIndexU32;
           }});
    f.add({'g', "device_buffers", "<0|1>", "local transport on device buffers (CUDA build)",
           [&o](const std::string& v) { o.deviceBuffers = parseInt(v, "-g (device_buffers)", 0, 1) != 0; }});
    f.add({'s', "switch_density", "<d>", "scSparseOptions_t.switchDensity (0: size rule)",
           [this](const std::string& v) { switchDensity_ = parseNumber(v, "-s (switch_density)", 0, 1); }});
    f.add({'G', "group_size", "<n>", "scSparseOptions_t.earlyGroupSize (0: model)",
           [this](const std::string& v) { group_ = int(parseInt(v, "-G (group_size)", 0, 1 << 20)); }});
  }

  void validate(Options& o) override {
    const size_t esz = sc::dtypeSize(o.dtypes[0]);
    if (o.minBytes < esz)
      throw UsageError{"-b " + std::to_string(o.minBytes) + " is less than one " + typeName(o.dtypes[0]) +
                       " element: the dense vector needs at least one"};
    if (it_ == scIndexU32 && o.maxBytes / esz > (size_t(1) << 32))
      throw UsageError{"-e: more than 2^32 elements need 64-bit indices (-x u64)"};
  }

  double hostBytesPerRank(const Options& o, int) const override {
    const size_t esz = sc::dtypeSize(o.dtypes[0]), isz = it_ == scIndexU64 ? 8 : 4;
    const double N = double(o.maxBytes / esz), k = N * *std::max_element(densities_.begin(), densities_.end());
    // input, result, reference (host buffers) + the reference's and result's host copies, the
    // staging copy, the library's dense scratch; per index a mark, per non-zero its host forms.
    return N * esz * (o.deviceBuffers ? 4 : 7) + N + k * (8 + 2 * (isz + esz));
  }

  long long runRank(Group& g, RankState& rs, const Context& ctx) override;

 private:
  std::vector<uint64_t> indices(uint64_t N, uint64_t k, int rank, uint64_t seed) const;
  void header(const Context& ctx) const;
  void summary(const Context& ctx, const std::vector<Row>& rows) const;
  // Without a native collective (device-local communicators on several GPUs)
  // the "native" baseline is the library's dense allreduce (auto).
  static bool baselineIsAuto(const Context& ctx) { return !ctx.info.hasNative(); }

  std::vector<double> densities_{0.001, 0.01, 0.1, 0.5};
  std::string dist_ = "uniform";
  double overlap_ = 0, switchDensity_ = 0;
  bool sparseOut_ = false;
  scIndexType_t it_ = scIndexU32;
  int group_ = 0;
};

// This rank's sorted unique indices: k of N under the distribution.
std::vector<uint64_t> SparseAllReduce::indices(uint64_t N, uint64_t k, int rank, uint64_t seed) const {
  uint64_t s = splitmix(seed * 7919 + uint64_t(rank) + 1);
  auto unit = [&] { return double((s = splitmix(s)) >> 11) * 0x1.0p-53; };
  std::vector<char> mark(N, 0);
  auto selection = [&](uint64_t kk) {  // Knuth's selection sampling
    for (uint64_t i = 0; i < N && kk > 0; ++i)
      if (unit() * double(N - i) < double(kk)) {
        mark[i] = 1;
        --kk;
      }
  };
  if (dist_ == "powerlaw") {
    uint64_t have = 0;
    for (uint64_t t = 0; have < k && t < 20 * k + 1000; ++t) {
      const double u = unit();
      const uint64_t x = std::min<uint64_t>(N - 1, uint64_t(double(N) * u * u * u));
      if (!mark[x]) {
        mark[x] = 1;
        ++have;
      }
    }
    for (uint64_t x = 0; have < k && x < N; ++x)
      if (!mark[x]) {
        mark[x] = 1;
        ++have;
      }
  } else {
    const uint64_t shared = uint64_t(std::llround(overlap_ * double(k)));
    if (shared) {
      const uint64_t keep = s;
      s = splitmix(seed * 7919);  // the same stream on every rank
      selection(shared);
      s = keep;
    }
    selection(k - shared);
  }
  std::vector<uint64_t> out;
  for (uint64_t x = 0; x < N; ++x)
    if (mark[x]) out.push_back(x);
  return out;
}

long long SparseAllReduce::runRank(Group& g, RankState& rs, const Context& ctx) {
  const Options& o = ctx.o;
  const scDataType_t dt = o.dtypes[0];
  const scDataType_t idt = it_ == scIndexU64 ? scUint64 : scUint32;
  const size_t esz = sc::dtypeSize(dt), isz = sc::dtypeSize(idt);
  if (g.rank() == 0) header(ctx);
  scSparseOptions_t opts = SC_SPARSE_OPTIONS_INITIALIZER;
  opts.switchDensity = switchDensity_;
  opts.earlyGroupSize = group_;
  scSparseResult_t res = nullptr;
  if (sparseOut_)
    if (const scResult_t r = scSparseResultCreate(rs.comm, &res); r != scSuccess)
      callFailed(rs, "scSparseResultCreate", r);
  std::vector<Row> rows;
  uint64_t seed = 1;
  for (size_t bytes : sweepSizes(o)) {
    const size_t N = bytes / esz;
    Buffer denseIn = rs.alloc(N * esz), out = rs.alloc(N * esz), ref = rs.alloc(N * esz);
    for (double d : densities_) {
      ++seed;
      const uint64_t k = d > 0 ? std::max<uint64_t>(1, uint64_t(std::llround(d * double(N)))) : 0;
      const std::vector<uint64_t> idx = indices(N, std::min<uint64_t>(k, N), rs.rank, seed);
      const size_t nnz = idx.size();
      Buffer bi = rs.alloc(nnz * isz), bv = rs.alloc(nnz * esz);
      rs.write(bi.data(), nnz, idt, [&](uint64_t i) { return double(idx[i]); });
      rs.write(bv.data(), nnz, dt, [&](uint64_t i) { return value(idx[i], rs.rank); });
      size_t next = 0;  // the densified input, for the baseline (write() visits i in order)
      rs.write(denseIn.data(), N, dt,
               [&](uint64_t i) { return next < nnz && idx[next] == i ? value(idx[next++], rs.rank) : 0.0; });
      std::vector<size_t> nnzAll;
      for (const auto& s : g.allgather(std::to_string(nnz))) nnzAll.push_back(std::stoull(s));
      // The static path's capacity and its slots (the input padded to it).
      const size_t cap = std::max<size_t>(1, *std::max_element(nnzAll.begin(), nnzAll.end()));
      Buffer status = rs.alloc(8);
      rs.write(status.data(), 1, scUint64, [](uint64_t) { return 0.0; });
      scSparseAlgo_t choice = scSparseAuto;
      scSparseAlgoFor(rs.comm, nnzAll.data(), N, it_, dt, &opts, sparseOut_ ? 0 : 1, &choice);

      // The baseline first: its result is the reference of every check.
      std::vector<std::string> order{"native"};
      for (const auto& a : o.algorithms)
        if (a != "native" && !(a == "static" && sparseOut_)) order.push_back(a);  // static: dense output only
      double nativeUs = 0, resultDensity = 0;
      std::vector<char> want;
      for (const auto& name : order) {
        scSparseAlgo_t sa = scSparseAuto;
        for (int i = 0; i < scNumSparseAlgos; ++i)
          if (name == scSparseAlgoName(scSparseAlgo_t(i))) sa = scSparseAlgo_t(i);
        auto call = [&] {
          if (name == "static") {
            const scResult_t r =
                scSparseAllReduceStatic(bi.data(), bv.data(), nnz, nullptr, cap, N, it_, dt, scSum, out.data(),
                                        rs.device ? reinterpret_cast<uint64_t*>(status.data()) : nullptr, rs.comm,
                                        rs.stream);
            if (r != scSuccess) callFailed(rs, "scSparseAllReduceStatic", r);
            return;
          }
          if (name == "native") {
            if (ctx.info.transport == scTransportMpi && mpiAllreduce(denseIn.data(), ref.data(), N, dt)) return;
            const scAlgo_t base = baselineIsAuto(ctx) ? scAlgoAuto : scAlgoNative;
            const scResult_t r = scAllReduce(denseIn.data(), ref.data(), N, dt, scSum, base, rs.comm, rs.stream);
            if (r != scSuccess) callFailed(rs, base == scAlgoAuto ? "scAllReduce(auto)" : "scAllReduce(native)", r);
            return;
          }
          const scResult_t r = sparseOut_ ? scSparseAllReduceToSparse(bi.data(), bv.data(), nnz, N, it_, dt, scSum, sa,
                                                                      &opts, res, rs.comm, rs.stream)
                                          : scSparseAllReduceEx(bi.data(), bv.data(), nnz, N, it_, dt, scSum, sa, &opts,
                                                                out.data(), rs.comm, rs.stream);
          if (r != scSuccess) callFailed(rs, "sparse allreduce (" + name + ")", r);
        };
        for (int w = 0; w < o.warmupIters; ++w) call();
        rs.sync();
        const Timing t = timeCalls(g, rs, o.iters, Combine::Max, call);
        Row r;
        r.N = N;
        r.density = d;
        r.algo = name;
        r.timeUs = t.timeUs;
        if (name != "native") {
          r.sentAvg = t.sentAvg;
          r.sentMax = t.sentMax;
          r.msgs = t.msgsMax;
        } else {
          nativeUs = r.timeUs;
          want = rs.toHost(ref.data(), N * esz);
          const std::vector<char> zero(esz, 0);
          size_t nonzero = 0;
          for (size_t i = 0; i < N; ++i) nonzero += std::memcmp(&want[i * esz], zero.data(), esz) != 0;
          resultDensity = double(nonzero) / double(N);
        }
        r.resultDensity = resultDensity;
        r.speedup = nativeUs / r.timeUs;
        r.autoChoice = scSparseAlgoName(choice);
        if (o.check && name != "native") {
          uint64_t wrong = 0;
          std::vector<char> got;
          if (!sparseOut_) {
            got = rs.toHost(out.data(), N * esz);
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
              got = rs.toHost(rv, N * esz);
            } else {  // scatter the pairs into a dense vector to compare
              got.assign(N * esz, 0);
              const std::vector<char> gi = rs.toHost(ri, n * isz), gv = rs.toHost(rv, n * esz);
              for (size_t i = 0; i < n; ++i) {
                uint64_t x = 0;
                std::memcpy(&x, &gi[i * isz], isz);
                if (x < N) std::memcpy(&got[x * esz], &gv[i * esz], esz);
                else ++wrong;
              }
            }
          }
          r.wrong = (long long)g.sum(double(wrong + countDiffering(got.data(), want.data(), N, esz)));
        }
        rows.push_back(r);
        if (g.rank() == 0)
          std::printf("%s\n",
                      kTable
                          .row({fmt("%zu", r.N), fmt("%.4g", r.density), r.algo, fmt("%.1f", r.timeUs),
                                r.sentAvg < 0 ? "-" : std::to_string(llround(r.sentAvg)),
                                r.msgs < 0 ? "-" : std::to_string(llround(r.msgs)), fmt("%.4f", r.resultDensity),
                                fmt("%.2f", r.speedup), r.wrong < 0 ? "-" : std::to_string(r.wrong),
                                r.algo == "auto" ? "-> " + r.autoChoice : ""})
                          .c_str());
      }
    }
  }
  if (res) scSparseResultDestroy(res);
  long long wrong = 0;
  for (const Row& r : rows) wrong += std::max(0LL, r.wrong);
  if (g.rank() == 0) summary(ctx, rows);
  return wrong;
}

void SparseAllReduce::header(const Context& ctx) const {
  const Options& o = ctx.o;
  std::printf("# sparse_all_reduce_perf: %s transport, %d ranks%s, %s values, %s indices, %s output, %s indices\n",
              transportName(ctx.info.transport), ctx.info.nranks, ctx.info.device ? " (device buffers)" : "",
              typeName(o.dtypes[0]), it_ == scIndexU64 ? "uint64" : "uint32", sparseOut_ ? "sparse" : "dense",
              dist_.c_str());
  std::printf(
      "# time: max over ranks of the mean of %d calls (%d warm-up); sent: bytes per rank per call (mean);\n"
      "# speedup: native time / time; #wrong: result elements differing from native%s\n",
      o.iters, o.warmupIters,
      baselineIsAuto(ctx)
          ? "\n# native here = scAllReduce(auto): device-local communicators on several GPUs have no native collective"
          : "");
  std::printf("%s\n", kTable.titles("#").c_str());
}

// Per (size, density): the fastest sparse algorithm and auto against native; JSON lines.
void SparseAllReduce::summary(const Context& ctx, const std::vector<Row>& rows) const {
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
  if (ctx.o.jsonFile.empty()) return;
  std::vector<JsonObject> lines;
  for (const Row& r : rows) {
    JsonObject j;
    j.add("tool", "sparse_all_reduce_perf").add("transport", transportName(ctx.info.transport));
    j.add("nranks", ctx.info.nranks).add("dtype", typeName(ctx.o.dtypes[0]));
    j.add("index", it_ == scIndexU64 ? "u64" : "u32").add("output", sparseOut_ ? "sparse" : "dense").add("dist", dist_);
    j.add("N", r.N).add("density", r.density).add("algorithm", r.algo).add("time_us", r.timeUs);
    j.add("sent_bytes_avg", r.sentAvg).add("sent_bytes_max", r.sentMax).add("msgs", r.msgs);
    j.add("result_density", r.resultDensity).add("speedup_vs_native", r.speedup).add("wrong", r.wrong);
    j.add("auto_choice", r.autoChoice);
    lines.push_back(std::move(j));
  }
  std::string err;
  if (!writeJsonLines(ctx.o.jsonFile, lines, &err)) fatal(err);
}

}  // namespace

int main(int argc, char** argv) {
  SparseAllReduce tool;
  return scbench::run(argc, argv, tool);
}
