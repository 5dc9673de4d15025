// The tuning-file parser. Every check names the JSON path of what it rejects,
// so the message alone says where to look; the walk below is the schema
// (README "Cost model"), version 1.
#include "model/tuning.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "core/comm.h"
#include "core/error.h"
#include "model/dense.h"

namespace sc::model {
namespace {

using json = nlohmann::json;

constexpr const char* kFormat = "sparcoll-tuning";
constexpr int kVersion = 1;
// Far above any real file (a few KiB, nested 4 deep); a path to something
// else (a data set) fails fast, and so does a file of nested brackets, which
// nlohmann would otherwise build into gigabytes of empty arrays.
constexpr off_t kMaxFileBytes = 16 << 20;
constexpr int kMaxDepth = 64;

const char* const kCollNames[kNumRuleCollectives] = {"allreduce",         "reduce_scatter", "allgather",
                                                     "sparse_allreduce",  "dsop",           "broadcast",
                                                     "neighbor_allgather"};
static_assert(scCollAllReduce == 0 && scCollReduceScatter == 1 && scCollAllGather == 2 && scCollSparseAllReduce == 3 &&
                  scCollDsop == 4 && scCollBroadcast == 5 && scNumCollectives == 6,
              "kCollNames follows scCollective_t");
// sparcoll.h has no name function for the neighbourhood algorithms; Python's are these.
const char* const kNbrNames[] = {"auto", "naive", "combining", "hierarchical", "native"};
static_assert(sizeof(kNbrNames) / sizeof(kNbrNames[0]) == scNumNbrAlgos, "kNbrNames follows scNbrAlgo_t");

// The names of value v of the collective's enum (nullptr past the end).
const char* nameOf(int coll, int v) {
  switch (coll) {
    case scCollAllReduce:
    case scCollReduceScatter:
    case scCollAllGather:
    case scCollBroadcast: return v < scNumAlgos ? algoName(scAlgo_t(v)) : nullptr;
    case scCollSparseAllReduce: return v < scNumSparseAlgos ? scSparseAlgoName(scSparseAlgo_t(v)) : nullptr;
    case scCollDsop: return v < scNumDsopAlgos ? scDsopAlgoName(scDsopAlgo_t(v)) : nullptr;
    default: return v < scNumNbrAlgos ? kNbrNames[v] : nullptr;
  }
}

bool offered(int coll, int v) {
  switch (coll) {
    case scCollAllReduce:
    case scCollReduceScatter:
    case scCollAllGather:
    case scCollBroadcast: return v == scAlgoAuto || denseOffers(Coll(coll), scAlgo_t(v));
    default: return true;
  }
}

std::string nameList(int coll) {
  std::string s;
  for (int v = 0; const char* n = nameOf(coll, v); ++v)
    if (offered(coll, v)) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

// Rejects duplicate keys, which nlohmann would silently resolve to the last:
// a rule with "bytes" twice is a mistake to report, not to guess at. Tracks
// where the parser is so the message has the key's path. Stops at once at
// a nesting deeper than kMaxDepth.
class DuplicateKeys {
 public:
  explicit DuplicateKeys(const std::string& prefix) : prefix_(prefix) {}
  bool operator()(int depth, json::parse_event_t ev, json& parsed) {
    switch (ev) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        if (depth >= kMaxDepth)  // depth: the arrays and objects around this one
          SC_THROW(scInvalidArgument, prefix_, ": arrays and objects nested more than ", kMaxDepth,
                   " deep (a tuning file nests 4)");
        element();
        stack_.emplace_back();
        stack_.back().array = ev == json::parse_event_t::array_start;
        break;
      case json::parse_event_t::key: {
        Frame& f = stack_.back();
        f.key = parsed.get<std::string>();
        if (!f.seen.insert(f.key).second) SC_THROW(scInvalidArgument, prefix_, ": ", path(), ": duplicate key");
        break;
      }
      case json::parse_event_t::value: element(); break;
      case json::parse_event_t::object_end:
      case json::parse_event_t::array_end: stack_.pop_back(); break;
    }
    return true;
  }

 private:
  struct Frame {
    bool array = false;
    long index = -1;
    std::string key;
    std::set<std::string> seen;
  };
  void element() {
    if (!stack_.empty() && stack_.back().array) ++stack_.back().index;
  }
  std::string path() const {
    std::string p;
    for (const Frame& f : stack_) p += f.array ? "[" + std::to_string(f.index) + "]" : (p.empty() ? "" : ".") + f.key;
    return p;
  }
  std::string prefix_;
  std::vector<Frame> stack_;
};

std::string tooLarge(uint64_t bytes) {
  return cat(bytes, " bytes, more than a tuning file has (", kMaxFileBytes >> 20, " MiB at most)");
}

class Parser {
 public:
  // prefix: how messages name the file ("tuning file 'x.json'").
  explicit Parser(std::string prefix) : prefix_(std::move(prefix)) {}

