// RendezvousFile: how the ranks of one launch agree on a small blob (NCCL's unique id) through a
// file every rank can see. Rank 0 publishes it atomically (tmp + rename); the others wait for it
// with a timeout. Knows nothing of NCCL or GPUs, so it is tested on the CPU with real processes.
#pragma once

#include <cstdint>
#include <string>

#include "base/status.h"

namespace di::engine::parallel {

// Writes `blob` to `path` so that a reader sees all of it or nothing: a temporary file in the
// same folder, then rename(2). Refuses a `path` that already exists: it is a previous launch's
// id (a crashed one), and ranks that read it would wait for peers that never come.
Status publish_rendezvous_file(const std::string& path, const std::string& blob);

// Waits until `path` holds `size` bytes and returns them. Polls every few milliseconds; after
// `timeout_ms` it fails with an error naming the path and the rank expected to write it.
Result<std::string> wait_for_rendezvous_file(const std::string& path, int64_t size, int64_t timeout_ms);

// Removes the published file once every rank has read it (rank 0, after the group formed), so
// the next launch may reuse the path. A missing file is not an error.
Status remove_rendezvous_file(const std::string& path);

}  // namespace di::engine::parallel
