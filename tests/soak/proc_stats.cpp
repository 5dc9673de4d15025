#include "proc_stats.h"

#include <dirent.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
#include <malloc.h>
#define SOAK_HAVE_MALLINFO2 1
#endif

namespace soak {

long rssKiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof line, f))
    if (std::strncmp(line, "VmRSS:", 6) == 0) {
      kib = std::strtol(line + 6, nullptr, 10);
      break;
    }
  std::fclose(f);
  return kib;
}

int openFds() {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (dirent* e = readdir(d))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n - 1;  // the descriptor opendir itself holds
}

long long heapInUse() {
#ifdef SOAK_HAVE_MALLINFO2
  const struct mallinfo2 mi = mallinfo2();
  // uordblks: chunks in use from the arenas; hblkhd: mmapped chunks.
  const long long used = (long long)(mi.uordblks + mi.hblkhd);
  return used > 0 ? used : -1;
#else
  return -1;
#endif
}

}  // namespace soak
