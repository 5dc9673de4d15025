// Topology files (topology/topology.h): the parser (scripts/cluster's rules and
// messages, version 1), the depth-first ring order and the paths between
// hosts. The creation steps are in setup.cpp.
#include "topology/topology.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/error.h"

namespace sc::topo {
namespace {

using json = nlohmann::json;
constexpr int kVersion = 1;
constexpr int kMaxHosts = 65536 - 3;  // 10.77.0.0/16 less network, broadcast and one spare, as scripts/cluster

std::string shown(const json& v) {
  std::string s = v.dump();
  return s.size() > 60 ? s.substr(0, 60) : s;
}

[[noreturn]] void bad(const std::string& msg) { SC_THROW(scInvalidArgument, msg); }

void checkKeys(const json& obj, const std::string& where, std::initializer_list<const char*> allowed,
               std::initializer_list<const char*> required = {}) {
  if (!obj.is_object()) bad(where + ": expected an object, got " + shown(obj));
  std::vector<std::string> names(allowed.begin(), allowed.end());
  std::sort(names.begin(), names.end());
  for (const auto& kv : obj.items())
    if (std::find(names.begin(), names.end(), kv.key()) == names.end()) {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      bad(where + ": unknown key \"" + kv.key() + "\" (allowed: " + list + ")");
    }
  for (const char* k : required)
    if (!obj.contains(k)) bad(where + ": missing key \"" + k + "\"");
}

bool isInt(const json& v) { return v.is_number_integer() || v.is_number_unsigned(); }

double parseRate(const json& v, const std::string& where) {
  double bits = 0;
  if (v.is_number() && !v.is_boolean()) {
    bits = v.get<double>();
  } else if (v.is_string()) {
    static const std::regex re(R"(\s*([0-9]+(?:\.[0-9]+)?)\s*([a-zA-Z]+)(/s)?\s*)");
    static const std::map<std::string, double> units = {
        {"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12}};
    std::smatch m;
    const std::string s = v.get<std::string>();
    std::string unit;
    if (std::regex_match(s, m, re)) {
      unit = m[2].str();
      std::transform(unit.begin(), unit.end(), unit.begin(), [](unsigned char ch) { return std::tolower(ch); });
    }
    if (unit.empty() || !units.count(unit))
      bad(where + ": rate " + v.dump() +
          " is not a rate like \"100mbit\", \"1gbit\", \"10Gbit/s\" (units: bit, kbit, mbit, gbit, tbit; decimal)");
    bits = std::stod(m[1].str()) * units.at(unit);
  } else {
    bad(where + ": rate must be a string like \"10gbit\" or a number of bit/s, not " + v.dump());
  }
  if (!(bits >= 8000)) bad(where + ": rate " + v.dump() + " is below 8kbit (or not positive)");
  return std::round(bits);
}

double parseDelay(const json& v, const std::string& where) {
  if (v.is_string()) {
    static const std::regex re(R"(\s*([0-9]+(?:\.[0-9]+)?)\s*([a-z]*)\s*)");
    static const std::map<std::string, double> units = {{"s", 1.0}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}};
    std::smatch m;
    const std::string s = v.get<std::string>();
    if (std::regex_match(s, m, re)) {
      const double x = std::stod(m[1].str());
      if (units.count(m[2].str())) return x * units.at(m[2].str());
      if (m[2].str().empty() && x == 0) return 0;
    }
  }
  bad(where + ": delay " + v.dump() + " is not a time like \"100us\", \"0.5ms\", \"2ms\"");
}

void parseSize(const json& v, const std::string& where) {
  if (isInt(v) && v.get<long long>() > 0) return;
  if (v.is_string()) {
    static const std::regex re(R"(\s*([0-9]+)\s*([a-zA-Z]*)\s*)");
    static const char* units[] = {"", "b", "k", "kb", "kib", "m", "mb", "mib"};
    std::smatch m;
    const std::string s = v.get<std::string>();
    if (std::regex_match(s, m, re)) {
      std::string u = m[2].str();
      std::transform(u.begin(), u.end(), u.begin(), [](unsigned char ch) { return std::tolower(ch); });
      for (const char* k : units)
        if (u == k && std::stoll(m[1].str()) > 0) return;
    }
  }
  bad(where + ": " + v.dump() + " is not a size in bytes like 65536 or \"64k\"");
}

Link parseLink(const json* obj, const std::string& where, const Link& base) {
  Link l = base;
  if (!obj || obj->is_null()) return l;
  checkKeys(*obj, where, {"rate", "delay", "burst"});
  if (obj->contains("rate")) l.rate = (*obj)["rate"].is_null() ? 0 : parseRate((*obj)["rate"], where + ".rate");
  if (obj->contains("delay")) l.delay = parseDelay((*obj)["delay"], where + ".delay");
  if (obj->contains("burst")) parseSize((*obj)["burst"], where + ".burst");
  return l;
}

std::string parseName(const json& v, const std::string& where) {
  static const std::regex re("^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$");
  if (!v.is_string() || !std::regex_match(v.get<std::string>(), re))
    bad(where + ": name " + v.dump() +
        " is not a host name label (letters, digits, '-', at most 63 characters, not starting or ending with '-')");
  return v.get<std::string>();
}

const json* get(const json& o, const char* k) {
  auto it = o.find(k);
  return it == o.end() ? nullptr : &*it;
}

Tree parseDoc(const json& doc) {
  Tree t;
  checkKeys(doc, "topology", {"version", "name", "description", "mtu", "defaults", "switches", "hosts"},
            {"version", "switches", "hosts"});
  const json& ver = doc["version"];
  if (!isInt(ver) || ver.get<long long>() != kVersion)
    bad("version: " + ver.dump() + " is not supported (this tool reads version 1)");
  for (const char* k : {"name", "description"})
    if (const json* v = get(doc, k); v && !v->is_string()) bad(std::string(k) + ": must be a string");
  if (const json* n = get(doc, "name")) t.name = n->get<std::string>();
  if (const json* m = get(doc, "mtu"))
    if (!isInt(*m) || m->get<long long>() < 576 || m->get<long long>() > 65000)
      bad("mtu: " + m->dump() + " must be an integer from 576 to 65000");
  static const json kEmpty = json::object();
  const json* defaults = get(doc, "defaults");
  if (!defaults) defaults = &kEmpty;
  checkKeys(*defaults, "defaults", {"host_link", "uplink", "slots"});
  const Link dHost = parseLink(get(*defaults, "host_link"), "defaults.host_link", Link{});
  const Link dUp = parseLink(get(*defaults, "uplink"), "defaults.uplink", Link{});
  int dSlots = 1;
  if (const json* s = get(*defaults, "slots")) {
    if (!isInt(*s) || s->get<long long>() < 1) bad("defaults.slots: " + s->dump() + " must be a positive integer");
    dSlots = int(std::min<long long>(s->get<long long>(), INT_MAX));
  }
  const json& sw = doc["switches"];
  const json& hs = doc["hosts"];
  if (!sw.is_array() || sw.empty()) bad("switches: must be a non-empty list");
  if (!hs.is_array() || hs.empty()) bad("hosts: must be a non-empty list");
  std::map<std::string, std::string> names;  // name -> where it was defined
  std::map<std::string, int> swIndex;
  std::vector<std::string> parentName;
  for (size_t i = 0; i < sw.size(); ++i) {
    const json& s = sw[i];
    std::string where = cat("switches[", i, "]");
    if (s.is_object() && s.contains("name") && s["name"].is_string())
      where = "switch \"" + s["name"].get<std::string>() + "\" (" + where + ")";
    checkKeys(s, where, {"name", "parent", "uplink"}, {"name"});
    const std::string name = parseName(s["name"], where + ".name");
    where = "switch \"" + name + "\"";
    if (names.count(name)) bad(where + ": the name is used twice (also " + names[name] + ")");
    names[name] = where;
    const json* parent = get(s, "parent");
    if (parent && !parent->is_null() && !parent->is_string()) bad(where + ".parent: must be a switch name or null");
    const bool hasParent = parent && parent->is_string();
    if (!hasParent && s.contains("uplink")) bad(where + ": has an uplink but no parent");
    swIndex[name] = int(i);
    t.switchName.push_back(name);
    parentName.push_back(hasParent ? parent->get<std::string>() : std::string());
    t.uplink.push_back(hasParent ? parseLink(get(s, "uplink"), where + ".uplink", dUp) : Link{});
  }
  const int S = int(sw.size());
  t.parent.assign(size_t(S), -1);
  std::vector<std::string> roots;
  for (int i = 0; i < S; ++i) {
    if (parentName[size_t(i)].empty()) roots.push_back(t.switchName[size_t(i)]);
    else t.parent[size_t(i)] = swIndex.count(parentName[size_t(i)]) ? swIndex[parentName[size_t(i)]] : -2;
  }
  // Per switch, in file order as scripts/cluster: its parent exists, then no cycle above it.
  for (int i = 0; i < S; ++i) {
    if (t.parent[size_t(i)] == -2)
      bad("switch \"" + t.switchName[size_t(i)] + "\".parent: no switch named \"" + parentName[size_t(i)] + "\"");
    std::vector<int> seen{i};
    for (int cur = t.parent[size_t(i)]; cur >= 0; cur = t.parent[size_t(cur)]) {  // stops at -1 and -2
      auto it = std::find(seen.begin(), seen.end(), cur);
      if (it != seen.end()) {
        std::string cyc;
        for (; it != seen.end(); ++it) cyc += t.switchName[size_t(*it)] + " -> ";
        bad("switch \"" + t.switchName[size_t(i)] + "\": parents form a cycle: " + cyc + t.switchName[size_t(cur)]);
      }
      seen.push_back(cur);
    }
  }
  if (roots.size() != 1) {
    std::string list;
    for (const auto& r : roots) list += (list.empty() ? "" : ", ") + r;
    bad(cat("switches: there must be exactly one root switch (without parent), found ", roots.size()) +
        (list.empty() ? "" : ": " + list));
  }
  t.root = swIndex[roots[0]];
  for (size_t i = 0; i < hs.size(); ++i) {
    const json& h = hs[i];
    std::string where = cat("hosts[", i, "]");
    if (h.is_object() && h.contains("name") && h["name"].is_string())
      where = "host \"" + h["name"].get<std::string>() + "\" (" + where + ")";
    checkKeys(h, where, {"name", "switch", "link", "slots"}, {"name", "switch"});
    const std::string name = parseName(h["name"], where + ".name");
    where = "host \"" + name + "\"";
    if (names.count(name)) bad(where + ": the name is used twice (also " + names[name] + ")");
    names[name] = where;
    const json& s = h["switch"];
    if (!s.is_string() || !swIndex.count(s.get<std::string>())) bad(where + ".switch: no switch named " + s.dump());
    int slots = dSlots;
    if (const json* v = get(h, "slots")) {
      if (!isInt(*v) || v->get<long long>() < 1) bad(where + ".slots: " + v->dump() + " must be a positive integer");
      slots = int(std::min<long long>(v->get<long long>(), INT_MAX));
    }
    t.hostName.push_back(name);
    t.hostSwitch.push_back(swIndex[s.get<std::string>()]);
    t.hostSlots.push_back(slots);
    t.hostLink.push_back(parseLink(get(h, "link"), where + ".link", dHost));
  }
  if (int(hs.size()) > kMaxHosts) bad(cat("hosts: at most ", kMaxHosts, " hosts"));
  // Depth-first: a switch's own hosts (file order), then its children (file order).
  t.depth.assign(size_t(S), 0);
  t.switchDfs.assign(size_t(S), -1);
  t.hostDfs.assign(t.hostName.size(), -1);
  int swPos = 0;
  std::function<void(int, int)> walk = [&](int s, int d) {
    t.depth[size_t(s)] = d;
    t.switchDfs[size_t(s)] = swPos++;
    for (int h = 0; h < t.hosts(); ++h)
      if (t.hostSwitch[size_t(h)] == s) {
        t.hostDfs[size_t(h)] = int(t.dfsHost.size());
        t.dfsHost.push_back(h);
      }
    for (int c = 0; c < S; ++c)
      if (t.parent[size_t(c)] == s) walk(c, d + 1);
  };
  walk(t.root, 0);
  return t;
}

}  // namespace

Tree parse(const std::string& text, const std::string& path) {
  const std::string prefix = "topology file '" + path + "': ";
  json doc;
  try {
    doc = json::parse(text);
  } catch (const json::exception& e) {
    std::string what = e.what();
    if (const size_t p = what.find("] "); what.rfind("[json.", 0) == 0 && p != std::string::npos)
      what = what.substr(p + 2);
    SC_THROW(scInvalidArgument, prefix, "not JSON: ", what);
  }
  try {
    return parseDoc(doc);
  } catch (const Error& e) {
    SC_THROW(scInvalidArgument, prefix, std::string(e.what()));
  } catch (const json::exception& e) {  // a type the checks above did not expect
    SC_THROW(scInvalidArgument, prefix, e.what());
  }
}

std::vector<int> Tree::path(int a, int b) const {
  std::vector<int> up, down;
  if (a == b) return up;
  up.push_back(hostUp(a));
  down.push_back(hostDown(b));
  int sa = hostSwitch[size_t(a)], sb = hostSwitch[size_t(b)];
  while (sa != sb) {
    if (depth[size_t(sa)] >= depth[size_t(sb)]) {
      up.push_back(switchUp(sa));
      sa = parent[size_t(sa)];
    } else {
      down.push_back(switchDown(sb));
      sb = parent[size_t(sb)];
    }
  }
  up.insert(up.end(), down.rbegin(), down.rend());
  return up;
}

int Tree::findHost(const std::string& m) const {
  for (int h = 0; h < hosts(); ++h)
    if (hostName[size_t(h)] == m) return h;
  unsigned a, b, c, d;
  char tail;
  if (std::sscanf(m.c_str(), "%u.%u.%u.%u%c", &a, &b, &c, &d, &tail) == 4 && a == 10 && b == 77 && c <= 255 &&
      d <= 255) {
    const int i = int(c * 256 + d) - 1;
    if (i >= 0 && i < hosts()) return i;
  }
  if (const size_t dot = m.find('.'); dot != std::string::npos && dot > 0) {
    const std::string label = m.substr(0, dot);
    for (int h = 0; h < hosts(); ++h)
      if (hostName[size_t(h)] == label) return h;
  }
  return -1;
}

double Tree::linkRate(int link) const {
  const int H = hosts();
  if (link < 2 * H) return hostLink[size_t(link / 2)].rate;
  return uplink[size_t((link - 2 * H) / 2)].rate;
}

std::vector<int> ringOrder(const Tree& t, const std::vector<int>& hostOf) {
  std::vector<int> order(hostOf.size());
  for (size_t r = 0; r < order.size(); ++r) order[r] = int(r);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) {
    return t.hostDfs[size_t(hostOf[size_t(x)])] < t.hostDfs[size_t(hostOf[size_t(y)])];
  });
  return order;
}

}  // namespace sc::topo
