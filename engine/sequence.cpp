// Sequence helpers.
#include "engine/sequence.h"

namespace di::engine {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::kNone: return "none";
    case FinishReason::kStop: return "stop";
    case FinishReason::kLength: return "length";
    case FinishReason::kStopSequence: return "stop_sequence";
    case FinishReason::kCancelled: return "cancelled";
    case FinishReason::kError: return "error";
  }
  return "unknown";
}

}  // namespace di::engine
