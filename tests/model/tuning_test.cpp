// The tuning-file parser: a full good file, every kind of bad file with its
// exact message (file, JSON path of the key, what is wrong), rule matching,
// and the files reaching a communicator: scConfig_t.tuningFile,
// SPARCOLL_TUNING_FILE, their order, and old-size scConfig_t structs.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <filesystem>
#include <utility>
#include <vector>

#include "common/harness.h"
#include "model/model.h"
#include "model/tuning.h"
#include "model_util.h"

namespace mtest {
namespace {

using sc::model::parseTuning;

const char* const kGood = R"({
  "format": "sparcoll-tuning", "version": 1, "created": "2026-11-30T12:00:00Z",
  "source": {"tool": "sparcoll-tune", "hosts": ["a", "b"]},
  "models": [
    {"transport": "mpi", "memory": "host", "level": "intra", "alpha": 4e-6, "beta": 2e-10, "gamma": 1e-10,
     "fit": {"r2": 0.99}},
    {"transport": "mpi", "level": "inter", "alpha": 2e-5, "beta": 1e-9, "gamma": 1e-10, "message_overhead": 7e-6},
    {"transport": "nccl", "alpha": 1e-5, "beta": 5e-11, "gamma": 0}
  ],
  "rules": [
    {"collective": "allreduce", "transport": "mpi", "ranks": [2, 8], "bytes": [0, 4096], "algorithm": "recdbl"},
    {"collective": "sparse_allreduce", "density": [0, 0.01], "algorithm": "ssar_rec_dbl"},
    {"collective": "sparse_allreduce", "memory": "device", "algorithm": "dsar_early_switch"},
    {"collective": "dsop", "bytes": [1048576, 18446744073709551615], "algorithm": "g_rabenseifner"},
    {"collective": "neighbor_allgather", "algorithm": "native"},
    {"collective": "reduce_scatter", "algorithm": "auto"}
  ]
})";

TEST(TuningFile, ParsesAGoodFile) {
  const auto t = parseTuning(kGood, "good.json");
  ASSERT_EQ(t->models.size(), 3u);
  EXPECT_EQ(t->models[0].memory, 0);
  EXPECT_EQ(t->models[1].memory, -1);
  EXPECT_EQ(t->models[1].level, sc::model::Level::Inter);
  EXPECT_EQ(t->models[2].level, sc::model::Level::Intra);  // level defaults to intra
  EXPECT_DOUBLE_EQ(t->models[0].params.alpha, 4e-6);
  EXPECT_DOUBLE_EQ(t->models[1].params.messageOverhead, 7e-6);
  // Not given: the neighbourhood model's default share of alpha.
  EXPECT_TRUE(std::isnan(t->models[0].params.messageOverhead));
  EXPECT_DOUBLE_EQ(sc::model::messageOverhead(t->models[0].params), 4e-6 * sc::model::kDefaultMessageOverhead);
  EXPECT_DOUBLE_EQ(sc::model::messageOverhead(t->models[1].params), 7e-6);
  ASSERT_EQ(t->rules.size(), 6u);
  EXPECT_EQ(t->rules[0].algo, scAlgoRecDbl);
  EXPECT_EQ(t->rules[1].algo, scSsarRecDbl);  // the Python spelling
  EXPECT_EQ(t->rules[3].bytes.hi, UINT64_MAX);
  EXPECT_EQ(t->rules[4].algo, scNbrNative);
  EXPECT_EQ(t->rules[5].algo, scAlgoAuto);
  EXPECT_EQ(parseError(R"({"format": "sparcoll-tuning", "version": 1})"), "");  // models and rules are optional
  EXPECT_EQ(parseError(tuningJson(R"([{"transport": "local", "alpha": 0, "beta": 0, "gamma": 0}])",
                                  R"([{"collective": "sparse_allreduce", "algorithm": "ssar_recdbl"}])")),
            "");  // the C spelling too
}

