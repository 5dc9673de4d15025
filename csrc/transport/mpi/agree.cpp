// scCommInitMpi's agreement (transport/factory.h: agreeOverMpi). Every rank
// contributes one fixed-size record, its settings or its failure, to one
// MPI_Iallgather on the caller's communicator, waited for until the
// deadline; every rank then reads the same records and reaches the same
// verdict. Device and per-rank diagnostics (flight recorder, trace
// directory) may differ; what decides a schedule or a wait may not.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "core/env.h"
#include "transport/factory.h"
#include "transport/mpi/util.h"
#include "transport/mpi/wait.h"

namespace sc {
namespace {

// One rank's record. Numbers are compared as bytes (a NaN override equals
// itself), text is truncated.
struct Record {
  int32_t failed, code;
  int32_t check, algo, machinesEnv, modelTransport;
  double timeout;
  uint64_t pipelineBytes, tuningDigest, topologyDigest;
  double alpha, beta, gamma, betaShared, messageOverhead;
  char error[600];
};

uint64_t fileDigest(const std::string& path) {
  if (path.empty()) return 0;
  std::ifstream f(path, std::ios::binary);
  std::ostringstream all;
  all << f.rdbuf();
  return std::hash<std::string>{}(all.str()) | 1;  // 0: no file
}

Record recordOf(const Config* c, const Error* failure) {
  Record r;
  std::memset(&r, 0, sizeof r);
  if (failure) {
    r.failed = 1;
    r.code = failure->code();
    std::snprintf(r.error, sizeof r.error, "%s", failure->what());
    return r;
  }
  r.check = c->check;
  r.algo = c->algo;
  r.machinesEnv = c->machinesEnv;
  r.modelTransport = c->modelTransport;
  r.timeout = c->timeout;
  r.pipelineBytes = c->pipelineBytes;
  r.tuningDigest = fileDigest(c->tuningPath);
  // The topology file's contents as resolveConfig read them (1: unreadable).
  if (!c->topologyPath.empty())
    r.topologyDigest = c->topologyReadError.empty() ? std::hash<std::string>{}(c->topologyText) | 2 : 1;
  r.alpha = c->env.alpha;
  r.beta = c->env.beta;
  r.gamma = c->env.gamma;
  r.betaShared = c->env.betaShared;
  r.messageOverhead = c->env.messageOverhead;
  return r;
}

std::string number(double v) {
  if (v != v) return "unset";
  std::ostringstream s;
  s << v;
  return s.str();
}

// The settings that must agree: name, and the text of a record's value.
struct Setting {
  std::string name;
  std::function<std::string(const Record&)> text;
};
// "what (scConfig_t.field / SPARCOLL_X)": a setting the config or the environment gives.
std::string both(const char* what, const char* field, env::Var var) {
  return cat(what, " (scConfig_t.", field, " / ", env::name(var), ")");
}
const std::vector<Setting>& settings() {
  static const std::vector<Setting> s = {
      {both("timeout", "timeoutSeconds", env::Var::Timeout), [](const Record& r) { return number(r.timeout); }},
      {both("check", "check", env::Var::Check), [](const Record& r) { return std::to_string(r.check); }},
      {both("algorithm", "algo", env::Var::Algo),
       [](const Record& r) { return std::string(algoName(scAlgo_t(r.algo))); }},
      {env::name(env::Var::Machines),
       [](const Record& r) { return r.machinesEnv ? std::to_string(r.machinesEnv) : std::string("unset"); }},
      {env::name(env::Var::ModelTransport), [](const Record& r) { return std::to_string(r.modelTransport); }},
      {both("pipeline bytes", "pipelineBytes", env::Var::PipelineBytes),
       [](const Record& r) { return std::to_string(r.pipelineBytes); }},
      {both("tuning file", "tuningFile", env::Var::TuningFile),
       [](const Record& r) {
         if (!r.tuningDigest) return std::string("none");
         char d[24];
         std::snprintf(d, sizeof d, "%016llx", static_cast<unsigned long long>(r.tuningDigest));
         return std::string("contents ") + d;  // the path may differ (a copy per node)
       }},
      {both("topology file", "topologyFile", env::Var::TopologyFile),
       [](const Record& r) {
         if (!r.topologyDigest) return std::string("none");
         if (r.topologyDigest == 1) return std::string("unreadable");
         char d[24];
         std::snprintf(d, sizeof d, "%016llx", static_cast<unsigned long long>(r.topologyDigest));
         return std::string("contents ") + d;
       }},
      {env::name(env::Var::Alpha), [](const Record& r) { return number(r.alpha); }},
      {env::name(env::Var::Beta), [](const Record& r) { return number(r.beta); }},
      {env::name(env::Var::Gamma), [](const Record& r) { return number(r.gamma); }},
      {env::name(env::Var::BetaShared), [](const Record& r) { return number(r.betaShared); }},
      {env::name(env::Var::MessageOverhead), [](const Record& r) { return number(r.messageOverhead); }},
  };
  return s;
}

constexpr double kMinWait = 10.0;

void agree(const void* mpiComm, const Config* cfg, const Error* failure, double timeout) {
  // Without a usable MPI communicator there is no one to agree with: the
  // caller reports this rank's own failure, or the creation names what is wrong.
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  if (!init || fin || (mpiComm && *static_cast<const MPI_Comm*>(mpiComm) == MPI_COMM_NULL)) return;
  const MPI_Comm comm = mpiCommFrom(mpiComm);
  int P = 1, me = 0;
  mpiCheck(MPI_Comm_size(comm, &P), "MPI_Comm_size");
  mpiCheck(MPI_Comm_rank(comm, &me), "MPI_Comm_rank");
  if (P == 1) return;
  // On the heap: a request that times out is never completed, and MPI may
  // still write its buffers.
  auto mine = std::make_unique<Record>(recordOf(cfg, failure));
  auto all = std::make_unique<std::vector<Record>>(size_t(P));
  MPI_Request req;
  mpiCheck(MPI_Iallgather(mine.get(), sizeof(Record), MPI_BYTE, all->data(), sizeof(Record), MPI_BYTE, comm, &req),
           "MPI_Iallgather");
  bool pending = false;
  try {
    // At least kMinWait: a deadline set for calls (milliseconds, in tests)
    // would fail ranks that are merely late to start; a rank that never
    // comes is still found.
    waitCollective(req, Deadline::in(std::max(timeout, kMinWait)),
                   "scCommInitMpi's agreement on the configuration (MPI_Iallgather)", &pending, MPI_COMM_NULL, 0);
  } catch (...) {
    if (pending) {
      (void)mine.release();  // leaked on purpose: MPI may still write them
      (void)all.release();
    }
    throw;
  }
  const std::vector<Record>& r = *all;
  for (int q = 0; q < P; ++q)
    if (r[size_t(q)].failed && q != me && !failure)
      SC_THROW(scRemoteError, "rank ", q,
               " failed to create the communicator: ", scGetErrorString(scResult_t(r[size_t(q)].code)), ": ",
               r[size_t(q)].error);
  if (failure) return;  // the caller throws this rank's own
  for (const Setting& s : settings()) {
    const std::string here = s.text(r[size_t(me)]);
    for (int q = 0; q < P; ++q) {
      const std::string there = s.text(r[size_t(q)]);
      if (there != here)
        SC_THROW(scInvalidUsage, "the ranks' settings differ: ", s.name, " is ", here, " on rank ", me, " but ", there,
                 " on rank ", q, " (every rank must be started with the same settings)");
    }
  }
}

}  // namespace

SC_PROVIDE(agreeOverMpi, agree);

}  // namespace sc
