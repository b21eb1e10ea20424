// Backend discovery. See loader.h. Search order for libdeepinfer_cuda.so: $DI_CUDA_BACKEND
// (a path, or "off"); then, only when the CUDA driver (libcuda.so.1) loads, the folder of the
// module this code is in (libdeepinfer.so's lib/, a wheel's package, an extracted jar's folder)
// and that folder's ../lib (an executable in bin/ beside lib/, in the build tree and in an
// installed prefix), then the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache).
#include "engine/backend/loader.h"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

namespace di::engine::backend {

namespace {

constexpr const char* kCudaLibrary = "libdeepinfer_cuda.so";

bool file_exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode);
}

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "." : path.substr(0, slash);
}

// The folder of the shared object (or executable) this function was linked into.
std::string own_dir() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&own_dir), &info) == 0 || info.dli_fname == nullptr) return "";
  std::string file = info.dli_fname;
  if (file.find('/') == std::string::npos) {
    // The main program started through PATH is named without a folder: ask the kernel.
    char buf[4096];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n <= 0) return "";
    file.assign(buf, static_cast<size_t>(n));
  }
  return dir_of(file);
}

struct Loaded {
  BackendState state;
  const DeviceBackend* backend = nullptr;
};

// Opens `path` and checks that it is a backend of this very build. Fills state.reason on failure.
const DeviceBackend* open_backend(const std::string& path, BackendState& state) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    state.reason = std::string("cannot load ") + path + ": " + (e ? e : "unknown dlopen error");
    return nullptr;
  }
  // Never dlclose: models created by the backend keep pointers into its code.
  auto entry = reinterpret_cast<const DeviceBackend* (*)()>(::dlsym(handle, "di_backend_cuda_v1"));
  if (entry == nullptr) {
    state.reason = path + ": not a DeepInfer CUDA backend (no di_backend_cuda_v1)";
    return nullptr;
  }
  const DeviceBackend* b = entry();
  if (b == nullptr || b->abi != kBackendAbi || std::string(b->version) != DI_BACKEND_VERSION) {
    state.reason = path + ": built for another libdeepinfer (backend " +
                   (b ? std::string(b->version) + " abi " + std::to_string(b->abi) : std::string("?")) +
                   ", this library " + DI_BACKEND_VERSION + " abi " + std::to_string(kBackendAbi) + ")";
    return nullptr;
  }
  state.library = path;
  return b;
}

// Finds and opens the library; nullptr with s.reason set when there is none to use.
[[maybe_unused]] const DeviceBackend* find_cuda(BackendState& s);

Loaded load_cuda() {
  Loaded out;
  BackendState& s = out.state;
  s.name = "cuda";
  const char* env = std::getenv("DI_CUDA_BACKEND");
  if (env != nullptr && std::string(env) == "off") {
    s.reason = "disabled by DI_CUDA_BACKEND=off";
    return out;
  }
#ifdef DI_CUDA_BACKEND_STATIC
  // scripts/gpu links the CUDA models into every program it builds: the backend is here already.
  const DeviceBackend* b = di_backend_cuda_v1();
  s.library = "(linked in)";
#else
  const DeviceBackend* b = find_cuda(s);
#endif
  if (b == nullptr) return out;
  std::string why;
  s.devices = b->device_count(&why);
  if (s.devices <= 0) {
    s.devices = 0;
    s.reason = "no CUDA device: " + why;
    return out;
  }
  s.available = true;
  out.backend = b;
  return out;
}

const DeviceBackend* find_cuda(BackendState& s) {
  const char* env = std::getenv("DI_CUDA_BACKEND");
  std::vector<std::string> candidates;
  if (env != nullptr && *env != '\0') {
    candidates.push_back(env);
  } else {
#ifndef DI_HAVE_CUDA_BACKEND
    s.reason = "this build has no CUDA backend (configured with DI_CUDA=OFF or without nvcc)";
    return nullptr;
#endif
    // No driver, no GPU: skip loading the backend (and cuBLAS, hundreds of MB) at all. An
    // explicit DI_CUDA_BACKEND path is loaded regardless, so its loading can be checked anywhere.
    if (::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL) == nullptr) {
      const char* e = ::dlerror();
      s.reason = std::string("no CUDA driver: ") + (e ? e : "libcuda.so.1 not found");
      return nullptr;
    }
    const std::string dir = own_dir();
    if (!dir.empty()) {
      candidates.push_back(dir + "/" + kCudaLibrary);
      candidates.push_back(dir + "/../lib/" + kCudaLibrary);
    }
  }
  const DeviceBackend* b = nullptr;
  bool found = false;
  std::string searched;
  for (const std::string& c : candidates) {
    if (!file_exists(c)) {
      searched += (searched.empty() ? "" : ", ") + c;
      continue;
    }
    found = true;
    b = open_backend(c, s);  // a file that exists but does not load is the answer: say why
    break;
  }
  if (!found && (env == nullptr || *env == '\0')) {
    // Last, the dynamic linker's search path (a distribution's package puts it there).
    if (void* h = ::dlopen(kCudaLibrary, RTLD_NOW | RTLD_LOCAL)) {
      ::dlclose(h);
      found = true;
      b = open_backend(kCudaLibrary, s);
    } else {
      searched += std::string(searched.empty() ? "" : ", ") + "the dynamic linker's path";
    }
  }
  if (!found) s.reason = std::string(kCudaLibrary) + " not found (searched " + searched + ")";
  return b;
}

const Loaded& cuda() {
  static std::once_flag once;
  static Loaded loaded;
  std::call_once(once, [] { loaded = load_cuda(); });
  return loaded;
}

}  // namespace

const DeviceBackend* cuda_backend() { return cuda().backend; }
const BackendState& cuda_state() { return cuda().state; }

nlohmann::json backends_json() {
  const BackendState& c = cuda_state();
  nlohmann::json cuda_j = {{"name", c.name}, {"available", c.available}, {"devices", c.devices}};
  if (!c.library.empty()) cuda_j["library"] = c.library;
  if (!c.reason.empty()) cuda_j["reason"] = c.reason;
  return nlohmann::json::array({{{"name", "cpu"}, {"available", true}}, cuda_j});
}

}  // namespace di::engine::backend