TEST(TuningFile, EveryErrorNamesFileKeyAndProblem) {
  const std::string M = R"({"transport": "mpi", "alpha": 1e-6, "beta": 1e-9, "gamma": 1e-10)";  // + more keys + }
  auto rule = [](const std::string& body) { return tuningJson("[]", "[" + body + "]"); };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[]", "the document is an array, expected an object"},
      {R"({"version": 1})", R"(format: missing (expected "sparcoll-tuning"))"},
      {R"({"format": "nccl-tests", "version": 1})", R"(format: is "nccl-tests", expected "sparcoll-tuning")"},
      {R"({"format": 7, "version": 1})", "format: is a number, expected a string"},
      {R"({"format": "sparcoll-tuning"})", "version: missing (expected 1)"},
      {R"({"format": "sparcoll-tuning", "version": 2, "what": 1})", "version: is 2; this sparcoll reads version 1"},
      {R"({"format": "sparcoll-tuning", "version": "1"})", R"(version: is "1"; this sparcoll reads version 1)"},
      {R"({"format": "sparcoll-tuning", "version": 1, "rule": []})",
       "rule: unknown key (expected one of: format, version, created, source, models, rules)"},
      {R"({"format": "sparcoll-tuning", "version": 1, "created": 2026})", "created: is a number, expected a string"},
      {R"({"format": "sparcoll-tuning", "version": 1, "source": "x"})", "source: is a string, expected an object"},
      {R"({"format": "sparcoll-tuning", "version": 1, "models": {}})", "models: is an object, expected an array"},
      {tuningJson("[3]"), "models[0]: is a number, expected an object"},
      {tuningJson(R"([{"transport": "mpi", "alpha": 1e-6, "beta": 1e-9}])"),
       "models[0].gamma: missing (every model has alpha, beta and gamma)"},
      {tuningJson(R"([{"alpha": 1e-6, "beta": 1e-9, "gamma": 0}])"),
       R"(models[0].transport: missing ("mpi", "nccl" or "local"))"},
      {tuningJson("[" + M + R"(, "transport2": 1}])"),
       "models[0].transport2: unknown key (expected one of: transport, memory, level, bytes, measured, alpha, beta, "
       "gamma, beta_shared, message_overhead, fit)"},
      {tuningJson("[" + M + R"(, "message_overhead": -2e-6}])"),
       "models[0].message_overhead: is -2e-06, expected a number >= 0"},
      {tuningJson("[" + M + R"(, "message_overhead": "fast"}])"),
       "models[0].message_overhead: is a string, expected a number"},
      {tuningJson(R"([{"transport": "tcp", "alpha": 1e-6, "beta": 1e-9, "gamma": 0}])"),
       R"(models[0].transport: is "tcp", expected one of "mpi", "nccl", "local")"},
      {tuningJson("[" + M + R"(, "memory": "gpu"}])"),
       R"(models[0].memory: is "gpu", expected one of "host", "device")"},
      {tuningJson("[" + M + R"(, "level": "rack"}])"),
       R"(models[0].level: is "rack", expected one of "intra", "inter")"},
      {tuningJson(R"([{"transport": "mpi", "alpha": "5e-6", "beta": 1e-9, "gamma": 0}])"),
       "models[0].alpha: is a string, expected a number"},
      {tuningJson(R"([{"transport": "mpi", "alpha": 1e-6, "beta": -1e-9, "gamma": 0}])"),
       "models[0].beta: is -1e-09, expected a number >= 0"},
      {tuningJson(R"([{"transport": "mpi", "alpha": 1e-6, "beta": true, "gamma": 0}])"),
       "models[0].beta: is a boolean, expected a number"},
      {tuningJson("[" + M + R"(, "fit": []}])"), "models[0].fit: is an array, expected an object"},
      {tuningJson("[" + M + "}, " + M + R"(, "memory": "host"}, )" + M + "}]"),
       R"(models[2]: repeats models[0] (the same transport, memory and level; bands of sizes need "bytes" on each))"},
      {tuningJson("[" + M + R"(, "bytes": [0, 99]}, )" + M + "}]"),
       R"(models[1]: repeats models[0] (the same transport, memory and level; bands of sizes need "bytes" on each))"},
      {tuningJson("[" + M + R"(, "bytes": [100, 999], "measured": [64, 512]}])"),
       "models[0].measured: [64, 512] is not within the entry's bytes [100, 999]"},
      {tuningJson("[" + M + R"(, "bytes": [100, 999], "measured": [512, 2000]}])"),
       "models[0].measured: [512, 2000] is not within the entry's bytes [100, 999]"},
      {tuningJson("[" + M + R"(, "measured": [512]}])"), "models[0].measured: is an array of 1, expected [lo, hi]"},
      {tuningJson("[" + M + R"(, "bytes": [0, 99]}, )" + M + R"(, "bytes": [99, 200]}])"),
       "models[1].bytes: overlaps models[0].bytes [0, 99] (the same transport, memory and level)"},
      {tuningJson("[" + M + R"(, "bytes": [10, 9]}])"), "models[0].bytes: lo 10 > hi 9"},
      {tuningJson("[" + M + R"(, "bytes": [-1, 9]}])"), "models[0].bytes[0]: is -1, expected an integer >= 0"},
      {rule(R"({"collective": "allreduce", "bytes": [5, 3], "algorithm": "ring"})"), "rules[0].bytes: lo 5 > hi 3"},
      {rule(R"({"collective": "allreduce", "algorithm": "ring"}, {"collective": "allgather", "algorithm": "ring"},
               {"collective": "allreduce", "bytes": [5, 3], "algorithm": "ring"})"),
       "rules[2].bytes: lo 5 > hi 3"},
      {rule(R"({"collective": "allreduce", "bytes": [1], "algorithm": "ring"})"),
       "rules[0].bytes: is an array of 1, expected [lo, hi]"},
      {rule(R"({"collective": "allreduce", "bytes": 7, "algorithm": "ring"})"),
       "rules[0].bytes: is a number, expected [lo, hi]"},
      {rule(R"({"collective": "allreduce", "bytes": [1.5, 3], "algorithm": "ring"})"),
       "rules[0].bytes[0]: is 1.5, expected an integer >= 0"},
      {rule(R"({"collective": "allreduce", "ranks": [-1, 3], "algorithm": "ring"})"),
       "rules[0].ranks[0]: is -1, expected an integer >= 0"},
      {rule(R"({"collective": "allreduce", "ranks": [1, null], "algorithm": "ring"})"),
       "rules[0].ranks[1]: is a null, expected an integer >= 0"},
      {rule(R"({"collective": "reduce_scatter", "algorithm": "recdbl"})"),
       R"(rules[0].algorithm: "recdbl" is not a reduce_scatter algorithm (one of: auto, ring, rabenseifner, native))"},
      {rule(R"({"collective": "dsop", "algorithm": "ring"})"),
       R"(rules[0].algorithm: "ring" is not a dsop algorithm (one of: auto, allgather, allreduce, allreduce_ring, g_rabenseifner, all_scatter))"},
      {rule(R"({"collective": "alltoall", "algorithm": "ring"})"),
       R"(rules[0].collective: "alltoall" is not a collective (one of: allreduce, reduce_scatter, allgather, sparse_allreduce, dsop, broadcast, neighbor_allgather))"},
      {rule(R"({"collective": "allreduce"})"), "rules[0].algorithm: missing (the algorithm the rule picks)"},
      {rule(R"({"algorithm": "ring"})"), "rules[0].collective: missing (which collective the rule is for)"},
      {rule(R"({"collective": "allreduce", "density": [0, 1], "algorithm": "ring"})"),
       "rules[0].density: applies to sparse_allreduce rules only"},
      {rule(R"({"collective": "sparse_allreduce", "density": [0, 2], "algorithm": "dense"})"),
       "rules[0].density[1]: is 2, a density is at most 1"},
      {rule(R"({"collective": "sparse_allreduce", "density": [0.5, 0.1], "algorithm": "dense"})"),
       "rules[0].density: lo 0.5 > hi 0.1"},
      {rule(R"({"collective": "allreduce", "size": [0, 1], "algorithm": "ring"})"),
       "rules[0].size: unknown key (expected one of: collective, transport, memory, ranks, bytes, density, algorithm)"},
      {rule(R"({"collective": "allreduce", "transport": "MPI", "algorithm": "ring"})"),
       R"(rules[0].transport: is "MPI", expected one of "mpi", "nccl", "local")"},
      {rule(R"({"collective": "allreduce", "bytes": [0, 1], "bytes": [2, 3], "algorithm": "ring"})"),
       "rules[0].bytes: duplicate key"},
      {R"({"format": "sparcoll-tuning", "version": 1, "version": 1})", "version: duplicate key"},
      {tuningJson("[" + M + R"(, "fit": {"a": [{"b": 1, "b": 2}]}}])"), "models[0].fit.a[0].b: duplicate key"},
      {"{\"format\": \"sparcoll-tuning\", \"version\": 1, \"models\": [{\"alpha\": 1e400}]}",
       "not valid JSON: number overflow parsing '1e400'"},
      {"",
       "not valid JSON: parse error at line 1, column 1: syntax error while parsing value - unexpected end of "
       "input; expected '[', '{', or a literal"},
  };
  for (const auto& [text, want] : cases) {
    SCOPED_TRACE(text);
    EXPECT_EQ(parseError(text), "tuning file 't.json': " + want);
  }
  // nlohmann's own wording after the position; the position is what matters.
  EXPECT_EQ(parseError("{\"format\": \"sparcoll-tuning\",\n \"version\": 1,,}")
                .rfind("tuning file 't.json': not valid JSON: parse error at line 2, column 15: ", 0),
            0u)
      << parseError("{\"format\": \"sparcoll-tuning\",\n \"version\": 1,,}");
}

