// Standalone driver for builds without libFuzzer (gcc, the ASan CI build):
// runs LLVMFuzzerTestOneInput once over every file of the directories (or
// files) given, so the checked-in corpus is a regression test in every build.
// A contract violation aborts inside the target, which fails the test.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace fs = std::filesystem;

static void runFile(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Copied to an exact-size buffer so that an overread is an ASan error, as under libFuzzer.
  std::vector<uint8_t> exact(bytes.begin(), bytes.end());
  LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
}

int main(int argc, char** argv) {
  size_t count = 0;
  for (int i = 1; i < argc; ++i) {
    const fs::path arg(argv[i]);
    if (fs::is_directory(arg)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(arg))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());  // a stable order makes a failure reproducible
      for (const auto& f : files) {
        runFile(f);
        ++count;
      }
    } else if (fs::is_regular_file(arg)) {
      runFile(arg);
      ++count;
    } else {
      std::fprintf(stderr, "replay: %s: no such file or directory\n", argv[i]);
      return 2;
    }
  }
  if (count == 0) {
    std::fprintf(stderr, "replay: no inputs (an empty corpus tests nothing)\n");
    return 2;
  }
  std::printf("replay: %zu inputs ran without a contract violation\n", count);
  return 0;
}
