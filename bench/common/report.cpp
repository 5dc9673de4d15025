#include "common/report.h"

#include <unistd.h>

#include <ctime>
#include <map>
#include <tuple>

#include "common/json.h"
#include "common/table.h"

namespace scbench {

namespace {

std::string hostName() {
  char h[256] = {};
  return ::gethostname(h, sizeof h - 1) == 0 ? std::string(h) : std::string("?");
}

using Key = std::tuple<int, int, size_t, bool>;  // dtype, op, bytes, in-place
Key keyOf(const Result& r) { return Key{int(r.dtype), int(r.op), r.bytes, r.inPlace}; }

std::map<Key, const Result*> baselineIndex(const std::vector<Result>& all, const std::string& baseline) {
  std::map<Key, const Result*> m;
  for (const auto& r : all)
    if (r.algorithm == baseline) m[keyOf(r)] = &r;
  return m;
}

std::string ratio(double num, double den) {
  if (!(den > 0) || !(num > 0)) return "-";
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", num / den);
  return b;
}

// nccl-tests' columns: size, count, type, redop, root, then time, algbw,
// busbw and #wrong out of place and in place. t: "time" or "cputime".
Table blockTable(const char* t) {
  std::vector<Column> cols{{"size", 12, 0}, {"count", 12, 2}, {"type", 8, 2}, {"redop", 6, 2}, {"root", 6, 2}};
  for (int side = 0; side < 2; ++side)
    for (const Column& c :
         {Column{t, 7, 2}, Column{"algbw", 6, 2}, Column{"busbw", 6, 2}, Column{"#wrong", 5, 2, false, 1}})
      cols.push_back(c);
  return Table(cols);
}

Table summaryTable(const std::string& base) {
  return Table({{"size", 12, 0},
                {"type", 8, 2},
                {"redop", 6, 2},
                {"algorithm", 13, 2, true},
                {"oop(us)", 9, 1},
                {"ip(us)", 9, 1},
                {"oop/" + base, 10, 2},
                {"ip/" + base, 10, 1},
                {"speedup", 8, 1},
                {"sent/rank(B)", 14, 2},
                {"sent/size", 9, 1}});
}

}  // namespace

std::string Report::formatTime(double us) {
  char b[32];
  if (us >= 10000.0) std::snprintf(b, sizeof b, "%7.0f", us);
  else if (us >= 100.0) std::snprintf(b, sizeof b, "%7.1f", us);
  else std::snprintf(b, sizeof b, "%7.2f", us);
  return b;
}

void Report::header(const std::vector<std::string>& rankLines) {
  const bool factor = o_.stepFactor > 1;
  std::fprintf(out_,
               "# nThread %d nGpus %d minBytes %zu maxBytes %zu step: %zu(%s) warmup iters: %d iters: %d agg iters: %d "
               "validation: %d graph: %d\n",
               info_.nthreads, o_.ngpus, o_.minBytes, o_.maxBytes, factor ? o_.stepFactor : o_.stepBytes,
               factor ? "factor" : "bytes", o_.warmupIters, o_.iters, o_.aggIters, o_.check, o_.cudaGraph);
  static const char* combineNames[] = {"rank 0", "mean over ranks", "min over ranks", "max over ranks"};
  std::string algos;
  for (const auto& a : o_.algorithms) algos += (algos.empty() ? "" : ",") + a;
  std::fprintf(out_, "# sparcoll %s: transport %s, %d ranks, %s buffers, algorithms %s, time: %s\n",
               info_.collective.c_str(), transportName(info_.transport), info_.nranks, info_.device ? "device" : "host",
               algos.c_str(), combineNames[int(o_.combine)]);
  std::fprintf(out_, "# build: %s; host %s\n", scGetBuildInfo(), hostName().c_str());
  std::fprintf(out_, "#\n# Using devices\n");
  for (const auto& l : rankLines) std::fprintf(out_, "%s\n", l.c_str());
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void Report::beginBlock(const std::string& algorithm) {
  const Table t = blockTable(o_.reportCpuTime ? "cputime" : "time");
  std::fprintf(out_, "# Algorithm: %s\n#\n", algorithm.c_str());
  std::fprintf(out_, "%s           out-of-place                       in-place          \n",
               t.row({"", "", "", "", ""}, "# ").c_str());
  std::fprintf(out_, "%s\n", t.titles("# ").c_str());
  std::fprintf(out_, "%s\n",
               t.row({"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", ""},
                     "# ")
                   .c_str());
  std::fflush(out_);
}

void Report::row(const Result& oop, const Result& ip) {
  std::vector<std::string> cells{fmt("%zu", oop.bytes), fmt("%zu", oop.count), typeName(oop.dtype),
                                 info_.hasOp ? opName(oop.op) : "none", std::to_string(info_.root)};
  for (const Result* r : {&oop, &ip}) {
    cells.push_back(formatTime(o_.reportCpuTime ? r->cpuTimeUs : r->timeUs));
    cells.push_back(fmt("%.2f", r->algbw));
    cells.push_back(fmt("%.2f", r->busbw));
    cells.push_back(r->wrong >= 0 ? fmt("%lld", (long long)r->wrong) : "N/A");
  }
  std::fprintf(out_, "%s\n", blockTable("time").row(cells).c_str());
  std::fflush(out_);
}

void Report::endBlock(int64_t errors, double avgBusBw) {
  std::fprintf(out_, "# Out of bounds values : %lld %s\n", (long long)errors, errors ? "FAILED" : "OK");
  std::fprintf(out_, "# Avg bus bandwidth    : %g \n", avgBusBw);
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

void Report::summary(const std::vector<Result>& all) {
  const std::string& base = info_.baseline;
  const auto native = baselineIndex(all, base);
  std::fprintf(out_,
               "# Summary: time per call in us (%s); x/%s = time / %s time (oop: out-of-place, ip: in-place);\n"
               "# speedup = %s time / time (out-of-place); sent = bytes sent per rank per call by sparcoll's "
               "schedules\n# (max over ranks; native calls are not counted); sent/size = sent / size\n",
               o_.reportCpuTime ? "cputime" : "time", base.c_str(), base.c_str(), base.c_str());
  const Table table = summaryTable(base);
  std::fprintf(out_, "%s\n", table.titles("# ").c_str());
  // Rows grouped by (type, op, size), algorithms in command-line order.
  std::map<std::tuple<int, int, size_t>, std::vector<std::pair<const Result*, const Result*>>> groups;
  std::vector<std::tuple<int, int, size_t>> order;
  std::map<std::pair<std::string, Key>, const Result*> inPlace;
  for (const auto& r : all)
    if (r.inPlace) inPlace[{r.algorithm, keyOf(r)}] = &r;
  for (const auto& r : all) {
    if (r.inPlace) continue;
    const auto k = std::make_tuple(int(r.dtype), int(r.op), r.bytes);
    const auto ip = inPlace.find({r.algorithm, Key{int(r.dtype), int(r.op), r.bytes, true}});
    if (!groups.count(k)) order.push_back(k);
    groups[k].push_back({&r, ip == inPlace.end() ? nullptr : ip->second});
  }
  for (const auto& k : order) {
    for (const auto& [oop, ip] : groups[k]) {
      auto time = [&](const Result* r) { return r ? (o_.reportCpuTime ? r->cpuTimeUs : r->timeUs) : 0.0; };
      const auto no = native.find(keyOf(*oop));
      const Result* nOop = no == native.end() ? nullptr : no->second;
      const Result* nIp = nullptr;
      if (ip) {
        const auto ni = native.find(keyOf(*ip));
        nIp = ni == native.end() ? nullptr : ni->second;
      }
      const bool isNative = oop->algorithm == base;
      char sent[32] = "-", perSize[32] = "-";
      if (oop->algorithm != "native") {
        std::snprintf(sent, sizeof sent, "%.0f", oop->sentMax);
        if (oop->bytes) std::snprintf(perSize, sizeof perSize, "%.3f", oop->sentMax / double(oop->bytes));
      }
      const std::vector<std::string> cells{fmt("%zu", oop->bytes),
                                           typeName(oop->dtype),
                                           info_.hasOp ? opName(oop->op) : "none",
                                           oop->algorithm,
                                           formatTime(time(oop)),
                                           ip ? formatTime(time(ip)) : "-",
                                           isNative ? "-" : ratio(time(oop), time(nOop)),
                                           isNative ? "-" : ratio(time(ip), time(nIp)),
                                           isNative ? "-" : ratio(time(nOop), time(oop)),
                                           sent,
                                           perSize};
      std::fprintf(out_, "%s\n", table.row(cells, "# ").c_str());
    }
  }
  std::fprintf(out_, "#\n");
  std::fflush(out_);
}

bool Report::writeJson(const std::vector<Result>& all, const std::string& path, std::string* err) {
  const auto native = baselineIndex(all, info_.baseline);
  char stamp[64];
  const std::time_t now = std::time(nullptr);
  std::strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&now));
  std::vector<JsonObject> lines;
  for (const auto& r : all) {
    JsonObject j;
    j.add("tool", info_.tool).add("collective", info_.collective).add("algorithm", r.algorithm);
    j.add("transport", transportName(info_.transport)).add("nranks", info_.nranks).add("device_buffers", info_.device);
    j.add("type", typeName(r.dtype)).add("redop", info_.hasOp ? opName(r.op) : "none").add("root", info_.root);
    j.add("size_bytes", r.bytes).add("count", r.count).add("in_place", r.inPlace);
    j.add("time_us", r.timeUs).add("cputime_us", r.cpuTimeUs).add("algbw_gbps", r.algbw).add("busbw_gbps", r.busbw);
    if (r.wrong >= 0) j.add("wrong", r.wrong);
    else j.add("wrong", nullptr);
    j.add("bytes_sent_per_rank_avg", r.sentAvg).add("bytes_sent_per_rank_max", r.sentMax);
    j.add("msgs_sent_per_rank_max", r.msgsMax).add("msgs_reduced_per_rank_max", r.msgsReducedMax);
    j.add("traffic_counted", r.algorithm != "native");
    j.add("rounds_per_call_max", r.roundsMax).add("rendezvous_per_call_max", r.rendezvousMax);
    j.add("host_syncs_per_call_max", r.hostSyncsMax).add("events_created_per_call_max", r.eventsMax);
    const auto n = native.find(keyOf(r));
    if (n != native.end() && r.algorithm != info_.baseline && n->second->timeUs > 0 && r.timeUs > 0) {
      j.add("baseline", info_.baseline).add("baseline_time_us", n->second->timeUs);
      j.add("time_ratio_to_baseline", r.timeUs / n->second->timeUs);
      j.add("speedup_vs_baseline", n->second->timeUs / r.timeUs);
    }
    j.add("iters", o_.iters).add("warmup_iters", o_.warmupIters).add("agg_iters", o_.aggIters);
    j.add("time_combine", int(o_.combine)).add("timestamp", std::string(stamp));
    // Provenance (bench/results/README.md): the library's version, commit and
    // MPI / CUDA / NCCL versions, and the machine.
    j.add("build", std::string(scGetBuildInfo())).add("host", hostName());
    lines.push_back(std::move(j));
  }
  return writeJsonLines(path, lines, err);
}

}  // namespace scbench