TEST(TuningFile, RulesMatchInFileOrder) {
  const auto t = parseTuning(kGood, "good.json");
  using sc::model::Rule;
  auto algo = [&](int coll, scTransport_t tr, bool dev, uint64_t P, uint64_t bytes, double d) {
    const Rule* r = t->match(coll, tr, dev, P, bytes, d);
    return r ? r->algo : -1;
  };
  EXPECT_EQ(algo(scCollAllReduce, scTransportMpi, false, 4, 4096, 0), scAlgoRecDbl);  // bounds inclusive
  EXPECT_EQ(algo(scCollAllReduce, scTransportMpi, false, 2, 0, 0), scAlgoRecDbl);
  EXPECT_EQ(algo(scCollAllReduce, scTransportMpi, false, 4, 4097, 0), -1);
  EXPECT_EQ(algo(scCollAllReduce, scTransportMpi, false, 9, 8, 0), -1);
  EXPECT_EQ(algo(scCollAllReduce, scTransportMpi, false, 1, 8, 0), -1);
  EXPECT_EQ(algo(scCollAllReduce, scTransportLocal, false, 4, 8, 0), -1);  // transport-specific
  EXPECT_EQ(algo(scCollAllGather, scTransportMpi, false, 4, 8, 0), -1);    // other collective
  // sparse: the density rule first, then the device-only one.
  EXPECT_EQ(algo(scCollSparseAllReduce, scTransportNccl, true, 4, 1 << 20, 0.01), scSsarRecDbl);
  EXPECT_EQ(algo(scCollSparseAllReduce, scTransportNccl, true, 4, 1 << 20, 0.02), scDsarEarlySwitch);
  EXPECT_EQ(algo(scCollSparseAllReduce, scTransportLocal, false, 4, 1 << 20, 0.02), -1);
  EXPECT_EQ(algo(scCollDsop, scTransportMpi, false, 64, 1 << 20, 0), scDsopGRabenseifner);
  EXPECT_EQ(algo(scCollDsop, scTransportMpi, false, 64, (1 << 20) - 1, 0), -1);
  EXPECT_EQ(algo(sc::model::kCollNeighborAllGather, scTransportLocal, false, 3, 5, 0), scNbrNative);
  EXPECT_EQ(algo(scCollReduceScatter, scTransportLocal, false, 3, 5, 0), scAlgoAuto);
  // Model entries: memory-specific or for both; a missing level is absent here
  // (makeModel fills it from the other).
  using Entries = std::vector<const sc::model::ModelEntry*>;
  EXPECT_EQ(t->entries(scTransportMpi, false, sc::model::Level::Intra), Entries{&t->models[0]});
  EXPECT_EQ(t->entries(scTransportMpi, true, sc::model::Level::Intra), Entries{});
  EXPECT_EQ(t->entries(scTransportMpi, true, sc::model::Level::Inter), Entries{&t->models[1]});
  EXPECT_EQ(t->entries(scTransportNccl, true, sc::model::Level::Inter), Entries{});
  EXPECT_EQ(t->entries(scTransportLocal, false, sc::model::Level::Intra), Entries{});
}

