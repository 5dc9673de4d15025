// The environment variables libsparcoll reads, as one table (env.cpp): each
// variable's name, the kind of value it takes, its default, what it does and
// where it is read. The library reads its variables only through env::get, so
// the table is the whole list; the `sparcoll-env` tool prints it (and the
// current values), and docs/env.md's library table is generated from it
// (`sparcoll-env --markdown`; a test fails when the page differs).
#pragma once

#include <cstddef>
#include <string>

namespace sc::env {

// In the table's order (env.cpp checks it at compile time).
enum class Var {
  Timeout,
  Algo,
  Check,
  PipelineBytes,
  TuningFile,
  Alpha,
  Beta,
  Gamma,
  BetaShared,
  MessageOverhead,
  Machines,
  TopologyFile,
  Hostname,
  RingOrder,
  ModelTransport,
  FlightRecorder,
  Trace,
  Membarrier,
  MpiShm,
  MpiCma,
  MpiShmMaxBytes,
  LocalPlanned,
  RanksPerNode,
  NbrK,
  NbrTheta,
  SparseOwnerSum,
  DsopGemm,
  TopkKernel,
  TopkTile,
  Count
};

struct Info {
  Var var;
  const char* name;     // SPARCOLL_...
  const char* kind;     // what the value is: "seconds", "a path", "one of a, b", ...
  const char* dflt;     // the value or behaviour when unset
  const char* meaning;  // what it does (Markdown)
  const char* readBy;   // the files that read it, relative to csrc/ or kernels/
};

// Every variable, in the order of Var.
const Info* table(size_t* count);
const Info& info(Var v);
inline const char* name(Var v) { return info(v).name; }

// The variable's value, or nullptr when it is unset or empty: an empty value
// counts as unset for every variable.
const char* get(Var v);

// A switch (`0`/`off`, `1`/`on`, any case): 1 on or unset, 0 off, -1 anything else.
int onOff(Var v);

// How an error message names a variable and its value: SPARCOLL_X='value'
// (SPARCOLL_X unset when it is not set).
std::string setting(Var v);

// The library table of docs/env.md: Markdown, one row per variable.
std::string markdown();

}  // namespace sc::env
