#pragma once
// Turning an in-flight Request into its fixed-size RequestRecord.
#include "engine/request.h"
#include "metrics/request_record.h"

namespace sl {

RequestRecord makeRecord(const Request& r, bool finished);

}  // namespace sl
