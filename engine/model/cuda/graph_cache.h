// GraphCache: the CUDA graphs a model has captured, by a key of whatever decides their kernels'
// arguments (row count, context bucket, buffer addresses): replayed when a step's key is known,
// captured from the model's own launches when it is not. At most a fixed number are kept (all are
// dropped when it is reached). Destroy it before the stream it captured on. CUDA builds only.
#pragma once

#ifdef DI_WITH_CUDA

#include <cstdint>
#include <functional>
#include <map>
#include <vector>

#include "base/status.h"

namespace di::engine::cuda {

class GraphCache {
 public:
  explicit GraphCache(size_t max_graphs = 64) : max_graphs_(max_graphs) {}
  ~GraphCache() { clear(); }
  GraphCache(const GraphCache&) = delete;
  GraphCache& operator=(const GraphCache&) = delete;

  // Drops every graph (they point into buffers about to be replaced).
  void clear();
  // Replays the graph of `key` on `stream`, first capturing what `record` launches on it when
  // there is none.
  Status launch(const std::vector<int64_t>& key, void* stream, const std::function<Status()>& record);

 private:
  size_t max_graphs_;
  std::map<std::vector<int64_t>, void*> graphs_;  // cudaGraphExec_t
};

}  // namespace di::engine::cuda

#endif  // DI_WITH_CUDA
