// Safetensors reading: mmap, header validation, shard index. See safetensors.h.
#include "engine/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernels/cpu/bf16_widen.h"
#include "kernels/cpu/threads.h"

namespace di::engine {
namespace {

using nlohmann::json;

struct DTypeInfo {
  const char* name;
  DType dtype;
  int64_t size;
};

constexpr DTypeInfo kDTypes[] = {
    {"F32", DType::kF32, 4},  {"F16", DType::kF16, 2}, {"BF16", DType::kBF16, 2},
    {"F64", DType::kF64, 8},  {"I64", DType::kI64, 8}, {"I32", DType::kI32, 4},
    {"I16", DType::kI16, 2},  {"I8", DType::kI8, 1},   {"U8", DType::kU8, 1},
    {"BOOL", DType::kBool, 1},  {"F8_E4M3", DType::kF8E4M3, 1}, {"F8_E8M0", DType::kF8E8M0, 1},
};

// Sizes of dtypes we can map but not compute with (they still need a valid byte length).
int64_t other_dtype_size(const std::string& name) {
  if (name.rfind("F8", 0) == 0 || name == "U8" || name == "I8") return 1;
  if (name == "U16") return 2;
  if (name == "U32") return 4;
  if (name == "U64") return 8;
  return -1;
}

std::string file_name(const std::string& path) {
  return std::filesystem::path(path).filename().string();
}

float half_to_float(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalise
      exp = 127 - 15 + 1;
      while (!(mant & 0x400)) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ff;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

const char* dtype_name(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.name;
  return "?";
}

int64_t dtype_size(DType dtype) {
  for (const auto& d : kDTypes)
    if (d.dtype == dtype) return d.size;
  return 0;
}

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string TensorView::shape_text() const {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

Result<std::unique_ptr<SafetensorsFile>> SafetensorsFile::open(const std::string& path) {
  const std::string fname = file_name(path);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::io(path + ": cannot open: " + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    ::close(fd);
    return Status::io(path + ": cannot stat: " + std::strerror(errno));
  }
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size < 8) {
    ::close(fd);
    return Status::parse(fname + ": " + std::to_string(size) +
                         " bytes is too short for a safetensors file (truncated?)");
  }
  void* map = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return Status::io(path + ": mmap failed: " + std::strerror(errno));
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->map_ = map;
  file->map_size_ = size;
  const auto* bytes = static_cast<const uint8_t*>(map);

  uint64_t header_len = 0;
  for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
  if (header_len > size - 8)
    return Status::parse(fname + ": header length " + std::to_string(header_len) +
                         " runs past the end of the file (" + std::to_string(size) +
                         " bytes; truncated?)");
  json header = json::parse(bytes + 8, bytes + 8 + header_len, nullptr, false);
  if (header.is_discarded() || !header.is_object())
    return Status::parse(fname + ": header is not a JSON object");
  const uint64_t data_start = 8 + header_len;
  const uint64_t data_size = size - data_start;

  for (auto it = header.begin(); it != header.end(); ++it) {
    const std::string& name = it.key();
    if (name == "__metadata__") {
      if (it->is_object())
        for (auto m = it->begin(); m != it->end(); ++m)
          if (m->is_string()) file->metadata_[m.key()] = m->get<std::string>();
      continue;
    }
    const json& e = *it;
    const std::string where = fname + ": tensor '" + name + "'";
    if (!e.is_object() || !e.contains("dtype") || !e["dtype"].is_string() ||
        !e.contains("shape") || !e["shape"].is_array() || !e.contains("data_offsets") ||
        !e["data_offsets"].is_array() || e["data_offsets"].size() != 2)
      return Status::parse(where + ": expected {dtype, shape, data_offsets[2]}");
    TensorView t;
    t.name = name;
    t.file = fname;
    t.dtype_text = e["dtype"].get<std::string>();
    int64_t esize = -1;
    for (const auto& d : kDTypes)
      if (t.dtype_text == d.name) {
        t.dtype = d.dtype;
        esize = d.size;
      }
    if (esize < 0) esize = other_dtype_size(t.dtype_text);
    if (esize < 0) return Status::parse(where + ": unknown dtype '" + t.dtype_text + "'");
    int64_t numel = 1;
    for (const json& d : e["shape"]) {
      if (!d.is_number_unsigned()) return Status::parse(where + ": shape entries must be >= 0");
      t.shape.push_back(d.get<int64_t>());
      numel *= t.shape.back();
    }
    const json& off = e["data_offsets"];
    if (!off[0].is_number_unsigned() || !off[1].is_number_unsigned())
      return Status::parse(where + ": data_offsets must be non-negative integers");
    const uint64_t begin = off[0].get<uint64_t>(), end = off[1].get<uint64_t>();
    if (end < begin) return Status::parse(where + ": data_offsets end before they begin");
    if (end > data_size)
      return Status::parse(where + ": data [" + std::to_string(begin) + ", " +
                           std::to_string(end) + ") lies past the end of the file's " +
                           std::to_string(data_size) + " data bytes (truncated?)");
    if (static_cast<int64_t>(end - begin) != numel * esize)
      return Status::parse(where + ": " + std::to_string(end - begin) + " bytes for " +
                           t.dtype_text + " " + t.shape_text() + " (expected " +
                           std::to_string(numel * esize) + ")");
    t.data = bytes + data_start + begin;
    t.nbytes = static_cast<int64_t>(end - begin);
    file->tensors_.push_back(std::move(t));
  }
  // Overlapping tensors mean a corrupt header; sort by offset and compare neighbours.
  std::vector<const TensorView*> order;
  for (const auto& t : file->tensors_) order.push_back(&t);
  std::sort(order.begin(), order.end(),
            [](const TensorView* a, const TensorView* b) { return a->data < b->data; });
  for (size_t i = 1; i < order.size(); ++i)
    if (order[i - 1]->data + order[i - 1]->nbytes > order[i]->data)
      return Status::parse(fname + ": tensors '" + order[i - 1]->name + "' and '" +
                           order[i]->name + "' overlap");
  return file;
}

SafetensorsFile::~SafetensorsFile() {
  if (map_) munmap(map_, map_size_);
}

Result<std::unique_ptr<Checkpoint>> Checkpoint::open(const std::string& model_dir) {
  namespace fs = std::filesystem;
  auto ckpt = std::make_unique<Checkpoint>();
  const fs::path dir(model_dir);
  const fs::path index_path = dir / "model.safetensors.index.json";
  const fs::path single = dir / "model.safetensors";
  std::map<std::string, std::string> expected_shard;  // tensor -> shard, from the index
  std::vector<std::string> files;
  if (fs::exists(index_path)) {
    std::ifstream in(index_path);
    json index = json::parse(in, nullptr, false);
    if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
        !index["weight_map"].is_object())
      return Status::parse("model.safetensors.index.json: expected an object with weight_map");
    for (auto it = index["weight_map"].begin(); it != index["weight_map"].end(); ++it) {
      if (!it->is_string())
        return Status::parse("model.safetensors.index.json: weight_map['" + it.key() +
                             "']: expected a file name");
      const std::string shard = it->get<std::string>();
      if (shard.find('/') != std::string::npos || shard == "..")
        return Status::parse("model.safetensors.index.json: weight_map['" + it.key() +
                             "']: shard '" + shard + "' must be a file in the model directory");
      expected_shard[it.key()] = shard;
      if (std::find(files.begin(), files.end(), shard) == files.end()) files.push_back(shard);
    }
    std::sort(files.begin(), files.end());
  } else if (fs::exists(single)) {
    files.push_back("model.safetensors");
  } else {
    return Status::not_found(model_dir +
                             ": no model.safetensors or model.safetensors.index.json");
  }
  for (const std::string& f : files) {
    DI_ASSIGN_OR_RETURN(auto file, SafetensorsFile::open((dir / f).string()));
    for (const TensorView& t : file->tensors()) {
      if (ckpt->by_name_.count(t.name))
        return Status::parse("tensor '" + t.name + "' appears in both " +
                             ckpt->by_name_[t.name]->file + " and " + f);
      if (!expected_shard.empty()) {
        auto e = expected_shard.find(t.name);
        if (e == expected_shard.end())
          return Status::parse(f + ": tensor '" + t.name +
                               "' is not listed in model.safetensors.index.json");
        if (e->second != f)
          return Status::parse(f + ": tensor '" + t.name + "' is listed in the index under " +
                               e->second);
      }
      ckpt->by_name_[t.name] = &t;
    }
    ckpt->files_.push_back(std::move(file));
  }
  for (const auto& [name, shard] : expected_shard)
    if (!ckpt->by_name_.count(name))
      return Status::parse("model.safetensors.index.json lists '" + name + "' in " + shard +
                           ", which does not contain it");
  return ckpt;
}

const TensorView* Checkpoint::find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::vector<std::string> Checkpoint::names() const {
  std::vector<std::string> out;
  out.reserve(by_name_.size());
  for (const auto& [name, t] : by_name_) out.push_back(name);
  return out;
}

Result<std::vector<float>> tensor_to_f32(const TensorView& t) {
  const int64_t n = t.numel();
  if (t.dtype != DType::kF32 && t.dtype != DType::kBF16 && t.dtype != DType::kF16)
    return Status::unsupported("tensor '" + t.name + "': dtype " + t.dtype_text +
                               " is not a supported floating-point type (F32, BF16, F16)");
  std::vector<float> out(static_cast<size_t>(n));
  // Split over the CPU threads: a checkpoint's bf16 matrices are gigabytes, and one core
  // converting them was most of a model's load time.
  const uint8_t* src = t.data;
  float* dst = out.data();
  const DType dtype = t.dtype;
  kernels::cpu::parallel_for(n, [&](int64_t begin, int64_t end) {
    if (dtype == DType::kF32) {
      std::memcpy(dst + begin, src + 4 * begin, static_cast<size_t>(end - begin) * 4);
      return;
    }
    if (dtype == DType::kBF16) {
      kernels::cpu::bf16_widen(src + 2 * begin, end - begin, dst + begin);
      return;
    }
    for (int64_t i = begin; i < end; ++i) {
      uint16_t h;
      std::memcpy(&h, src + 2 * i, 2);
      dst[i] = half_to_float(h);
    }
  });
  return out;
}

}  // namespace di::engine
