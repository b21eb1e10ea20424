// Safetensors reading for every model family: maps each file read-only (mmap), validates the
// header against the file, and serves tensor views by name across one file or the shards an
// index names. Knows nothing of any model; it never copies or converts tensor data.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace di::engine {

// kF8E4M3: OCP fp8 e4m3 ("F8_E4M3"); kF8E8M0: an 8-bit power-of-two scale ("F8_E8M0", UE8M0).
// DeepSeek stores packed FP4 e2m1 as I8 (two codes a byte); the dtype alone does not say so.
enum class DType { kF32, kF16, kBF16, kF64, kI64, kI32, kI16, kI8, kU8, kBool, kF8E4M3, kF8E8M0, kOther };

// The safetensors spelling ("F32", "BF16", ...) and element size of a dtype.
const char* dtype_name(DType dtype);
int64_t dtype_size(DType dtype);

struct TensorView {
  std::string name;
  DType dtype = DType::kOther;
  std::string dtype_text;  // as written in the header, e.g. "F8_E4M3" for kOther
  std::vector<int64_t> shape;
  const uint8_t* data = nullptr;  // into the mapped file; valid while the file is open
  int64_t nbytes = 0;
  std::string file;  // file name (no directory), for messages

  int64_t numel() const;
  std::string shape_text() const;  // "[4, 32]"
};

// One mapped .safetensors file.
class SafetensorsFile {
 public:
  static Result<std::unique_ptr<SafetensorsFile>> open(const std::string& path);
  ~SafetensorsFile();
  SafetensorsFile(const SafetensorsFile&) = delete;
  SafetensorsFile& operator=(const SafetensorsFile&) = delete;

  const std::vector<TensorView>& tensors() const { return tensors_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  SafetensorsFile() = default;
  void* map_ = nullptr;
  size_t map_size_ = 0;
  std::vector<TensorView> tensors_;
  std::map<std::string, std::string> metadata_;
};

// All tensors of a model directory: model.safetensors, or the shards listed in
// model.safetensors.index.json (every listed tensor must be in the shard the index names).
class Checkpoint {
 public:
  static Result<std::unique_ptr<Checkpoint>> open(const std::string& model_dir);

  const TensorView* find(const std::string& name) const;
  std::vector<std::string> names() const;  // sorted
  size_t size() const { return by_name_.size(); }

 private:
  std::vector<std::unique_ptr<SafetensorsFile>> files_;
  std::map<std::string, const TensorView*> by_name_;
};

// Copies a floating-point tensor (F32, F16, BF16) into fp32.
Result<std::vector<float>> tensor_to_f32(const TensorView& t);

}  // namespace di::engine
