// The README's C++ example: RAII communicators, errors as exceptions.
#include <iostream>
#include <thread>
#include <vector>

#include <sparcoll/sparcoll.hpp>

int main() {
  auto comms = sparcoll::Comm::local(3);
  std::vector<std::thread> threads;
  std::vector<int> ok(3, 0);
  for (int r = 0; r < 3; ++r)
    threads.emplace_back([&, r] {
      std::vector<int64_t> x(10, r + 1), y(10);
      comms[r].allReduce(x.data(), y.data(), x.size(), scMax);  // dtype deduced
      ok[r] = y[0] == 3;
    });
  for (auto& t : threads) t.join();
  try {
    comms[0].allReduce<float>(nullptr, nullptr, 5);  // bad input: NULL buffers
    return 1;
  } catch (const sparcoll::Error& e) {
    std::cout << "C++ example: caught expected error (" << e.code() << "): " << e.what() << "\n";
  }
  std::cout << "C++ example: " << (ok[0] && ok[1] && ok[2] ? "ok" : "FAILED") << "\n";
  return ok[0] && ok[1] && ok[2] ? 0 : 1;
}
