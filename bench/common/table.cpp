#include "common/table.h"

#include <cstdarg>
#include <cstdio>

namespace scbench {

namespace {
std::string pad(const std::string& s, int width, bool left) {
  if (int(s.size()) >= width) return s;
  const std::string fill(size_t(width) - s.size(), ' ');
  return left ? s + fill : fill + s;
}
}  // namespace

std::string Table::layout(const std::vector<std::string>& cells, const std::string& prefix, bool titles) const {
  std::string line = prefix;
  for (size_t i = 0; i < cells.size() && i < cols_.size(); ++i) {
    const Column& c = cols_[i];
    if (i == 0) {
      line += pad(cells[i], c.width - int(prefix.size()), c.left);
      continue;
    }
    const int gap = titles && c.titleGap >= 0 ? c.titleGap : c.gap;
    line += std::string(size_t(gap), ' ') + pad(cells[i], c.width + c.gap - gap, c.left);
  }
  return line;
}

std::string Table::row(const std::vector<std::string>& cells, const std::string& prefix) const {
  return layout(cells, prefix, false);
}

std::string Table::titles(const std::string& prefix) const {
  std::vector<std::string> t;
  for (const auto& c : cols_) t.push_back(c.title);
  return layout(t, prefix, true);
}

std::string Table::markdownRow(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const auto& c : cells) line += " " + c + " |";
  return line;
}

std::string Table::markdownHeader() const {
  std::vector<std::string> t;
  std::string rule = "|";
  for (const auto& c : cols_) {
    t.push_back(c.title);
    rule += "---|";
  }
  return markdownRow(t) + "\n" + rule;
}

std::string fmt(const char* format, ...) {
  char buf[256];
  va_list ap;
  va_start(ap, format);
  const int n = std::vsnprintf(buf, sizeof buf, format, ap);
  va_end(ap);
  if (n < int(sizeof buf)) return std::string(buf, n > 0 ? size_t(n) : 0);
  std::string big(size_t(n) + 1, '\0');
  va_start(ap, format);
  std::vsnprintf(&big[0], big.size(), format, ap);
  va_end(ap);
  big.resize(size_t(n));
  return big;
}

}  // namespace scbench
