// Replays a fuzz target's corpus without libFuzzer, so the committed inputs
// (seeds and regression cases) run in every CTest run, not only in the clang
// fuzz stage:  fuzz_replay_<target> DIR...
// Each regular file under DIR is handed to LLVMFuzzerTestOneInput once, in
// name order. A finding crashes the process (__builtin_trap, an escaping
// exception, a sanitizer report) and CTest reports the test as failed; the
// name of the input is printed first so the failure says which one.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i)
    for (const auto& e : fs::recursive_directory_iterator(argv[i]))
      if (e.is_regular_file()) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::fprintf(stderr, "no corpus files\n");
    return 1;
  }
  for (const fs::path& f : files) {
    std::printf("%s\n", f.string().c_str());
    std::fflush(stdout);
    std::ifstream in(f, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("%zu inputs replayed\n", files.size());
  return 0;
}
