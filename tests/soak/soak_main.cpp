// sparcoll_soak: thousands of random, seeded calls across every collective
// API, each checked against the suites' references (see soak_plan.h for what
// is drawn, soak_calls.cpp for the checks). Built twice: sparcoll_soak runs P
// ranks as threads (--ranks), sparcoll_soak_mpi one rank per MPI process.
//
//   --seed S          the run (default 1); call i is the same on every rank
//   --calls N         stop after N calls (default: unbounded with --seconds)
//   --seconds S       stop after S seconds (checked between batches)
//   --ranks P         local ranks, 1..8 (default 4; MPI: the world size, <= 8)
//   --max-count C     largest element count of any call (default 1048576)
//   --batch B         calls per communicator (default 200)
//   --report-every S  progress line period in seconds (default 10)
//   --replay I        run call I alone (on its batch's configuration)
//   --verbose         print every call's signature before running it
//   --only API        run only the calls of one API (apiName: allreduce,
//                     broadcast, sparse_allreduce, dsop, ...); the others are skipped
//   --inject I        make call I fail on rank 0 (an invalid dtype while the
//                     other ranks call a valid allreduce): proves that failures
//                     are caught, reported and survived
//
// Output: progress lines "soak: t=... calls=... failures=... rss_kib=...
// heap_kib=... fds=..." (taken between batches, when no communicator exists;
// heap = malloc's bytes in use; under mpirun rank 0's figures, but
// rss_start/rss_end of the summary are the largest rank's) and a final
// machine-readable summary line;
// exit status 1 on any failure. A failure prints "FAIL seed=S ranks=P
// max_count=C batch=B call=I <signature>" and the checkers' messages: the
// same flags with --replay I rerun that call alone (a call depends only on
// seed, index, P and max count; its communicator configuration on the batch).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

#include "common/harness.h"
#include "proc_stats.h"
#include "soak_calls.h"

#ifdef SPARCOLL_TEST_MPI
#include <mpi.h>
#endif

namespace soak {
namespace {

struct Options {
  uint64_t seed = 1;
  uint64_t calls = 0;  // 0: no bound
  double seconds = 0;  // 0: no bound
  int ranks = 4;
  size_t maxCount = size_t(1) << 20;
  uint64_t batch = 200;
  double reportEvery = 10;
  long long replay = -1, inject = -1;
  bool verbose = false;
  std::string only;
};

// The call a thread is running, for attributing its gtest failures.
thread_local long long tCall = -1;

// Takes every gtest failure of every thread (the checkers report through
// EXPECT/ADD_FAILURE) and files it under the reporting thread's call.
// gtest serialises reports under its own lock; ours guards the map.
class Failures : public testing::ScopedFakeTestPartResultReporter {
 public:
  Failures() : ScopedFakeTestPartResultReporter(INTERCEPT_ALL_THREADS, &unused_) {}
  void ReportTestPartResult(const testing::TestPartResult& r) override {
    if (!r.failed()) return;
    std::lock_guard<std::mutex> lk(mu_);
    std::string& s = byCall_[tCall];
    if (s.size() < 4000)
      s += std::string(r.file_name() ? r.file_name() : "?") + ":" + std::to_string(r.line_number()) + ": " +
           r.message() + "\n";
  }
  std::map<long long, std::string> take() {
    std::lock_guard<std::mutex> lk(mu_);
    std::map<long long, std::string> out;
    out.swap(byCall_);
    return out;
  }