  std::shared_ptr<Tuning> parse(const std::string& text) {
    if (text.size() > size_t(kMaxFileBytes)) fail("", tooLarge(text.size()));
    json doc;
    try {
      doc = json::parse(text, DuplicateKeys(prefix_));
    } catch (const json::exception& e) {
      // e.what() starts with "[json.exception.parse_error.101] ": keep the readable part.
      std::string what = e.what();
      if (const size_t p = what.find("] "); what.rfind("[json.", 0) == 0 && p != std::string::npos)
        what = what.substr(p + 2);
      fail("", "not valid JSON: " + what);
    }
    auto t = std::make_shared<Tuning>();
    if (!doc.is_object()) fail("", "the document is " + kind(doc) + ", expected an object");
    // format and version first: a file of another kind or version is reported
    // as such, not by its keys this version does not know.
    const json* f = find(doc, "format");
    if (!f) fail("format", "missing (expected \"" + std::string(kFormat) + "\")");
    if (const std::string got = str(*f, "format"); got != kFormat)
      fail("format", "is \"" + got + "\", expected \"" + kFormat + "\"");
    const json* v = find(doc, "version");
    if (!v) fail("version", "missing (expected 1)");
    if (!v->is_number_integer() || v->get<long long>() != kVersion)
      fail("version", "is " + v->dump() + "; this sparcoll reads version 1");
    onlyKeys(doc, "", {"format", "version", "created", "source", "models", "rules"});
    if (const json* c = find(doc, "created")) str(*c, "created");
    if (const json* s = find(doc, "source"); s && !s->is_object())
      fail("source", "is " + kind(*s) + ", expected an object");
    if (const json* m = find(doc, "models")) {
      array(*m, "models");
      for (size_t i = 0; i < m->size(); ++i) t->models.push_back(model((*m)[i], at("models", i), t->models));
    }
    if (const json* r = find(doc, "rules")) {
      array(*r, "rules");
      for (size_t i = 0; i < r->size(); ++i) t->rules.push_back(rule((*r)[i], at("rules", i)));
    }
    return t;
  }

 private:
  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    if (path.empty()) SC_THROW(scInvalidArgument, prefix_, ": ", what);
    SC_THROW(scInvalidArgument, prefix_, ": ", path, ": ", what);
  }
  static std::string at(const std::string& path, size_t i) { return path + "[" + std::to_string(i) + "]"; }
  static std::string key(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }
  static std::string kind(const json& j) {
    if (j.is_number()) return "a number";
    const std::string n = j.type_name();
    return (n == "object" || n == "array" ? "an " : "a ") + n;
  }

  static const json* find(const json& obj, const char* k) {
    auto it = obj.find(k);
    return it == obj.end() ? nullptr : &*it;
  }
  const json& need(const json& obj, const std::string& path, const char* k, const char* why) const {
    const json* j = find(obj, k);
    if (!j) fail(key(path, k), std::string("missing (") + why + ")");
    return *j;
  }
  void onlyKeys(const json& obj, const std::string& path, std::initializer_list<const char*> allowed) const {
    for (auto it = obj.begin(); it != obj.end(); ++it) {
      bool ok = false;
      std::string list;
      for (const char* a : allowed) {
        ok = ok || it.key() == a;
        list += (list.empty() ? "" : ", ") + std::string(a);
      }
      if (!ok) fail(key(path, it.key()), "unknown key (expected one of: " + list + ")");
    }
  }
  void object(const json& j, const std::string& path) const {
    if (!j.is_object()) fail(path, "is " + kind(j) + ", expected an object");
  }
  void array(const json& j, const std::string& path) const {
    if (!j.is_array()) fail(path, "is " + kind(j) + ", expected an array");
  }
  std::string str(const json& j, const std::string& path) const {
    if (!j.is_string()) fail(path, "is " + kind(j) + ", expected a string");
    return j.get<std::string>();
  }
  // One of `names` (its index).
  int choice(const json& j, const std::string& path, std::initializer_list<const char*> names) const {
    const std::string s = str(j, path);
    int i = 0;
    std::string list;
    for (const char* n : names) {
      if (s == n) return i;
      list += (list.empty() ? "\"" : ", \"") + std::string(n) + "\"";
      ++i;
    }
    fail(path, "is \"" + s + "\", expected one of " + list);
  }
  // A model parameter or density bound: a finite number >= 0.
  double number(const json& j, const std::string& path) const {
    if (!j.is_number()) fail(path, "is " + kind(j) + ", expected a number");
    const double d = j.get<double>();
    if (!std::isfinite(d)) fail(path, "is not a finite number");
    if (d < 0) fail(path, "is " + j.dump() + ", expected a number >= 0");
    return d;
  }
  uint64_t count(const json& j, const std::string& path) const {
    if (j.is_number_unsigned()) return j.get<uint64_t>();
    if (j.is_number_integer() && j.get<int64_t>() >= 0) return uint64_t(j.get<int64_t>());  // "-0"
    fail(path, "is " + (j.is_number() ? j.dump() : kind(j)) + ", expected an integer >= 0");
  }
  template <typename T, typename Read>
  Range<T> range(const json& j, const std::string& path, Read read) const {
    if (!j.is_array() || j.size() != 2)
      fail(path, "is " + (j.is_array() ? "an array of " + std::to_string(j.size()) : kind(j)) + ", expected [lo, hi]");
    Range<T> r;
    r.lo = (this->*read)(j[0], at(path, 0));
    r.hi = (this->*read)(j[1], at(path, 1));
    if (r.lo > r.hi) fail(path, "lo " + j[0].dump() + " > hi " + j[1].dump());
    return r;
  }

