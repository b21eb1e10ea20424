# The GPU test suites' sources, relative to tests/cuda: one list for both builds that run them
# (tests/cuda/CMakeLists.txt in the main build, scripts/gpu/CMakeLists.txt on the GPU machine),
# so a test added to one cannot be missing from the other.
set(DI_CUDA_SUITE_test_cuda_kernels rms_norm_test.cpp paged_attention_test.cpp token_mask_test.cpp fp8_linear_test.cpp
    gemv_test.cpp gemm_grouped_test.cpp)
set(DI_CUDA_SUITE_test_cuda_models cuda_model_test.cpp llama_cuda_test.cpp llama_cuda_constrain_test.cpp
    device_sampler_test.cpp memory_check_cuda_test.cpp)
set(DI_CUDA_SUITE_test_cuda_v4 v4_kernels_test.cpp indexer_topk_test.cpp sink_attention_test.cpp v4_cuda_test.cpp v4_quant_cuda_test.cpp
    v4_mtp_cuda_test.cpp quant_reference_cuda_test.cpp)
set(DI_CUDA_SUITE_test_cuda_mla mla_routing_test.cpp mla_attention_test.cpp mla_cuda_test.cpp)
set(DI_CUDA_SUITE_test_cuda_determinism invariant_gemm_test.cpp batch_invariance_test.cpp)
set(DI_CUDA_SUITE_test_cuda_nccl nccl_communicator_test.cpp)