// Bands: several entries of one level, each for its bytes; a size takes the
// band holding it, else the nearest one by ratio; entries for "any memory"
// and for "host" do not mix.
TEST(TuningFile, BandsPriceEachSizeWithItsOwnParameters) {
  const auto t = parseTuning(tuningJson(R"([
    {"transport": "mpi", "memory": "host", "bytes": [1000, 1999], "alpha": 2e-6, "beta": 2e-9, "gamma": 2e-10},
    {"transport": "mpi", "memory": "host", "bytes": [0, 99], "alpha": 1e-6, "beta": 1e-9, "gamma": 1e-10},
    {"transport": "mpi", "bytes": [0, 18446744073709551615], "alpha": 9e-6, "beta": 9e-9, "gamma": 9e-10}])"),
                             "bands.json");
  ASSERT_EQ(t->models.size(), 3u);
  EXPECT_EQ(t->models[0].bytes.lo, 1000u);
  EXPECT_EQ(t->models[2].bytes.hi, UINT64_MAX);
  using Entries = std::vector<const sc::model::ModelEntry*>;
  EXPECT_EQ(t->entries(scTransportMpi, false, sc::model::Level::Intra), (Entries{&t->models[0], &t->models[1]}));
  EXPECT_EQ(t->entries(scTransportMpi, true, sc::model::Level::Intra), Entries{&t->models[2]});
  const sc::model::Model m = sc::model::makeModel(t, {}, scTransportMpi, false, 4, 1, scAlgoAuto);
  auto alpha = [&](double bytes) { return m.params(bytes).alpha; };
  EXPECT_EQ(alpha(0), 1e-6);
  EXPECT_EQ(alpha(99), 1e-6);
  EXPECT_EQ(alpha(1000), 2e-6);
  EXPECT_EQ(alpha(1999), 2e-6);
  EXPECT_EQ(alpha(300), 1e-6);                                    // in the gap: 300/99 < 1000/300
  EXPECT_EQ(alpha(350), 2e-6);                                    // 350/99 > 1000/350
  EXPECT_EQ(alpha(1e12), 2e-6);                                   // beyond the last band
  EXPECT_EQ(m.paramsAt(sc::model::Level::Inter, 50).beta, 1e-9);  // the missing level copies the bands
  // The environment overrides every band.
  sc::model::Overrides env;
  env.beta = 5e-9;
  const sc::model::Model o = sc::model::makeModel(t, env, scTransportMpi, false, 4, 1, scAlgoAuto);
  EXPECT_EQ(o.params(50).beta, 5e-9);
  EXPECT_EQ(o.params(1500).beta, 5e-9);
  EXPECT_EQ(o.params(1500).alpha, 2e-6);
}

