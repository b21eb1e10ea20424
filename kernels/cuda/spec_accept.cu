// Kernel of spec_accept.h: one thread per sequence (a draft is a handful of tokens).
#include "kernels/cuda/common.cuh"
#include "kernels/cuda/spec_accept.h"

namespace di::kernels::cuda {
namespace {

__device__ bool drawn_ok(const SampleResultDesc& r, int64_t vocab) {
  return r.status == kSampleOk && r.token >= 0 && r.token < vocab;
}

__global__ void accept_greedy_drafts_kernel(TokenBatch b, int32_t num_seqs, const SampleResultDesc* drawn,
                                            int64_t vocab, int32_t* accepted, int32_t* next_ids,
                                            SampleRowDesc* draft_rows) {
  const int32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= num_seqs) return;
  const int32_t row0 = b.seq_row0[s], drafts = b.seq_end[s] - b.seq_start[s] - 1;
  int32_t a = 0;
  while (a < drafts && drawn_ok(drawn[row0 + a], vocab) && drawn[row0 + a].token == b.ids[row0 + a + 1]) ++a;
  accepted[s] = a;
  for (int32_t j = 0; j <= drafts; ++j) {
    const SampleResultDesc& r = drawn[row0 + j];
    next_ids[row0 + j] = drawn_ok(r, vocab) ? r.token : 0;
  }
  draft_rows[s].logits_row = row0 + a;
}

}  // namespace

Status accept_greedy_drafts(const TokenBatch& verify, int32_t num_seqs, const SampleResultDesc* drawn, int64_t vocab,
                            int32_t* accepted, int32_t* next_ids, SampleRowDesc* draft_rows, void* stream) {
  if (num_seqs <= 0) return Status::ok();
  if (num_seqs > verify.num_seqs) return Status::invalid_argument("accept_greedy_drafts: more sequences than the step's");
  const int threads = 128, blocks = (num_seqs + threads - 1) / threads;
  accept_greedy_drafts_kernel<<<blocks, threads, 0, as_stream(stream)>>>(verify, num_seqs, drawn, vocab, accepted,
                                                                          next_ids, draft_rows);
  return launch_status("accept_greedy_drafts");
}

}  // namespace di::kernels::cuda
