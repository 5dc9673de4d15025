// scAlgo_t <-> name: the one table (scAlgoName, scAlgoFromName; the library's
// algoName and parseAlgo of core/comm.h). The benchmarks, sparcoll-tune and the
// Python module ask the C API instead of keeping their own copies.
#include "core/names.h"

#include <cstring>
#include <string>

#include "core/api_guard.h"
#include "core/comm.h"

namespace sc {
namespace {

constexpr const char* kAlgoNames[] = {"auto",   "ring",     "rabenseifner",     "recdbl",
                                      "native", "binomial", "scatter_allgather"};
static_assert(sizeof(kAlgoNames) / sizeof(kAlgoNames[0]) == scNumAlgos, "kAlgoNames follows scAlgo_t");

}  // namespace

const char* algoName(scAlgo_t a) { return (a >= 0 && a < scNumAlgos) ? kAlgoNames[a] : "?"; }

bool parseAlgo(const char* s, scAlgo_t* out) {
  for (int i = 0; i < scNumAlgos; ++i)
    if (std::strcmp(s, kAlgoNames[i]) == 0) {
      *out = scAlgo_t(i);
      return true;
    }
  return false;
}

const char* algoNameList() {
  static const std::string list = [] {
    std::string l;
    for (const char* n : kAlgoNames) l += (l.empty() ? "" : ", ") + std::string(n);
    return l;
  }();
  return list.c_str();
}

}  // namespace sc

extern "C" const char* scAlgoName(scAlgo_t algo) { return sc::algoName(algo); }

extern "C" scResult_t scAlgoFromName(const char* name, scAlgo_t* algo) {
  return sc::scGuard(nullptr, [&] {
    SC_ARG(name != nullptr, "algorithm name is NULL (one of ", sc::algoNameList(), ")");
    SC_ARG(algo != nullptr, "algo output is NULL");
    SC_ARG(sc::parseAlgo(name, algo), "unknown algorithm '", name, "': one of ", sc::algoNameList());
  });
}