// The message a failed scCommInitLocal leaves (without the source location).
std::string initError(const scConfig_t* cfg) {
  scComm_t comms[2] = {nullptr, nullptr};
  const scResult_t r = scCommInitLocal(comms, 2, nullptr, cfg);
  if (r == scSuccess) {
    for (scComm_t c : comms) scCommDestroy(c);
    return "";
  }
  EXPECT_EQ(r, scInvalidArgument);
  EXPECT_EQ(comms[0], nullptr);
  std::string m = scGetLastError(nullptr);
  const size_t at = m.rfind(" (csrc/");
  return at == std::string::npos ? m : m.substr(0, at);
}

TEST(TuningFile, BadFileFailsCommunicatorCreation) {
  ScopedEnv noEnv("SPARCOLL_TUNING_FILE", nullptr);
  const std::string bad =
      writeTuning(tuningJson("[]", R"([{"collective": "allreduce", "bytes": [5, 3], "algorithm": "ring"}])"));
  const std::string good = writeTuning(tuningJson("[]"));
  scConfig_t cfg = configWith(bad.c_str());
  EXPECT_EQ(initError(&cfg), "invalid argument: tuning file '" + bad + "': rules[0].bytes: lo 5 > hi 3");
  const std::string missing = testing::TempDir() + "sparcoll-no-such-file.json";
  cfg = configWith(missing.c_str());
  EXPECT_EQ(initError(&cfg),
            "invalid argument: tuning file '" + missing + "': cannot be read (No such file or directory)");
  const std::string dir = testing::TempDir();
  cfg = configWith(dir.c_str());
  EXPECT_EQ(initError(&cfg), "invalid argument: tuning file '" + dir + "': cannot be read (not a regular file)");
  cfg = configWith(good.c_str());
  EXPECT_EQ(initError(&cfg), "");
  {
    // From the environment, the message says so; scConfig_t.tuningFile beats it.
    ScopedEnv env("SPARCOLL_TUNING_FILE", bad.c_str());
    EXPECT_EQ(initError(nullptr),
              "invalid argument: tuning file '" + bad + "' (from SPARCOLL_TUNING_FILE): rules[0].bytes: lo 5 > hi 3");
    cfg = configWith(good.c_str());
    EXPECT_EQ(initError(&cfg), "");
    cfg = configWith("");  // "" is "not given": the environment's file
    EXPECT_NE(initError(&cfg), "");
  }
  // The other creation paths read the file before anything else.
  scComm_t comm = nullptr;
  cfg = configWith(bad.c_str());
  scCostModel_t m = nullptr;
  EXPECT_EQ(scCostModelCreate(&m, &cfg, 4, 1, 0), scInvalidArgument);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(scGetLastError(nullptr)).find("rules[0].bytes: lo 5 > hi 3"), std::string::npos);
  if (sctest::mode() == sctest::Mode::Mpi) {
    EXPECT_EQ(scCommInitMpi(&comm, nullptr, &cfg), scInvalidArgument);
    EXPECT_EQ(comm, nullptr);
  }
}

