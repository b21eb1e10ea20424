// Greedy verification of a speculative decode step on the device: each sequence fed its last
// token and then its draft, one row each; the target's greedy draws of those rows decide the
// longest agreeing prefix here, so the draft layer's pass can follow on the stream without the
// host. Host-only header.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "kernels/cuda/sampling.h"
#include "kernels/cuda/token_batch.h"

namespace di::kernels::cuda {

// For each sequence s < num_seqs of `verify` (rows seq_row0[s] .. + seq_end[s] - seq_start[s],
// the first its last committed token, the others its draft tokens in order) with drawn[r] the
// target's draw at row r:
//   accepted[s] = the number of leading drafts equal to the draw of the row before them (a draw
//                 that failed, or gave a token outside [0, vocab), ends the prefix);
//   next_ids[r] = drawn[r]'s token (0 where that draw failed): the token after row r's position
//                 as far as the draft layer is concerned (right for every row up to the accepted
//                 prefix's end, the rows after it are rolled back);
//   draft_rows[s].logits_row = seq_row0[s] + accepted[s]: the draft layer's row of the sequence's
//                 last known position, whose draw is its next draft.
// All pointers are device memory; `stream` is a cudaStream_t.
Status accept_greedy_drafts(const TokenBatch& verify, int32_t num_seqs, const SampleResultDesc* drawn, int64_t vocab,
                            int32_t* accepted, int32_t* next_ids, SampleRowDesc* draft_rows, void* stream);

}  // namespace di::kernels::cuda
