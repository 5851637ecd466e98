#pragma once
// The serving front end (docs/engine.md "Serving front end"): what a request
// spends outside the engine's scheduler -- the client's HTTP request to the
// API server, tokenisation there (a FIFO queue over `api_servers` workers),
// the hand-over to the engine core; on the way back, each output chunk's
// detokenisation and streaming to the client -- and how the engine's step
// loop overlaps its CPU work with the GPU (`async_scheduling`: vLLM V1's
// --async-scheduling, SGLang's overlap scheduler). Every field at zero
// (`async_scheduling` false) is "off": the engine sees requests at the
// client's send time and the client sees tokens when the engine emits them,
// as before the front end existed. An engine-generation preset
// (resources/engines/) may carry one; `cluster.frontend` overrides fields.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "util/time.h"

namespace sl {

struct FrontEndSpec {
  double http_us = 0;               ///< client → API server, request parsed (one way)
  double tokenize_us = 0;           ///< per request at the API server (fixed part)
  double tokenize_us_per_ktok = 0;  ///< per 1000 prompt tokens
  int api_servers = 1;              ///< parallel API-server workers (tokenisation is FIFO over them)
  double handoff_us = 0;            ///< API server → engine core (IPC)
  double stream_us = 0;             ///< engine core → client, per output chunk (IPC, SSE, network)
  double detokenize_us_per_seq = 0; ///< output processing per sequence of the emitting step
  bool async_scheduling = false;    ///< the step's CPU work overlaps the GPU (cost model)

  /// Any per-request time (the request path is simulated as its own stage).
  bool requestPathOn() const {
    return http_us > 0 || tokenize_us > 0 || tokenize_us_per_ktok > 0 || handoff_us > 0 || stream_us > 0 ||
           detokenize_us_per_seq > 0;
  }
  bool on() const { return requestPathOn() || async_scheduling; }

  /// Tokenisation service time of a prompt of `tokens` tokens.
  SimTime tokenizeNs(std::int64_t tokens) const {
    return secondsToNs((tokenize_us + tokenize_us_per_ktok * static_cast<double>(tokens) / 1000.0) * 1e-6);
  }
  /// Delay from the engine's emission of a token to the client, for a step
  /// that ran `seqs` sequences.
  SimTime outputNs(std::int64_t seqs) const {
    return secondsToNs((stream_us + detokenize_us_per_seq * static_cast<double>(seqs)) * 1e-6);
  }

  /// Applies the keys of `j` (an object) on top of `base`; InputError naming
  /// "<where>.<key>" for an unknown key (with a did-you-mean) or a bad value
  /// (times finite and >= 0, api_servers an integer in [1, 4096],
  /// async_scheduling a boolean).
  static FrontEndSpec fromJson(const nlohmann::json& j, std::string_view where, const FrontEndSpec& base);
  /// Every key, canonical (alphabetical) order.
  nlohmann::json toJson() const;
  /// The JSON keys in declaration order.
  static const std::vector<std::string>& keys();
};

}  // namespace sl