// Nesting and size are capped: a file of nested brackets is refused at
// once (it took 27 s and 2.9 GB before running out of memory), a file past
// 16 MiB before it is read, each naming the file and where it came from.
TEST(TuningFile, DeepOrHugeFilesAreRefusedNamingTheFile) {
  ScopedEnv noEnv("SPARCOLL_TUNING_FILE", nullptr);
  const std::string deep(1 << 20, '[');  // 1 MiB of '['
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(parseError(deep),
            "tuning file 't.json': arrays and objects nested more than 64 deep "
            "(a tuning file nests 4)");
  // 64 levels still parse (and fail on what they hold).
  EXPECT_EQ(parseError(std::string(64, '[') + std::string(64, ']')),
            "tuning file 't.json': "
            "the document is an array, expected an object");
  const std::string deepFile = writeTuning(deep);
  scConfig_t cfg = configWith(deepFile.c_str());
  EXPECT_EQ(initError(&cfg), "invalid argument: tuning file '" + deepFile +
                                 "': arrays and objects nested more than 64 deep (a tuning file nests 4)");
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 5.0);

  const std::string huge = writeTuning(tuningJson("[]"));
  std::filesystem::resize_file(huge, (16u << 20) + 1);  // sparse: nothing written
  const std::string tooLarge = std::to_string((16u << 20) + 1) + " bytes, more than a tuning file has (16 MiB at most)";
  cfg = configWith(huge.c_str());
  EXPECT_EQ(initError(&cfg), "invalid argument: tuning file '" + huge + "': " + tooLarge);
  ScopedEnv env("SPARCOLL_TUNING_FILE", huge.c_str());
  EXPECT_EQ(initError(nullptr),
            "invalid argument: tuning file '" + huge + "' (from SPARCOLL_TUNING_FILE): " + tooLarge);
  std::filesystem::resize_file(huge, 16u << 20);  // at the limit: read, and refused as JSON only
  EXPECT_EQ(initError(nullptr).find(tooLarge), std::string::npos) << initError(nullptr);
}

// A caller built against the scConfig_t without tuningFile passes its size:
// accepted, and the bytes past it are never read. Sizes between are rejected.
TEST(TuningFile, OldSizeConfigKeepsWorking) {
  ScopedEnv noEnv("SPARCOLL_TUNING_FILE", nullptr);
  const std::string bad = writeTuning("not json");
  scConfig_t cfg = configWith(bad.c_str());
  cfg.size = offsetof(scConfig_t, tuningFile);
  EXPECT_EQ(initError(&cfg), "");
  cfg.size = offsetof(scConfig_t, tuningFile) + 1;
  EXPECT_NE(initError(&cfg).find("scConfig_t.size is"), std::string::npos);
  cfg.size = sizeof(scConfig_t);
  EXPECT_NE(initError(&cfg).find("not valid JSON"), std::string::npos);
}

}  // namespace
}  // namespace mtest
