#pragma once
// The synthetic sample traces committed under samples/traces/, generated
// deterministically from fixed seeds (gen_sample_traces writes them; a test
// checks the committed files are byte-identical to a fresh generation).
#include <string>
#include <vector>

namespace sl::testing {

struct SampleTrace {
  std::string file;         // name under samples/traces/
  std::string description;  // how it is made
};

std::vector<SampleTrace> sampleTraces();
/// The CSV text of the named sample trace.
std::string sampleTraceCsv(const std::string& file);

}  // namespace sl::testing
