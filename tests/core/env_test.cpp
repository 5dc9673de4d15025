// The table of environment variables (core/env.h): complete, unique, read
// through env::get everywhere, an empty value as unset.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "core/env.h"

namespace {

namespace fs = std::filesystem;

TEST(Env, TableIsCompleteAndUnique) {
  size_t n = 0;
  const sc::env::Info* t = sc::env::table(&n);
  ASSERT_EQ(n, size_t(sc::env::Var::Count));
  std::set<std::string> names;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(size_t(t[i].var), i);
    EXPECT_EQ(std::string(t[i].name).rfind("SPARCOLL_", 0), 0u) << t[i].name;
    EXPECT_TRUE(names.insert(t[i].name).second) << "twice: " << t[i].name;
    for (const char* f : {t[i].kind, t[i].dflt, t[i].meaning, t[i].readBy}) EXPECT_TRUE(f && *f) << t[i].name;
    EXPECT_EQ(&sc::env::info(t[i].var), &t[i]);
  }
}

TEST(Env, EmptyCountsAsUnset) {
  const sc::env::Var v = sc::env::Var::NbrTheta;
  ::unsetenv(sc::env::name(v));
  EXPECT_EQ(sc::env::get(v), nullptr);
  ::setenv(sc::env::name(v), "", 1);
  EXPECT_EQ(sc::env::get(v), nullptr);
  ::setenv(sc::env::name(v), "3", 1);
  ASSERT_NE(sc::env::get(v), nullptr);
  EXPECT_STREQ(sc::env::get(v), "3");
  ::unsetenv(sc::env::name(v));
}

// Every row of the Markdown table is one variable's, in the table's order.
TEST(Env, MarkdownHasOneRowPerVariable) {
  size_t n = 0;
  const sc::env::Info* t = sc::env::table(&n);
  std::istringstream md(sc::env::markdown());
  std::string line;
  size_t row = 0;
  for (int i = 0; std::getline(md, line); ++i) {
    if (i < 2) continue;  // the header and its rule
    ASSERT_LT(row, n);
    EXPECT_EQ(line.rfind(std::string("| `") + t[row].name + "` |", 0), 0u) << line;
    ++row;
  }
  EXPECT_EQ(row, n);
}

// No source of the library reads a SPARCOLL_ variable past the table: a
// getenv in csrc/ or kernels/ outside core/env.cpp must name a variable that
// is not the library's (e.g. Open MPI's), as a literal.
TEST(Env, LibraryReadsItsVariablesThroughTheTable) {
  const std::regex call(R"(getenv\s*\(\s*([^)]*)\))");
  int files = 0;
  for (const char* dir : {"csrc", "kernels"}) {
    for (const auto& e : fs::recursive_directory_iterator(fs::path(SPARCOLL_SOURCE_DIR) / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".cu" && ext != ".cuh")) continue;
      if (e.path().filename() == "env.cpp" && e.path().parent_path().filename() == "core") continue;
      ++files;
      std::ifstream f(e.path());
      std::stringstream all;
      all << f.rdbuf();
      const std::string text = all.str();
      for (std::sregex_iterator m(text.begin(), text.end(), call), end; m != end; ++m) {
        const std::string arg = (*m)[1].str();
        const bool foreignLiteral = arg.size() > 2 && arg[0] == '"' && arg.rfind("\"SPARCOLL_", 0) != 0;
        EXPECT_TRUE(foreignLiteral) << e.path().string() << ": getenv(" << arg
                                    << ") — read the library's variables with sc::env::get (core/env.h)";
      }
    }
  }
  EXPECT_GT(files, 50);  // the tree was found
}

}  // namespace
