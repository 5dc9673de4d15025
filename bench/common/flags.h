// A table-driven command line: every flag is declared once (letter, long name,
// value name, help, setter), so the driver's shared flags and a tool's own
// flags go through one parser, one usage text and one error style.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

namespace scbench {

// Thrown for bad command lines, setup failures and failures during the run
// (fatal()); the driver prints it once, prefixed by the tool's name, and exits 2.
struct UsageError {
  std::string msg;
};

struct Flag {
  char letter = 0;    // short form; 0: long form only
  std::string name;   // long form without "--"; empty: short form only
  std::string value;  // the value's name in the usage ("<size>"); empty: the flag takes no value
  std::string help;   // lines after the first are indented under it
  // Applies the value. Null: the entry re-describes the shared flag with the
  // same letter (help, value name) and leaves what it does unchanged.
  std::function<void(const std::string&)> set;
  bool hidden = false;  // accepted but not listed (debug aids)
};

class FlagSet {
 public:
  // Adds f at the end; a flag with the same letter or long name is replaced in
  // place (or re-described, when f has no setter).
  void add(Flag f);
  // A heading printed in the usage before the flags added after it.
  void section(const std::string& title);
  // Drops the flags whose letter is not in `letters` (long-only flags stay).
  void keepOnly(const std::string& letters);
  void setHelp(char letter, const std::string& help);
  bool has(char letter) const;
  // Appends other's flags and headings after this set's (same replacement rule).
  void append(const FlagSet& other);

  // Parses argv[1..]; returns false when -h/--help was given. Throws UsageError.
  bool parse(int argc, char** argv);
  // True when the flag with this letter was on the command line.
  bool given(char letter) const { return given_.count(letter) != 0; }
  // "USAGE: ..." line, then one line per visible flag, then -h.
  std::string usage(const std::string& firstLine) const;

 private:
  struct Entry {
    Flag flag;
    std::string heading;  // non-empty: a usage heading, not a flag
  };
  std::vector<Entry> entries_;
  std::set<char> given_;
};

// Value parsers shared by all flags; each throws UsageError naming `what`.
// "64M" -> 67108864 (K, M, G are powers of 1024, as in nccl-tests).
size_t parseSize(const std::string& s, const char* what);
long parseInt(const std::string& s, const char* what, long lo, long hi);
double parseNumber(const std::string& s, const char* what, double lo, double hi);
// "a,b,,c" -> {a, b, c} (spaces dropped).
std::vector<std::string> splitList(const std::string& s);
// "64M" -> "64M", 1000 -> "1000": a size as the usage shows defaults.
std::string formatSize(size_t bytes);

}  // namespace scbench
