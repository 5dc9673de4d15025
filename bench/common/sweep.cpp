// The Collective tools' per-rank loop, following nccl-tests' TimeTest/BenchTime:
// warm up at the largest and smallest size, then per size and in-place mode:
// init, one untimed call, barrier, `iters` timed iterations of `agg` calls,
// time per call combined over ranks (-a), then `check` verified calls.
#include <algorithm>
#include <cstdio>

#include "common/collective.h"
#include "common/driver.h"
#include "common/report.h"
#include "common/timing.h"

namespace scbench {

namespace {

class RankRunner {
 public:
  RankRunner(Group& g, RankState& rs, Collective& coll, const Context& ctx)
      : g_(g), rs_(rs), coll_(coll), info_(ctx.info), o_(ctx.o) {}

  void call(const Case& c) {
    const scResult_t r = coll_.run(rs_, c);
    if (r != scSuccess)
      callFailed(rs_,
                 info_.collective + " (algorithm " + c.algorithm + ", " + typeName(c.dtype) + ", " +
                     std::to_string(c.layout.paramCount) + " elements" + (c.inPlace ? ", in place" : "") + ")",
                 r);
  }

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
    if (o_.check) coll_.init(rs_, c);
    call(c);  // untimed: first-touch, scratch growth, connection setup
    rs_.sync();
    const Timing t = timeCalls(g_, rs_, long(o_.iters) * o_.aggIters, o_.combine, [&] { call(c); });

    Result r;
    r.algorithm = c.algorithm;
    r.dtype = c.dtype;
    r.op = c.op;
    r.bytes = size_t(sizeBytes);
    r.count = c.layout.paramCount;
    r.inPlace = c.inPlace;
    r.timeUs = t.timeUs;
    r.cpuTimeUs = t.cpuTimeUs;
    const double sec = (o_.reportCpuTime ? r.cpuTimeUs : r.timeUs) * 1e-6;
    r.algbw = sec > 0 ? sizeBytes / 1e9 / sec : 0;
    r.busbw = r.algbw * coll_.busFactor(rs_.nranks);
    r.sentAvg = t.sentAvg;
    r.sentMax = t.sentMax;
    r.msgsMax = t.msgsMax;
    r.msgsReducedMax = t.msgsReducedMax;
    r.roundsMax = t.roundsMax;
    r.rendezvousMax = t.rendezvousMax;
    r.hostSyncsMax = t.hostSyncsMax;
    r.eventsMax = t.eventsMax;
    g_.barrier();

    if (o_.check) {
      r.wrong = 0;
      for (int k = 0; k < o_.check; ++k) {
        c.seed = ++rep_;
        coll_.init(rs_, c);
        call(c);
        rs_.sync();
        corrupt(c);
        const uint64_t mine = coll_.check(rs_, c);
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
      c.layout = coll_.layout(count, c.esz, rs_.nranks);
      c.inPlace = false;
      for (int i = 0; i < o_.warmupIters; ++i) call(c);
      rs_.sync();
    }
  }

  long long rankErrors() const { return rankErrors_; }

 private:
  Group& g_;
  RankState& rs_;
  Collective& coll_;
  const RunInfo& info_;
  const Options& o_;
  uint64_t rep_ = 100;
  long long rankErrors_ = 0;
};

}  // namespace

void Collective::addFlags(FlagSet& flags, Options& o) {
  // Proves that the checker and the exit status work: corrupts one result
  // element before each check.
  flags.add({0, "inject-error", "", "", [&o](const std::string&) { o.injectError = true; }, true});
}

size_t Collective::bufferBytes(const Options& o, int nranks) const {
  size_t need = 0;
  for (scDataType_t dt : o.dtypes) {
    const size_t esz = sc::dtypeSize(dt);
    const Layout L = layout(o.maxBytes / esz, esz, nranks);
    const size_t last = size_t(nranks - 1);
    need = std::max({need, L.sendCount * esz, L.recvCount * esz, (L.sendInplaceOffset * last + L.sendCount) * esz,
                     (L.recvInplaceOffset * last + L.recvCount) * esz});
  }
  return need;
}

double Collective::hostBytesPerRank(const Options& o, int nranks) const {
  // send + recv on the host, or the staging copy of device buffers.
  return double(bufferBytes(o, nranks)) * (o.deviceBuffers ? 1 : 2);
}

long long Collective::runRank(Group& g, RankState& rs, const Context& ctx) {
  const Options& o = ctx.o;
  const size_t capacity = bufferBytes(o, rs.nranks);
  rs.send = rs.alloc(capacity);
  rs.recv = rs.alloc(capacity);
  const auto lines = g.allgather(rankLine(rs, ctx.info));
  const bool root = g.rank() == 0;
  Report report(o, ctx.info);
  if (root) report.header(lines);

  std::vector<Result> all;
  RankRunner runner(g, rs, *this, ctx);
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
          c.layout = layout(size / c.esz, c.esz, rs.nranks);
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
