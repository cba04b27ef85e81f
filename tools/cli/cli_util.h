//===- tools/cli/cli_util.h - Helpers shared by `subgraph` commands -------===//
//
// Everything a command needs between its options and the library: loading a
// model file by extension with size and sanity limits, the `--shape
// NAME=DIMS` option, writing an output file or stdout, and turning any
// message into the single error line main() prints. Commands throw
// subgraph::Error (exit 1) or UsageError (exit 2); they never print errors
// themselves, so every failure looks the same to a user and to scripts.
//
//===----------------------------------------------------------------------===//
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "subgraph/api/model.h"
#include "subgraph/api/stages.h"
#include "subgraph/ir/graph.h"
#include "subgraph/ir/verifier.h"
#include "subgraph/support/bytes.h"
#include "subgraph/support/status.h"

namespace subgraph::cli {

/// A mistake in how the command was invoked (a malformed option value),
/// as opposed to a failure while doing the work: an Error of kind kUsage,
/// for which main() exits 2, as for a library error of that kind.
class UsageError : public Error {
 public:
  explicit UsageError(const std::string& message) : Error(StatusCode::kUsage, message) {}
};

/// The model file formats the CLI reads, chosen by file extension.
enum class ModelFormat {
  kText,  ///< ".sg": the subgraph text format (subgraph/ir/text_format.h).
  kOnnx,  ///< ".onnx": an ONNX ModelProto, read by the subgraph::onnx importer.
};

/// Returns the format for `path` from its extension (case-insensitive);
/// "-" means a text graph on stdin. Throws `Error` naming the file and the
/// supported extensions otherwise.
ModelFormat modelFormatForPath(const std::string& path);

/// Static sizes for graph inputs, by input name, from `--shape` options.
using InputShapes = api::InputShapes;

/// The largest `--limit depth`: 255 levels below the main graph, the
/// deepest nesting the text parser accepts whatever it is asked (deeper
/// recursion could overflow the stack), so raising the limit can never
/// crash the program.
inline constexpr uint64_t kMaxDepthLimit = 255;

/// Resource limits set with the global `--limit NAME=VALUE` option. Zero
/// means "the layer's own default" (docs/reliability.md lists them). They
/// are process-wide because they belong to the invocation, not to one
/// command: every command that loads a model honours them.
struct CliLimits {
  uint64_t modelBytes = 0;      ///< `model-bytes`: size of a model file.
  uint64_t tensorBytes = 0;     ///< `tensor-bytes`: one constant or initializer.
  uint64_t nodes = 0;           ///< `nodes`: nodes in a model, subgraphs included.
  uint64_t depth = 0;           ///< `depth`: nesting of subgraphs (If/Loop bodies).
  uint64_t memory = 0;          ///< `memory`: a session's memory plan (`run`).
  uint64_t loopIterations = 0;  ///< `loop-iterations`: a Loop's, nested ones included.
  uint64_t loopSeconds = 0;     ///< `loop-seconds`: a Loop's wall time.
  uint64_t kernelWork = 0;      ///< `kernel-work`: steps of one kernel call.
};

/// The limits of this invocation (all zero until `--limit` sets one).
CliLimits& cliLimits();

/// The memory limit when `--limit memory` is not given: three quarters of
/// the machine's memory (MemTotal in /proc/meminfo), so that a 100-byte
/// model asking for hundreds of GiB fails with a line naming the limit
/// instead of being killed, while any model that fits the machine runs.
/// Zero (no limit) where /proc/meminfo cannot be read.
uint64_t defaultMemoryLimit();

/// The memory limit in force: `--limit memory`, else defaultMemoryLimit().
/// `run` applies it to the session's memory plan and to the inputs it
/// reads or makes.
uint64_t memoryLimit();

/// A positive integer with an optional K, M or G suffix (powers of 1024),
/// as `--limit` and `--memory-limit` take it; nullopt if it is not one or
/// overflows.
std::optional<uint64_t> parseByteCount(std::string_view value);

/// The comma-separated items of `list` (empty ones kept); none for "".
std::vector<std::string> splitCommas(std::string_view list);

/// The devices of `--stages N` (dev:0..) or `--devices LIST`, with their
/// `--memory-limit` (one size for all, or one each); empty when neither is
/// given. Mistakes are UsageErrors, before any model is read.
std::vector<api::StageDevice> parseStageDevices(size_t stages, const std::string& deviceList,
                                                const std::string& memoryLimits);

/// Parses every `--limit` value ("nodes=1000", "memory=512M"; a value takes
/// an optional K, M or G suffix, powers of 1024) into cliLimits(). Throws
/// UsageError for an unknown name, a malformed or zero value, or a name
/// given twice.
void parseLimitSpecs(const std::vector<std::string>& specs);

/// `status`'s message, followed by which `--limit` raises the limit it
/// reports (when it reports one), so the user learns the CLI's knob and
/// not only the library option named in the message.
std::string withLimitHint(const Status& status);

/// How loadModel() reads a file.
struct LoadOptions {
  /// Fixed input shapes (`--shape`).
  InputShapes inputShapes;
  /// Keep nodes whose op has no schema (--allow-unknown-ops).
  bool allowUnknownOps = false;
  /// Verify the graph (api::modelVerifyOptions()) before returning it.
  /// Only commands that report the verdict themselves (`inspect`) or are
  /// told to skip it (`convert --no-verify`) turn this off.
  bool verify = true;
};

/// The verifier's options every command uses: api::modelVerifyOptions, so
/// that the commands and the Python package accept the same models.
VerifyOptions cliVerifyOptions(bool allowUnknownOps);

/// Loads a model with api::loadModel, the `--limit` values as its limits.
/// Throws `Error` with the library's line (and which `--limit` raises a
/// limit it reports) and its kind.
std::unique_ptr<Graph> loadModel(const std::string& path, const LoadOptions& options = {});

/// Parses one `--shape` value, "NAME=DIMS", where DIMS is a comma- or
/// 'x'-separated list of non-negative integers ("input=1,3,224,224" or
/// "input=1x3x224x224"; "scalar=" is rank 0). The last '=' splits, so
/// names may contain '='. Throws UsageError quoting the value.
std::pair<std::string, std::vector<int64_t>> parseShapeSpec(std::string_view spec);

/// Parses every `--shape` value; a name given twice is a UsageError.
InputShapes parseShapeSpecs(const std::vector<std::string>& specs);

/// Adds the repeatable `--shape NAME=DIMS` option to `command`, storing
/// the raw values in `specs` for parseShapeSpecs().
CLI::Option* addShapeOption(CLI::App& command, std::vector<std::string>& specs);

/// Adds `--passes SPEC` (default "default"): the pass pipeline `partition`
/// and `run` apply before partitioning, so that what exporters write
/// (Constant nodes for Clip bounds and Resize scales, Shape -> Slice ->
/// Concat size computations, Identity) reaches the backends' selectors as
/// the constants they need. "none" skips it.
CLI::Option* addPassesOption(CLI::App& command, std::string& spec);

/// Calls `write` with a stream for `path` ("-" is stdout) and checks that
/// everything reached the file. A regular file is written atomically
/// (writeFileAtomically: a new file renamed over the old one), so a failed
/// write never truncates or deletes what was there, even when that is the
/// command's own input. Throws `Error` naming the file on failure.
void writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write);