  int transport(const json& j, const std::string& path) const {
    static_assert(scTransportMpi == 0 && scTransportNccl == 1 && scTransportLocal == 2, "choice order");
    return choice(j, path, {"mpi", "nccl", "local"});
  }
  int memory(const json& j, const std::string& path) const { return choice(j, path, {"host", "device"}); }

  ModelEntry model(const json& j, const std::string& path, const std::vector<ModelEntry>& before) const {
    object(j, path);
    onlyKeys(j, path,
             {"transport", "memory", "level", "bytes", "measured", "alpha", "beta", "gamma", "beta_shared",
              "message_overhead", "fit"});
    ModelEntry e;
    e.transport = transport(need(j, path, "transport", "\"mpi\", \"nccl\" or \"local\""), key(path, "transport"));
    if (const json* m = find(j, "memory")) e.memory = memory(*m, key(path, "memory"));
    if (const json* l = find(j, "level"))
      e.level = choice(*l, key(path, "level"), {"intra", "inter"}) ? Level::Inter : Level::Intra;
    const char* why = "every model has alpha, beta and gamma";
    e.params.alpha = number(need(j, path, "alpha", why), key(path, "alpha"));
    e.params.beta = number(need(j, path, "beta", why), key(path, "beta"));
    e.params.gamma = number(need(j, path, "gamma", why), key(path, "gamma"));
    if (const json* x = find(j, "beta_shared")) e.params.betaShared = number(*x, key(path, "beta_shared"));
    if (const json* x = find(j, "message_overhead"))
      e.params.messageOverhead = number(*x, key(path, "message_overhead"));
    const json* b = find(j, "bytes");
    if (b) e.bytes = range<uint64_t>(*b, key(path, "bytes"), &Parser::count);
    e.measured = e.bytes;
    if (const json* x = find(j, "measured")) {
      e.measured = range<uint64_t>(*x, key(path, "measured"), &Parser::count);
      if (e.measured.lo < e.bytes.lo || e.measured.hi > e.bytes.hi)
        fail(key(path, "measured"), "[" + std::to_string(e.measured.lo) + ", " + std::to_string(e.measured.hi) +
                                        "] is not within the entry's bytes [" + std::to_string(e.bytes.lo) + ", " +
                                        std::to_string(e.bytes.hi) + "]");
    }
    if (const json* f = find(j, "fit")) object(*f, key(path, "fit"));
    // Several entries for one transport, memory and level are bands: each
    // names its bytes, and no two overlap (a size must have one price).
    for (size_t i = 0; i < before.size(); ++i) {
      const ModelEntry& o = before[i];
      if (o.transport != e.transport || o.memory != e.memory || o.level != e.level) continue;
      const std::string other = "models[" + std::to_string(i) + "]";
      if (!b || !hasBytes_[i])
        fail(path,
             "repeats " + other + " (the same transport, memory and level; bands of sizes need \"bytes\" on each)");
      if (e.bytes.lo <= o.bytes.hi && o.bytes.lo <= e.bytes.hi)
        fail(key(path, "bytes"), "overlaps " + other + ".bytes [" + std::to_string(o.bytes.lo) + ", " +
                                     std::to_string(o.bytes.hi) + "] (the same transport, memory and level)");
    }
    hasBytes_.push_back(b != nullptr);
    return e;
  }