 private:
  testing::TestPartResultArray unused_;
  std::mutex mu_;
  std::map<long long, std::string> byCall_;
};

bool parse(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    auto num = [&](auto* dst) {
      if (!v) return false;
      *dst = static_cast<std::remove_pointer_t<decltype(dst)>>(std::strtod(v, nullptr));
      ++i;
      return true;
    };
    bool ok = true;
    if (a == "--seed") ok = v && (o->seed = std::strtoull(v, nullptr, 10), ++i);
    else if (a == "--calls") ok = num(&o->calls);
    else if (a == "--seconds") ok = num(&o->seconds);
    else if (a == "--ranks") ok = num(&o->ranks);
    else if (a == "--max-count") ok = num(&o->maxCount);
    else if (a == "--batch") ok = num(&o->batch);
    else if (a == "--report-every") ok = num(&o->reportEvery);
    else if (a == "--replay") ok = num(&o->replay);
    else if (a == "--inject") ok = num(&o->inject);
    else if (a == "--verbose") o->verbose = true;
    else if (a == "--only") ok = v && (o->only = v, ++i);
    else ok = false;
    if (!ok) {
      std::fprintf(stderr, "sparcoll_soak: bad argument '%s' (see the top of tests/soak/soak_main.cpp)\n", a.c_str());
      return false;
    }
  }
  if (o->calls == 0 && o->seconds <= 0 && o->replay < 0) o->calls = 1000;
  // The dense references stay exact up to 8 ranks (tests/dense/dense_data.h).
  if (o->ranks < 1 || o->ranks > 8 || o->batch < 1) {
    std::fprintf(stderr, "sparcoll_soak: --ranks must be 1..8 and --batch at least 1\n");
    return false;
  }
  return true;
}

// Runs calls [first, last) on one communicator per rank. Returns the calls
// run (by the lowest rank here; skipped ones not counted). A rank whose call
// failed aborts its communicator so that its peers leave the batch within
// about a second, not at their deadline; the rest of the batch is skipped.
uint64_t runBatch(const Options& o, int P, uint64_t first, uint64_t last) {
  const scConfig_t cfg = batchConfig(o.seed, first / o.batch);
  std::atomic<uint64_t> ran{0};
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        RankCtx ctx;
        ctx.comm = comm;
        ctx.rank = rank;
        ctx.P = P;
        ctx.maxCount = o.maxCount;
        tCall = (long long)first;
        EXPECT_EQ(scSparseResultCreate(comm, &ctx.result), scSuccess);
        for (uint64_t i = first; i < last; ++i) {
          const Plan plan = planCall(o.seed, i, P, o.maxCount);
          if (!o.only.empty() && o.only != apiName(plan.api)) continue;
          tCall = (long long)i;
          if (rank == 0 || sctest::mode() == sctest::Mode::Mpi) ++ran;
          if (o.verbose && rank == 0) std::printf("call %s\n", plan.sig().c_str()), std::fflush(stdout);
          bool ok = false;
          try {
            if ((long long)i == o.inject) {
              // Local ranks: rank 0's abort ends every wait of the others at once,
              // also a wait still finishing call i - 1, whose part on rank 0 is
              // done (a ring's last send). The barrier (a counter: once full it
              // cannot fail) makes the injected failure land on call i alone.
              if (sctest::mode() != sctest::Mode::Mpi) EXPECT_EQ(scBarrier(comm, nullptr), scSuccess);
              int32_t v = 1;
              const scResult_t r =
                  scAllReduce(&v, &v, 1, rank == 0 ? scDataType_t(99) : scInt32, scSum, scAlgoRing, comm, nullptr);
              EXPECT_EQ(r, scSuccess) << "injected failure: " << scGetLastError(comm);
              ok = r == scSuccess;
            } else {
              ok = runCall(ctx, plan);
            }
          } catch (const std::exception& e) {
            ADD_FAILURE() << "exception: " << e.what();
          }
          if (!ok) {
            scCommAbort(comm);
            break;
          }
        }
        scSparseResultDestroy(ctx.result);
        tCall = -1;
      },
      &cfg);
  return ran;
}

long long kib(long long bytes) { return bytes < 0 ? -1 : bytes / 1024; }  // -1: not available

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

}  // namespace
}  // namespace soak

