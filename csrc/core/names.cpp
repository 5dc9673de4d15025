// The names of scAlgo_t, scDataType_t and scRedOp_t: the one table of each
// (scAlgoName / scAlgoFromName, scDataTypeName / ..., scRedOpName / ...; the
// library's algoName, dtypeName, opName and parsers). The benchmarks,
// sparcoll-tune and the Python module ask the C API instead of keeping copies.
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

// nccl-tests' names, which the benchmarks print.
constexpr const char* kTypeNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                      "uint64", "half",  "float", "double", "bfloat16"};
static_assert(sizeof(kTypeNames) / sizeof(kTypeNames[0]) == scNumTypes, "kTypeNames follows scDataType_t");
// Other spellings: numpy's and torch's, and the short ones.
constexpr struct {
  const char* name;
  scDataType_t t;
} kTypeAliases[] = {{"char", scInt8},       {"int", scInt32},       {"float16", scFloat16}, {"f16", scFloat16},
                    {"fp16", scFloat16},    {"float32", scFloat32}, {"f32", scFloat32},     {"fp32", scFloat32},
                    {"float64", scFloat64}, {"f64", scFloat64},     {"fp64", scFloat64},    {"bf16", scBfloat16}};

constexpr const char* kOpNames[] = {"sum", "prod", "max", "min", "avg"};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == scNumOps, "kOpNames follows scRedOp_t");

template <size_t N>
std::string listOf(const char* const (&names)[N]) {
  std::string l;
  for (const char* n : names) l += (l.empty() ? "" : ", ") + std::string(n);
  return l;
}

}  // namespace

const char* dtypeName(scDataType_t t) { return (t >= 0 && t < scNumTypes) ? kTypeNames[t] : "?"; }

const char* opName(scRedOp_t op) { return (op >= 0 && op < scNumOps) ? kOpNames[op] : "?"; }

bool parseDtype(const char* s, scDataType_t* out) {
  for (int i = 0; i < scNumTypes; ++i)
    if (std::strcmp(s, kTypeNames[i]) == 0) {
      *out = scDataType_t(i);
      return true;
    }
  for (const auto& a : kTypeAliases)
    if (std::strcmp(s, a.name) == 0) {
      *out = a.t;
      return true;
    }
  return false;
}

bool parseOp(const char* s, scRedOp_t* out) {
  for (int i = 0; i < scNumOps; ++i)
    if (std::strcmp(s, kOpNames[i]) == 0) {
      *out = scRedOp_t(i);
      return true;
    }
  return false;
}

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
  static const std::string list = listOf(kAlgoNames);
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

extern "C" const char* scDataTypeName(scDataType_t dtype) { return sc::dtypeName(dtype); }

extern "C" scResult_t scDataTypeFromName(const char* name, scDataType_t* dtype) {
  return sc::scGuard(nullptr, [&] {
    static const std::string names = [] {
      std::string l = sc::listOf(sc::kTypeNames) + " (or";
      for (const auto& a : sc::kTypeAliases) l += std::string(" ") + a.name;
      return l + ")";
    }();
    SC_ARG(name != nullptr, "data type name is NULL (one of ", names, ")");
    SC_ARG(dtype != nullptr, "dtype output is NULL");
    SC_ARG(sc::parseDtype(name, dtype), "unknown data type '", name, "': one of ", names);
  });
}

extern "C" const char* scRedOpName(scRedOp_t op) { return sc::opName(op); }

extern "C" scResult_t scRedOpFromName(const char* name, scRedOp_t* op) {
  return sc::scGuard(nullptr, [&] {
    static const std::string names = sc::listOf(sc::kOpNames);
    SC_ARG(name != nullptr, "reduction name is NULL (one of ", names, ")");
    SC_ARG(op != nullptr, "op output is NULL");
    SC_ARG(sc::parseOp(name, op), "unknown reduction '", name, "': one of ", names);
  });
}
