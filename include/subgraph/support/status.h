//===- subgraph/support/status.h - Error values for hot paths ---*- C++ -*-===//
//
// subgraph reports errors as values on hot paths (verification, inference,
// partitioning) and as exceptions only at API edges (file loading, the CLI).
// `Status` is the value form; `Error` is the exception form. Both carry one
// human-readable line that names the node, file or limit involved.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace subgraph {

/// Broad category of a failure, so callers can react without parsing text:
/// the program maps it to its exit status (kUsage: 2, others: 1), the
/// Python package to an exception class (kUsage, kInvalidArgument and
/// kNotFound: InvalidArgument; kIo: NoSuchFile; kUnsupported:
/// NotImplemented; the rest: Fail).
enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  ///< Malformed input: a bad graph or model file's contents.
  kNotFound,         ///< A named thing (op, value, input, backend) is missing.
  kUnsupported,      ///< Valid input that subgraph cannot handle.
  kLimitExceeded,    ///< A resource limit (memory, work, a file's size) was hit.
  kInternal,         ///< A broken invariant inside subgraph.
  kUsage,            ///< A caller's option or argument is wrong (a flag, a name, a value).
  kIo,               ///< A file cannot be found, opened, read or written.
  kPluginFailure,    ///< A plugin's call failed, or the plugin cannot be used.
};

/// Returns a stable lower-case name for `code`, e.g. "invalid-argument".
const char* statusCodeName(StatusCode code);

/// The outcome of an operation: OK, or a code with a one-line message.
class [[nodiscard]] Status {
 public:
  /// Constructs an OK status.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  /// Returns the OK status.
  static Status ok() { return Status(); }
  /// Returns an error status; `code` must not be kOk.
  static Status error(StatusCode code, std::string message) {
    return Status(code, std::move(message));
  }
  /// Shorthand for the most common error kind.
  static Status invalid(std::string message) {
    return Status(StatusCode::kInvalidArgument, std::move(message));
  }

  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

/// The exception form of a failed Status, thrown at API edges.
class Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  explicit Error(const Status& status)
      : std::runtime_error(status.message()), code_(status.code()) {}
  explicit Error(const std::string& message)
      : std::runtime_error(message), code_(StatusCode::kInvalidArgument) {}

  StatusCode code() const { return code_; }

 private:
  StatusCode code_;
};

/// Throws `Error` if `status` is not OK. Used where a hot-path status
/// reaches an API edge.
inline void throwIfError(const Status& status) {
  if (!status.isOk()) throw Error(status);
}

/// A value or the Status explaining why there is none.
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(T value) : state_(std::move(value)) {}         // NOLINT: implicit by design
  StatusOr(Status status) : state_(std::move(status)) {}  // NOLINT

  bool isOk() const { return std::holds_alternative<T>(state_); }
  explicit operator bool() const { return isOk(); }

  /// The error; only meaningful when !isOk().
  const Status& status() const {
    static const Status kOk;
    return isOk() ? kOk : std::get<Status>(state_);
  }
  /// The value; throws `Error` when this holds an error.
  T& value() & {
    if (!isOk()) throw Error(std::get<Status>(state_));
    return std::get<T>(state_);
  }
  const T& value() const& {
    if (!isOk()) throw Error(std::get<Status>(state_));
    return std::get<T>(state_);
  }
  T&& value() && {
    if (!isOk()) throw Error(std::get<Status>(state_));
    return std::get<T>(std::move(state_));
  }
  T* operator->() { return &value(); }
  T& operator*() { return value(); }

 private:
  std::variant<T, Status> state_;
};

}  // namespace subgraph

/// Returns early from the enclosing function if `expr` yields a non-OK Status.
#define SUBGRAPH_RETURN_IF_ERROR(expr)                     \
  do {                                                     \
    ::subgraph::Status subgraph_status_ = (expr);          \
    if (!subgraph_status_.isOk()) return subgraph_status_; \
  } while (false)