int main(int argc, char** argv) {
  using namespace soak;
#ifdef SPARCOLL_TEST_MPI
  MPI_Init(&argc, &argv);
#endif
  testing::InitGoogleTest(&argc, argv);
  Options o;
  if (!parse(argc, argv, &o)) return 2;
  const bool mpi = sctest::mode() == sctest::Mode::Mpi;
  const int P = mpi ? sctest::mpiWorldSize() : o.ranks;
  const int me = mpi ? sctest::mpiWorldRank() : 0;
  Failures failures;
  const double t0 = now();
  const long rssInit = rssKiB();
  const int fdsInit = openFds();
  const long long heapInit = heapInUse();
  long long heapStart = -1, heapEnd = -1;
  long rssStart = -1, rssMax = rssInit;
  int fdsStart = -1;
  uint64_t calls = 0, failed = 0, next = o.replay >= 0 ? uint64_t(o.replay) : 0;
  double lastReport = t0;
  if (me == 0)
    std::printf("soak: seed=%llu transport=%s ranks=%d max_count=%zu batch=%llu\n", (unsigned long long)o.seed,
                sctest::modeName(), P, o.maxCount, (unsigned long long)o.batch);
  for (bool stop = false; !stop;) {
    // A batch never crosses a multiple of --batch, so a replayed call gets its batch's configuration.
    uint64_t last = (next / o.batch + 1) * o.batch;
    if (o.replay >= 0) last = next + 1;
    if (o.calls) last = std::min(last, o.calls);
    const uint64_t ran = runBatch(o, P, next, last);
    // Union over the ranks of the calls that failed anywhere.
    std::map<long long, std::string> mine = failures.take();
    std::vector<uint8_t> bad(size_t(last - next), 0);
    for (const auto& f : mine)
      if (f.first >= (long long)next && f.first < (long long)last) bad[size_t(f.first - (long long)next)] = 1;
      else bad[0] = 1;  // outside any call (communicator creation): filed under the batch's first call
    uint64_t got = ran;
#ifdef SPARCOLL_TEST_MPI
    MPI_Allreduce(MPI_IN_PLACE, bad.data(), int(bad.size()), MPI_UINT8_T, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(&ran, &got, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
#endif
    for (const auto& f : mine) {
      const Plan plan = planCall(o.seed, uint64_t(std::max(0ll, f.first)), P, o.maxCount);
      std::fprintf(stderr, "FAIL seed=%llu ranks=%d max_count=%zu batch=%llu %s%s\n%s", (unsigned long long)o.seed, P,
                   o.maxCount, (unsigned long long)o.batch, mpi ? ("mpi_rank=" + std::to_string(me) + " ").c_str() : "",
                   plan.sig().c_str(), f.second.c_str());
    }
    for (uint8_t b : bad) failed += b;
    calls += got;
    next = last;
    const long rss = rssKiB();
    const int fds = openFds();
    // Between batches no communicator exists: heap bytes in use are what
    // outlives them (RSS also keeps freed memory the allocator holds on to).
    heapEnd = heapInUse();
    rssMax = std::max(rssMax, rss);
    if (rssStart < 0) rssStart = rss, fdsStart = fds, heapStart = heapEnd;  // allocator and transport warm
    const double t = now();
    stop = o.replay >= 0 || (o.calls && next >= o.calls) || (o.seconds > 0 && t - t0 >= o.seconds);
#ifdef SPARCOLL_TEST_MPI
    int s = stop;  // rank 0's clock decides, so every rank runs the same batches
    MPI_Bcast(&s, 1, MPI_INT, 0, MPI_COMM_WORLD);
    stop = s;
#endif
    if (me == 0 && (stop || t - lastReport >= o.reportEvery)) {
      std::printf("soak: t=%.0fs calls=%llu failures=%llu rss_kib=%ld heap_kib=%lld fds=%d\n", t - t0,
                  (unsigned long long)calls, (unsigned long long)failed, rss, kib(heapEnd), fds);
      std::fflush(stdout);
      lastReport = t;
    }
  }
  const long rssEnd = rssKiB();
  const int fdsEnd = openFds();
  long rssEndMax = rssEnd, rssStartMax = rssStart;
#ifdef SPARCOLL_TEST_MPI
  // The largest process's figures: a leak on any rank shows.
  MPI_Allreduce(&rssEnd, &rssEndMax, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(&rssStart, &rssStartMax, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
#endif
  if (me == 0)
    std::printf(
        "soak: seed=%llu transport=%s ranks=%d calls=%llu failures=%llu seconds=%.1f rss_init=%ld "
        "rss_start=%ld rss_end=%ld rss_max=%ld heap_init=%lld heap_start=%lld heap_end=%lld fds_init=%d "
        "fds_start=%d fds_end=%d\n",
        (unsigned long long)o.seed, sctest::modeName(), P, (unsigned long long)calls, (unsigned long long)failed,
        now() - t0, rssInit, rssStartMax, rssEndMax, rssMax, kib(heapInit), kib(heapStart), kib(heapEnd), fdsInit,
        fdsStart, fdsEnd);
#ifdef SPARCOLL_TEST_MPI
  MPI_Finalize();
#endif
  return failed ? 1 : 0;
}