  Rule rule(const json& j, const std::string& path) const {
    object(j, path);
    onlyKeys(j, path, {"collective", "transport", "memory", "ranks", "bytes", "density", "algorithm"});
    Rule r;
    const std::string c = str(need(j, path, "collective", "which collective the rule is for"), key(path, "collective"));
    r.coll = -1;
    for (int i = 0; i < kNumRuleCollectives; ++i)
      if (c == kCollNames[i]) r.coll = i;
    if (r.coll < 0) {
      std::string list;
      for (const char* n : kCollNames) list += (list.empty() ? "" : ", ") + std::string(n);
      fail(key(path, "collective"), "\"" + c + "\" is not a collective (one of: " + list + ")");
    }
    if (const json* t = find(j, "transport")) r.transport = transport(*t, key(path, "transport"));
    if (const json* m = find(j, "memory")) r.memory = memory(*m, key(path, "memory"));
    if (const json* x = find(j, "ranks")) r.ranks = range<uint64_t>(*x, key(path, "ranks"), &Parser::count);
    if (const json* x = find(j, "bytes")) r.bytes = range<uint64_t>(*x, key(path, "bytes"), &Parser::count);
    if (const json* x = find(j, "density")) {
      if (r.coll != scCollSparseAllReduce) fail(key(path, "density"), "applies to sparse_allreduce rules only");
      r.density = range<double>(*x, key(path, "density"), &Parser::number);
      if (r.density.hi > 1) fail(key(path, "density") + "[1]", "is " + (*x)[1].dump() + ", a density is at most 1");
    }
    const std::string a = str(need(j, path, "algorithm", "the algorithm the rule picks"), key(path, "algorithm"));
    r.algo = algoByName(r.coll, a);
    if (r.algo < 0)
      fail(key(path, "algorithm"), "\"" + a + "\" is not a " + c + " algorithm (one of: " + nameList(r.coll) + ")");
    return r;
  }

  std::string prefix_;
  mutable std::vector<bool> hasBytes_;  // per models[i] parsed so far: whether it named "bytes"
};

std::string prefixOf(const std::string& file, const char* origin) {
  return "tuning file '" + file + "'" + (origin ? std::string(" (from ") + origin + ")" : "");
}

}  // namespace

const char* collectiveName(int coll) { return coll >= 0 && coll < kNumRuleCollectives ? kCollNames[coll] : "?"; }

int algoByName(int coll, const std::string& name) {
  if (coll < 0 || coll >= kNumRuleCollectives) return -1;
  // Python spells scSsarRecDbl "ssar_rec_dbl"; scSparseAlgoName "ssar_recdbl".
  if (coll == scCollSparseAllReduce && name == "ssar_rec_dbl") return scSsarRecDbl;
  for (int v = 0; const char* n = nameOf(coll, v); ++v)
    if (name == n) return offered(coll, v) ? v : -1;
  return -1;
}

std::vector<const ModelEntry*> Tuning::entries(scTransport_t t, bool device, Level level) const {
  std::vector<const ModelEntry*> out;
  for (const ModelEntry& e : models)
    if (e.transport == int(t) && (e.memory < 0 || e.memory == int(device)) && e.level == level &&
        (out.empty() || e.memory == out.front()->memory))
      out.push_back(&e);
  return out;
}

const Rule* Tuning::match(int coll, scTransport_t t, bool device, uint64_t P, uint64_t bytes, double density) const {
  for (const Rule& r : rules)
    if (r.coll == coll && (r.transport < 0 || r.transport == int(t)) && (r.memory < 0 || r.memory == int(device)) &&
        r.ranks.contains(P) && r.bytes.contains(bytes) && r.density.contains(density))
      return &r;
  return nullptr;
}

std::shared_ptr<const Tuning> parseTuning(const std::string& text, const std::string& name) {
  auto t = Parser(prefixOf(name, nullptr)).parse(text);
  t->path = name;
  return t;
}

std::shared_ptr<const Tuning> loadTuning(const std::string& path, const char* origin) {
  const std::string prefix = prefixOf(path, origin);
  // stat first: a directory opens as a stream on Linux and only fails on reading.
  struct stat st;
  SC_ARG(stat(path.c_str(), &st) == 0, prefix, ": cannot be read (", std::strerror(errno), ")");
  SC_ARG(S_ISREG(st.st_mode), prefix, ": cannot be read (not a regular file)");
  SC_ARG(st.st_size <= kMaxFileBytes, prefix, ": ", tooLarge(uint64_t(st.st_size)));
  std::ifstream in(path, std::ios::binary);
  SC_ARG(in, prefix, ": cannot be read (", std::strerror(errno), ")");
  std::ostringstream text;
  text << in.rdbuf();
  SC_ARG(!in.bad(), prefix, ": cannot be read (", std::strerror(errno), ")");
  auto t = Parser(prefix).parse(text.str());
  t->path = path;
  return t;
}

}  // namespace sc::model
