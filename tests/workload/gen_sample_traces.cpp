// Writes the synthetic sample traces into a folder (default samples/traces).
//   gen_sample_traces [DIR]
#include <fstream>
#include <iostream>

#include "sample_traces.h"

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "samples/traces";
  for (const auto& t : sl::testing::sampleTraces()) {
    const std::string path = dir + "/" + t.file;
    std::ofstream out(path, std::ios::binary);
    if (!out) {
      std::cerr << "cannot write " << path << "\n";
      return 1;
    }
    out << sl::testing::sampleTraceCsv(t.file);
    std::cout << path << ": " << t.description << "\n";
  }
  return 0;
}
