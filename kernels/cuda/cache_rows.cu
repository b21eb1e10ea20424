// write_cache_rows: see cache_rows.h. One block per row; rows are independent entries.
#include "kernels/cuda/cache_rows.h"
#include "kernels/cuda/common.cuh"

namespace di::kernels::cuda {
namespace {

__global__ void write_rows_kernel(const float* src, int64_t src_stride, int64_t cols, CacheView view, int32_t layer,
                                  int64_t first_index, int64_t ring, int64_t byte_offset) {
  pdl_sync();
  int64_t e = first_index + blockIdx.x;
  if (ring > 0) e %= ring;
  float* dst = reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(cache_entry(view, layer, e)) + byte_offset);
  const float* s = src + blockIdx.x * src_stride;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = s[c];
}

template <typename Dst>
__global__ void write_ring_rows_kernel(TokenBatch b, const float* src, int64_t src_stride, int64_t cols,
                                       int32_t group, int32_t layer, int64_t ring, int64_t byte_offset) {
  pdl_sync();
  const int64_t row = blockIdx.x;
  const int32_t seq = b.seq[row];
  if (seq < 0) return;
  const int64_t p = b.pos[row];
  if (p < b.seq_end[seq] - ring) return;
  Dst* dst = reinterpret_cast<Dst*>(reinterpret_cast<uint8_t*>(cache_entry(seq_view(b, seq, group), layer, p % ring)) +
                                    byte_offset);
  const float* s = src + row * src_stride;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) dst[c] = from_f32<Dst>(s[c]);
}

}  // namespace

Status write_ring_rows_varlen(const TokenBatch& b, const float* src, int64_t src_stride, int64_t cols, int32_t group,
                              int32_t layer, int64_t ring, int64_t byte_offset, void* stream, DType cache_dtype) {
  if (b.num_tokens <= 0) return Status::ok();
  if (ring <= 0 || byte_offset % 4) return Status::invalid_argument("write_ring_rows_varlen: ring > 0, aligned offset");
  if (cache_dtype == DType::kF32)
    launch_pdl(write_ring_rows_kernel<float>, b.num_tokens, 256, 0, as_stream(stream), b, src, src_stride, cols, group, layer,
                                                                               ring, byte_offset);
  else
    launch_pdl(write_ring_rows_kernel<__nv_bfloat16>, b.num_tokens, 256, 0, as_stream(stream), b, src, src_stride, cols, group,
                                                                                       layer, ring, byte_offset);
  return launch_status("write_ring_rows_varlen");
}

Status write_cache_rows(const float* src, int64_t src_stride, int64_t rows, int64_t cols, const CacheView& view,
                        int32_t layer, int64_t first_index, int64_t ring, int64_t byte_offset, void* stream) {
  if (rows <= 0) return Status::ok();
  if (byte_offset % 4 || byte_offset + cols * 4 > view.entry_bytes)
    return Status::invalid_argument("write_cache_rows: " + std::to_string(cols) + " floats at byte " +
                                    std::to_string(byte_offset) + " do not fit an entry of " +
                                    std::to_string(view.entry_bytes) + " bytes");
  launch_pdl(write_rows_kernel, rows, 128, 0, as_stream(stream), src, src_stride, cols, view, layer, first_index, ring,
                                                        byte_offset);
  return launch_status("write_cache_rows");
}

}  // namespace di::kernels::cuda
