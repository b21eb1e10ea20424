// Status and Result<T>: how every expected failure travels inside DeepInfer (bad request,
// malformed file, unknown option, over budget). Exceptions are for bugs and OOM only; the C ABI
// turns a Status into a di_status + di_error. The codes equal the public DI_E_* values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <variant>

namespace di {

enum class StatusCode : int32_t {
  kOk = 0,
  kInvalidArgument = -1,
  kOutOfMemory = -2,
  kUnsupported = -3,
  kNotFound = -4,
  kIo = -5,
  kParse = -6,
  kCancelled = -7,
  kInternal = -8,
  kLimit = -9,
  kState = -10,
  kDevice = -11,
  kPermission = -12,
};

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message, std::string detail = {})
      : code_(code), message_(std::move(message)), detail_(std::move(detail)) {}

  static Status ok() { return {}; }
  static Status invalid_argument(std::string m) { return {StatusCode::kInvalidArgument, std::move(m)}; }
  static Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status io(std::string m) { return {StatusCode::kIo, std::move(m)}; }
  static Status parse(std::string m) { return {StatusCode::kParse, std::move(m)}; }
  static Status cancelled(std::string m) { return {StatusCode::kCancelled, std::move(m)}; }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }
  static Status limit(std::string m) { return {StatusCode::kLimit, std::move(m)}; }
  static Status state(std::string m) { return {StatusCode::kState, std::move(m)}; }
  static Status device(std::string m) { return {StatusCode::kDevice, std::move(m)}; }
  static Status permission(std::string m) { return {StatusCode::kPermission, std::move(m)}; }
  static Status out_of_memory(std::string m) { return {StatusCode::kOutOfMemory, std::move(m)}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return is_ok(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // Machine-readable detail, JSON when set (the recipe puts the protocol's error body here).
  const std::string& detail() const { return detail_; }
  Status with_detail(std::string detail) && {
    detail_ = std::move(detail);
    return std::move(*this);
  }
  // Prefixes the message with where the failure happened: "layers.3: " + message.
  Status with_context(const std::string& where) && {
    message_ = where + ": " + message_;
    return std::move(*this);
  }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string detail_;
};

// Result<T>: a T or the Status saying why there is none.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}  // NOLINT: implicit by design, like absl::StatusOr
  Result(Status status) : v_(std::move(status)) {}  // NOLINT

  bool is_ok() const { return v_.index() == 0; }
  explicit operator bool() const { return is_ok(); }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<1>(v_);
  }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  Status take_status() && { return std::get<1>(std::move(v_)); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace di

#define DI_CONCAT_INNER_(a, b) a##b
#define DI_CONCAT_(a, b) DI_CONCAT_INNER_(a, b)

#define DI_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::di::Status di_status_ = (expr);       \
    if (!di_status_.is_ok()) return di_status_; \
  } while (0)

#define DI_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.is_ok()) return std::move(tmp).take_status(); \
  lhs = std::move(tmp).value()

// DI_ASSIGN_OR_RETURN(auto x, make_x()); returns the Status from the enclosing function on error.
#define DI_ASSIGN_OR_RETURN(lhs, expr) \
  DI_ASSIGN_OR_RETURN_IMPL_(DI_CONCAT_(di_result_, __LINE__), lhs, expr)
