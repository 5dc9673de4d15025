// The per-rank benchmark loop, following nccl-tests' TimeTest/BenchTime:
// warm up at the largest and smallest size, then per size and in-place mode:
// init, one untimed call, barrier, `iters` timed iterations of `agg` calls,
// time per call combined over ranks (-a), then `check` verified calls.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "common/driver.h"

namespace scbench {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

class RankRunner {
 public:
  RankRunner(Group& g, RankState& rs, const SweepContext& ctx) : g_(g), rs_(rs), x_(ctx), o_(ctx.o) {}

  void call(const Case& c) {
    const scResult_t r = x_.coll.run(rs_, c);
    if (r != scSuccess)
      fatal("rank " + std::to_string(rs_.rank) + ": " + x_.info.collective + " (algorithm " + c.algorithm + ", " +
            typeName(c.dtype) + ", " + std::to_string(c.layout.paramCount) + " elements" +
            (c.inPlace ? ", in place" : "") + ") failed: " + scGetErrorString(r) + ": " + scGetLastError(rs_.comm));
  }
  void complete() { syncStream(rs_.stream); }

  // Debug aid (--inject-error): flips bits of one result element on the last rank.
  void corrupt(const Case& c) {
    if (!o_.injectError || rs_.rank != rs_.nranks - 1 || c.layout.recvCount == 0) return;
    char* p = static_cast<char*>(rs_.recvPtr(c)) + (c.layout.recvCount / 2) * c.esz;
    char b = 0;
    copyFromBuffer(&b, p, 1, rs_.device);
    b ^= 0x41;
    copyToBuffer(p, &b, 1, rs_.device);
  }

  Result benchTime(Case c, double sizeBytes) {
    if (o_.check) x_.coll.init(rs_, c);
    call(c);  // untimed: first-touch, scratch growth, connection setup
    complete();
    g_.barrier();

    scCommResetStats(rs_.comm);
    const double t0 = now();
    for (int it = 0; it < o_.iters; ++it)
      for (int a = 0; a < o_.aggIters; ++a) call(c);
    const double cpu = now() - t0;
    complete();
    const double wall = now() - t0;
    scStats_t st{};
    scCommGetStats(rs_.comm, &st);

    const double calls = double(o_.iters) * o_.aggIters;
    Result r;
    r.algorithm = c.algorithm;
    r.dtype = c.dtype;
    r.op = c.op;
    r.bytes = size_t(sizeBytes);
    r.count = c.layout.paramCount;
    r.inPlace = c.inPlace;
    r.timeUs = g_.combine(wall / calls, o_.combine) * 1e6;
    r.cpuTimeUs = g_.combine(cpu / calls, o_.combine) * 1e6;
    const double sec = (o_.reportCpuTime ? r.cpuTimeUs : r.timeUs) * 1e-6;
    r.algbw = sec > 0 ? sizeBytes / 1e9 / sec : 0;
    r.busbw = r.algbw * x_.coll.busFactor(rs_.nranks);
    r.sentAvg = g_.combine(double(st.bytesSent) / calls, Combine::Avg);
    r.sentMax = g_.max(double(st.bytesSent) / calls);
    r.msgsMax = g_.max(double(st.msgsSent) / calls);
    g_.barrier();

    if (o_.check) {
      r.wrong = 0;
      for (int k = 0; k < o_.check; ++k) {
        c.seed = ++rep_;
        x_.coll.init(rs_, c);
        call(c);
        complete();
        corrupt(c);
        const uint64_t mine = x_.coll.check(rs_, c);
        if (mine) ++rankErrors_;
        r.wrong = (long long)g_.sum(double(mine));
        if (r.wrong) break;
      }
    }
    return r;
  }

  // nccl-tests' warmup: `warmupIters` out-of-place calls at the largest and smallest size.
  void warmup(Case c, size_t count0, size_t count1) {
    for (size_t count : {count1, count0}) {
      c.layout = x_.coll.layout(count, c.esz, rs_.nranks);
      c.inPlace = false;
      for (int i = 0; i < o_.warmupIters; ++i) call(c);
      complete();
    }
  }

  long long rankErrors() const { return rankErrors_; }

 private:
  Group& g_;
  RankState& rs_;
  const SweepContext& x_;
  const Options& o_;
  uint64_t rep_ = 100;
  long long rankErrors_ = 0;
};

}  // namespace

std::vector<size_t> sweepSizes(const Options& o) {
  std::vector<size_t> sizes;
  for (size_t s = o.minBytes; s <= o.maxBytes;) {
    sizes.push_back(s);
    const size_t next = o.stepFactor > 1 ? (s ? s * o.stepFactor : 1) : s + o.stepBytes;
    if (next <= s) break;  // overflow, or a zero step with min == max
    s = next;
  }
  return sizes;
}

long long runRank(Group& g, RankState& rs, const SweepContext& ctx) {
  const Options& o = ctx.o;
  const bool root = g.rank() == 0;
  Report report(o, ctx.info);
  std::vector<Result> all;
  RankRunner runner(g, rs, ctx);
  const auto sizes = sweepSizes(o);
  long long failed = 0;

  for (const auto& algo : o.algorithms) {
    if (root) report.beginBlock(algo);
    const long long errorsBefore = runner.rankErrors();
    double bwSum = 0;
    int bwCount = 0;
    for (scDataType_t dt : o.dtypes) {
      for (scRedOp_t op : o.ops) {
        Case c{dt, op, algo, Layout{}, sc::dtypeSize(dt), false, 99};
        runner.warmup(c, o.minBytes / c.esz, o.maxBytes / c.esz);
        for (size_t size : sizes) {
          c.layout = ctx.coll.layout(size / c.esz, c.esz, rs.nranks);
          const double bytes = double(std::max(c.layout.sendCount, c.layout.recvCount) * c.esz);
          Result res[2];
          for (int ip = 0; ip < 2; ++ip) {
            c.inPlace = ip == 1;
            res[ip] = runner.benchTime(c, bytes);
            bwSum += res[ip].busbw;
            ++bwCount;
          }
          if (root) report.row(res[0], res[1]);
          all.push_back(res[0]);
          all.push_back(res[1]);
        }
      }
    }
    const long long blockErrors = (long long)g.sum(double(runner.rankErrors() - errorsBefore));
    failed += blockErrors;
    if (root) report.endBlock(blockErrors, bwCount ? bwSum / bwCount : 0.0);
  }
  if (root) {
    report.summary(all);
    if (!o.jsonFile.empty()) {
      std::string err;
      if (!report.writeJson(all, o.jsonFile, &err)) fatal(err);
      std::printf("# JSON lines written to %s\n", o.jsonFile.c_str());
    }
  }
  return failed;
}

}  // namespace scbench
