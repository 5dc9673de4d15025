#include "common/flags.h"

#include <getopt.h>

#include <cerrno>
#include <cstdlib>
#include <sstream>

namespace scbench {

namespace {

[[noreturn]] void usageError(const std::string& m) { throw UsageError{m}; }

bool sameFlag(const Flag& a, const Flag& b) {
  return (a.letter && a.letter == b.letter) || (!a.name.empty() && a.name == b.name);
}

}  // namespace

void FlagSet::add(Flag f) {
  if (f.letter == 'h' || f.name == "help") usageError("internal: -h/--help is reserved for the usage");
  for (auto& e : entries_)
    if (e.heading.empty() && sameFlag(e.flag, f)) {
      if (f.set) {
        e.flag = std::move(f);
        return;
      }
      e.flag.help = f.help;  // a re-description: same setter, new words
      if (!f.value.empty()) e.flag.value = f.value;
      return;
    }
  entries_.push_back({std::move(f), ""});  // without a setter it waits for append() to meet its flag
}

void FlagSet::section(const std::string& title) { entries_.push_back({Flag{}, title}); }

void FlagSet::keepOnly(const std::string& letters) {
  std::vector<Entry> kept;
  for (auto& e : entries_)
    if (!e.heading.empty() || !e.flag.letter || letters.find(e.flag.letter) != std::string::npos)
      kept.push_back(std::move(e));
  entries_ = std::move(kept);
}

void FlagSet::setHelp(char letter, const std::string& help) {
  for (auto& e : entries_)
    if (e.heading.empty() && e.flag.letter == letter) e.flag.help = help;
}

bool FlagSet::has(char letter) const {
  for (const auto& e : entries_)
    if (e.heading.empty() && e.flag.letter == letter) return true;
  return false;
}

void FlagSet::append(const FlagSet& other) {
  for (const auto& e : other.entries_) {
    if (e.heading.empty()) add(e.flag);
    else section(e.heading);
  }
}

bool FlagSet::parse(int argc, char** argv) {
  std::string shortopts = ":h";
  std::vector<option> longopts;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Flag& f = entries_[i].flag;
    if (!entries_[i].heading.empty() || !f.set) continue;
    const int arg = f.value.empty() ? no_argument : required_argument;
    if (f.letter) shortopts += std::string(1, f.letter) + (arg == required_argument ? ":" : "");
    if (!f.name.empty()) longopts.push_back({f.name.c_str(), arg, nullptr, f.letter ? f.letter : int(1000 + i)});
  }
  longopts.push_back({"help", no_argument, nullptr, 'h'});
  longopts.push_back({nullptr, 0, nullptr, 0});

  optind = 1;
  opterr = 0;
  int c;
  while ((c = getopt_long(argc, argv, shortopts.c_str(), longopts.data(), nullptr)) != -1) {
    if (c == 'h') return false;
    if (c == ':') usageError(std::string("option '") + argv[optind - 1] + "' needs a value (see -h)");
    const Flag* hit = nullptr;
    for (size_t i = 0; i < entries_.size() && !hit; ++i)
      if (entries_[i].heading.empty() && entries_[i].flag.set &&
          (entries_[i].flag.letter ? entries_[i].flag.letter == c : int(1000 + i) == c))
        hit = &entries_[i].flag;
    if (!hit) {
      const std::string what = optopt > 0 && optopt < 128     ? std::string("-") + char(optopt)
                               : optind > 0 && optind <= argc ? argv[optind - 1]
                                                              : "?";
      usageError("unknown option '" + what + "' (see -h)");
    }
    if (hit->letter) given_.insert(hit->letter);
    hit->set(optarg ? optarg : "");
  }
  if (optind < argc) usageError(std::string("unexpected argument '") + argv[optind] + "' (see -h)");
  return true;
}

std::string FlagSet::usage(const std::string& firstLine) const {
  std::ostringstream os;
  os << firstLine << '\n';
  auto line = [&](const Flag& f) {
    std::string left = "  ";
    if (f.letter) left += std::string("-") + f.letter + (f.name.empty() ? "" : ",");
    if (!f.name.empty()) left += "--" + f.name;
    if (!f.value.empty()) left += " " + f.value;
    if (f.help.empty()) {
      os << left << '\n';
      return;
    }
    left += std::string(left.size() < 29 ? 30 - left.size() : 2, ' ');
    std::istringstream help(f.help);
    std::string l;
    for (bool first = true; std::getline(help, l); first = false)
      os << (first ? left : std::string(30, ' ')) << l << '\n';
  };
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = entries_[i];
    auto listed = [](const Entry& x) { return x.heading.empty() && x.flag.set && !x.flag.hidden; };
    if (e.heading.empty()) {
      if (listed(e)) line(e.flag);
      continue;
    }
    // A heading is shown only above flags that are listed.
    for (size_t j = i + 1; j < entries_.size() && entries_[j].heading.empty(); ++j)
      if (listed(entries_[j])) {
        os << e.heading << '\n';
        break;
      }
  }
  line(Flag{'h', "help", "", "", nullptr, false});
  return os.str();
}

size_t parseSize(const std::string& s, const char* what) {
  // nccl-tests' parsesize: a number and an optional K/M/G suffix (powers of 1024).
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  double unit = 1;
  if (end && *end) {
    switch (*end) {
      case 'k':
      case 'K': unit = 1024.0; break;
      case 'm':
      case 'M': unit = 1024.0 * 1024; break;
      case 'g':
      case 'G': unit = 1024.0 * 1024 * 1024; break;
      default: unit = -1;
    }
    if (end[1] != '\0' && !(end[1] == 'B' && end[2] == '\0')) unit = -1;
  }
  if (errno || end == s.c_str() || unit < 0 || !(v >= 0) || v * unit > 1e18)
    usageError("invalid size '" + s + "' for " + what + " (examples: 8, 1K, 64M, 1G)");
  return size_t(v * unit);
}

long parseInt(const std::string& s, const char* what, long lo, long hi) {
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(s.c_str(), &end, 0);
  if (errno || !end || *end || end == s.c_str() || v < lo || v > hi) {
    std::ostringstream os;
    os << "invalid value '" << s << "' for " << what << " (expected an integer in [" << lo << ", " << hi << "])";
    usageError(os.str());
  }
  return v;
}

double parseNumber(const std::string& s, const char* what, double lo, double hi) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(s.c_str(), &end);
  if (errno || !end || *end || end == s.c_str() || !(v >= lo && v <= hi)) {
    std::ostringstream os;
    os << "invalid value '" << s << "' for " << what << " (expected a number in [" << lo << ", " << hi << "])";
    usageError(os.str());
  }
  return v;
}

std::vector<std::string> splitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s + ",") {
    if (ch == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else if (ch != ' ') {
      cur += ch;
    }
  }
  return out;
}

std::string formatSize(size_t b) {
  const char* units = "GMK";
  for (int i = 0; i < 3; ++i) {
    const size_t u = size_t(1) << (10 * (3 - i));
    if (b && b % u == 0) return std::to_string(b / u) + units[i];
  }
  return std::to_string(b);
}

}  // namespace scbench