/// Seconds of the steady clock since `start`, for progress and timing lines.
inline double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Keeps `object` alive until the process exits instead of destroying it
/// (LLVM's BuryPointer): a command that is about to return would spend its
/// last half second freeing a 10^6-node graph one object at a time, when
/// the operating system takes the whole heap back at once. The pointer
/// stays reachable from a static list, so leak checkers stay quiet. Only
/// for the program's commands, each of which runs once per process.
template <typename T>
void keepUntilExit(std::unique_ptr<T> object) {
  static auto* kept = new std::vector<void*>();  // never freed, on purpose
  kept->push_back(object.release());
}

/// `message` made safe for a one-line report: line breaks become "; ",
/// other control characters (e.g. from a binary file name) become '?',
/// and trailing whitespace is dropped.
std::string oneLine(std::string_view message);

/// Prints one warning line (spdlog::warn) per SUBGRAPH_PLUGIN_PATH entry
/// the plugin search path drops (a missing directory, a file), once per
/// process. Every command that resolves backends or plugins calls it first,
/// so a mistyped path is never dropped silently. A no-op without plugins.
void warnAboutDroppedPluginDirs();

/// Writes `graph` as a text graph to `path` (- : stdout). Unless
/// `inlineConstants`, constants of 1 KiB and more go to `<path>.data`
/// beside it, as external("<file>.data", offset, bytes) in the text, so a
/// large model stays a short text file; stdout keeps every constant
/// inline. A stale data file from an earlier write is removed.
void writeTextModel(const Graph& graph, const std::string& path, bool inlineConstants = false);

/// Writes `graph` to `path` in the format its extension names: a text
/// graph (writeTextModel) or, where ONNX export is built, an ONNX model.
void writeModelFile(const Graph& graph, const std::string& path, bool inlineConstants = false);

/// Throws the error of a failed backend selection for `list`: a list of
/// the wrong form, an unknown backend name or a missing plugin file is a
/// usage error (exit 2); a plugin that exists but cannot be used is a
/// failure (exit 1).
[[noreturn]] void throwSelectionError(std::string_view list, const Status& status);

}  // namespace subgraph::cli
