// The tools' tables: columns declared once, header and rows laid out from
// them, so a table's format lives in one list. Text tables follow printf's
// "%*s" (a wider cell pushes the rest right); markdown tables are for files
// that other tools render.
#pragma once

#include <string>
#include <vector>

namespace scbench {

struct Column {
  std::string title;
  int width = 0;      // minimum width of a cell
  int gap = 1;        // spaces before the cell (none before the first column)
  bool left = false;  // left-aligned; default right-aligned
  int titleGap = -1;  // the title's gap where it differs (-1: gap): a title one wider
                      // than its column takes a space of the gap, as nccl-tests' "#wrong"
};

class Table {
 public:
  explicit Table(std::vector<Column> columns) : cols_(std::move(columns)) {}

  // One line of cells (fewer cells than columns: the first ones only).
  // `prefix` ("#", "# ") starts the line and takes its width from the first column.
  std::string row(const std::vector<std::string>& cells, const std::string& prefix = "") const;
  // The titles as one line, laid out like row().
  std::string titles(const std::string& prefix = "") const;

  // Markdown: "| a | b |" lines and the "|---|---|" rule under the titles.
  static std::string markdownRow(const std::vector<std::string>& cells);
  std::string markdownHeader() const;

 private:
  std::string layout(const std::vector<std::string>& cells, const std::string& prefix, bool titles) const;
  std::vector<Column> cols_;
};

// printf into a std::string, for cells.
std::string fmt(const char* format, ...) __attribute__((format(printf, 1, 2)));

}  // namespace scbench
