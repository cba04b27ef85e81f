//===- plugins/cudnn/device.cpp - CUDA device, memory and cuDNN plans -----===//
//
// The cuDNN 9 backend graph API, used the documented way: every descriptor
// is created, its attributes set with the attribute's exact type, and
// finalized; the operation graph is handed to heuristics mode A, whose
// engine configurations are tried in order until one finalizes into an
// execution plan. Attribute types follow the cuDNN backend reference:
// dims/strides/ids CUDNN_TYPE_INT64, data types CUDNN_TYPE_DATA_TYPE,
// descriptors CUDNN_TYPE_BACKEND_DESCRIPTOR, scalars of float math
// CUDNN_TYPE_FLOAT, pooling geometry CUDNN_TYPE_FRACTION.
//
// Precision: float32 tensors run on engines without the TENSOR_CORE
// numerical note unless TF32 is allowed, because on Ampere and later that
// note on a float32 graph means TF32 math (about 1e-3 relative error,
// which --check's 1e-4 tolerance rightly refuses); fp16 mode keeps the
// device tensors in binary16 and every compute type float32.
//
// Run on an NVIDIA H100 with cuDNN 9.14 (docs/cudnn.md has the figures).
//
//===----------------------------------------------------------------------===//
#include "device.h"

#include "layout.h"

#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace subgraph::cudnn {
namespace {

void checkCuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string("cudnn plugin: ") + what + ": " + cudaGetErrorString(e));
}

void checkCudnn(cudnnStatus_t s, const char* what) {
  if (s != CUDNN_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cudnn plugin: ") + what + ": " + cudnnGetErrorString(s));
}

/// An owned backend descriptor (RAII, like oneDNN's handle<T>).
class Desc {
 public:
  explicit Desc(cudnnBackendDescriptorType_t type) {
    checkCudnn(cudnnBackendCreateDescriptor(type, &d_), "cudnnBackendCreateDescriptor");
  }
  Desc(Desc&& o) noexcept : d_(std::exchange(o.d_, nullptr)) {}
  Desc& operator=(Desc&&) = delete;
  Desc(const Desc&) = delete;
  ~Desc() {
    if (d_) cudnnBackendDestroyDescriptor(d_);
  }
  cudnnBackendDescriptor_t get() const { return d_; }

  Desc& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
            const void* values) {
    cudnnStatus_t s = cudnnBackendSetAttribute(d_, name, type, count, values);
    if (s != CUDNN_STATUS_SUCCESS)
      throw std::runtime_error("cudnn plugin: cudnnBackendSetAttribute(attribute " +
                               std::to_string(static_cast<int>(name)) +
                               "): " + cudnnGetErrorString(s));
    return *this;
  }
  Desc& setDesc(cudnnBackendAttributeName_t name, const Desc& other) {
    cudnnBackendDescriptor_t o = other.get();
    return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &o);
  }
  Desc& setInts(cudnnBackendAttributeName_t name, const std::vector<int64_t>& v) {
    return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(v.size()), v.data());
  }
  Desc& finalize(const char* what) {
    checkCudnn(cudnnBackendFinalize(d_), what);
    return *this;
  }

 private:
  cudnnBackendDescriptor_t d_ = nullptr;
};

cudnnPointwiseMode_t pointwiseMode(PointwiseMode m) {
  switch (m) {
    case PointwiseMode::kAdd: return CUDNN_POINTWISE_ADD;
    case PointwiseMode::kSub: return CUDNN_POINTWISE_SUB;
    case PointwiseMode::kMul: return CUDNN_POINTWISE_MUL;
    case PointwiseMode::kDiv: return CUDNN_POINTWISE_DIV;
    case PointwiseMode::kMax: return CUDNN_POINTWISE_MAX;
    case PointwiseMode::kMin: return CUDNN_POINTWISE_MIN;
    case PointwiseMode::kRelu: return CUDNN_POINTWISE_RELU_FWD;
    case PointwiseMode::kSigmoid: return CUDNN_POINTWISE_SIGMOID_FWD;
    case PointwiseMode::kTanh: return CUDNN_POINTWISE_TANH_FWD;
    case PointwiseMode::kAbs: return CUDNN_POINTWISE_ABS;
    case PointwiseMode::kNeg: return CUDNN_POINTWISE_NEG;
    case PointwiseMode::kExp: return CUDNN_POINTWISE_EXP;
    case PointwiseMode::kLog: return CUDNN_POINTWISE_LOG;
    case PointwiseMode::kSqrt: return CUDNN_POINTWISE_SQRT;
  }
  return CUDNN_POINTWISE_IDENTITY;
}

std::vector<cudnnFraction_t> fractions(const std::vector<int64_t>& v) {
  std::vector<cudnnFraction_t> out;
  for (int64_t x : v) out.push_back({x, 1});
  return out;
}

size_t elementBytes(Precision p) { return deviceElementBytes(p); }

/// Whether an engine with these numerical notes may run in `p`. TF32 only
/// changes products that are summed (convolution, matmul); pooling and
/// pointwise graphs keep their tensor-core engines in fp32 (cuDNN 9.14 has
/// no other engine for them).
bool engineAllowed(const std::vector<cudnnBackendNumericalNote_t>& notes, Precision p,
                   bool reducesProducts) {
  if (p != Precision::kFp32 || !reducesProducts) return true;
  return std::find(notes.begin(), notes.end(), CUDNN_NUMERICAL_NOTE_TENSOR_CORE) == notes.end();
}

}  // namespace

std::string probeDevice() {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
  if (count < 1) return "no CUDA device (cudaGetDeviceCount found 0)";
  return {};
}

// --- DeviceAllocator ---

size_t DeviceAllocator::roundedSize(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  if (bytes == 0) bytes = 1;
  if (bytes <= kMiB) return (bytes + 255) / 256 * 256;
  size_t p = kMiB;
  while (p < bytes) p <<= 1;
  return p;
}

void* DeviceAllocator::allocate(size_t bytes) {
  const size_t size = roundedSize(bytes);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = free_.find(size); it != free_.end()) {
    void* p = it->second;
    free_.erase(it);
    used_[p] = size;
    return p;
  }
  void* p = obtain(size);
  if (!p) {
    // Give cached blocks back and try once more before failing.
    for (auto& [s, q] : free_) {
      release(q);
      reserved_ -= s;
    }
    free_.clear();
    p = obtain(size);
    if (!p)
      throw std::runtime_error(std::string("cudnn plugin: ") +
                               (kind_ == Kind::kDevice ? "cudaMalloc" : "cudaHostAlloc") + " of " +
                               std::to_string(size) + " bytes failed");
  }
  reserved_ += size;
  used_[p] = size;
  return p;
}

void DeviceAllocator::deallocate(void* ptr) {
  if (!ptr) return;
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = used_.find(ptr);
  if (it == used_.end()) return;
  free_.emplace(it->second, ptr);
  used_.erase(it);
}

size_t DeviceAllocator::reservedBytes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return reserved_;
}

void* DeviceAllocator::obtain(size_t bytes) {
  void* p = nullptr;
  cudaError_t e = kind_ == Kind::kDevice ? cudaMalloc(&p, bytes)
                                         : cudaHostAlloc(&p, bytes, cudaHostAllocDefault);
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error state for the retry
    return nullptr;
  }
  return p;
}

void DeviceAllocator::release(void* p) {
  if (kind_ == Kind::kDevice)
    cudaFree(p);
  else
    cudaFreeHost(p);
}

DeviceAllocator::~DeviceAllocator() {
  for (auto& [s, p] : free_) release(p);
  for (auto& [p, s] : used_) release(p);
}

DeviceAllocator& deviceAllocator() {
  static DeviceAllocator* allocator = new DeviceAllocator();  // never destroyed: outlives kernels
  return *allocator;
}

DeviceAllocator& pinnedAllocator() {
  static DeviceAllocator* allocator = new DeviceAllocator(DeviceAllocator::Kind::kPinnedHost);
  return *allocator;
}

// --- ExecutablePlan ---

struct ExecutablePlan::Descriptors {
  std::vector<Desc> keep;  // tensors, op descriptors: alive as long as the plan
  std::unique_ptr<Desc> plan;
};

namespace {

/// Creates and finalizes every tensor and operation descriptor of `plan`
/// into `keep`; returns the operations, in plan order, for the graph. No
/// device is needed for any of it. Non-virtual tensor uids go to `uids`.
std::vector<cudnnBackendDescriptor_t> buildOperations(const RegionPlan& plan,
                                                      std::vector<Desc>& keep,
                                                      std::vector<int64_t>& uids,
                                                      Precision precision) {
  keep.reserve(plan.tensors.size() + 4 * plan.ops.size() + 4);
  const cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
  // Tensors in memory take the precision's type; virtual ones (inside a
  // fused kernel) and every compute type stay float32.
  const cudnnDataType_t stored = precision == Precision::kFp16   ? CUDNN_DATA_HALF
                                 : precision == Precision::kBf16 ? CUDNN_DATA_BFLOAT16
                                                                 : CUDNN_DATA_FLOAT;
  std::vector<size_t> tensorDesc(plan.tensors.size());
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlanTensor& t = plan.tensors[i];
    const bool isVirtual = t.role == TensorRole::kIntermediate;
    const int64_t alignment = 16;
    Desc d(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    d.set(CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, isVirtual ? &f32 : &stored)
        .setInts(CUDNN_ATTR_TENSOR_DIMENSIONS, t.dims)
        .setInts(CUDNN_ATTR_TENSOR_STRIDES, t.strides)
        .set(CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &t.uid)
        .set(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment)
        .set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &isVirtual)
        .finalize("tensor descriptor");
    if (!isVirtual) uids.push_back(t.uid);
    tensorDesc[i] = keep.size();
    keep.push_back(std::move(d));
  }
  auto tensor = [&](int index) -> const Desc& {
    return keep[tensorDesc[static_cast<size_t>(index)]];
  };

  std::vector<cudnnBackendDescriptor_t> ops;
  for (const PlanOp& op : plan.ops) {
    switch (op.kind) {
      case PlanOp::Kind::kConvForward: {
        const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
        const int64_t spatial = 2;
        Desc conv(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
        conv.set(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32)
            .set(CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode)
            .set(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
            .setInts(CUDNN_ATTR_CONVOLUTION_DILATIONS, op.dilations)
            .setInts(CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, op.strides)
            .setInts(CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, op.padsBegin)
            .setInts(CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, op.padsEnd)
            .finalize("convolution descriptor");
        const float alpha = 1.0f, beta = 0.0f;
        Desc fwd(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
        fwd.setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, tensor(op.x))
            .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, tensor(op.w))
            .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, tensor(op.y))
            .setDesc(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, conv)
            .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha)
            .set(CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta)
            .finalize("convolution forward operation");
        ops.push_back(fwd.get());
        keep.push_back(std::move(conv));
        keep.push_back(std::move(fwd));
        break;
      }
      case PlanOp::Kind::kMatMul: {
        Desc mm(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
        mm.set(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32)
            .finalize("matmul descriptor");
        Desc op2(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
        op2.setDesc(CUDNN_ATTR_OPERATION_MATMUL_ADESC, tensor(op.x))
            .setDesc(CUDNN_ATTR_OPERATION_MATMUL_BDESC, tensor(op.w))
            .setDesc(CUDNN_ATTR_OPERATION_MATMUL_CDESC, tensor(op.y))
            .setDesc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm)
            .finalize("matmul operation");
        ops.push_back(op2.get());
        keep.push_back(std::move(mm));
        keep.push_back(std::move(op2));
        break;
      }
      case PlanOp::Kind::kPointwise: {
        const cudnnPointwiseMode_t mode = pointwiseMode(op.pointwise);
        Desc pw(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
        pw.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
            .set(CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &f32);
        if (op.pointwise == PointwiseMode::kRelu) {
          const float lower = static_cast<float>(op.reluLower),
                      slope = static_cast<float>(op.reluSlope);
          pw.set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, CUDNN_TYPE_FLOAT, 1, &lower)
              .set(CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE, CUDNN_TYPE_FLOAT, 1, &slope);
          if (op.hasUpperClip) {
            const float upper = static_cast<float>(op.reluUpper);
            pw.set(CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_FLOAT, 1, &upper);
          }
        }
        pw.finalize("pointwise descriptor");
        Desc op2(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
        op2.setDesc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)
            .setDesc(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, tensor(op.x))
            .setDesc(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, tensor(op.y));
        if (op.w >= 0) op2.setDesc(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, tensor(op.w));
        op2.finalize("pointwise operation");
        ops.push_back(op2.get());
        keep.push_back(std::move(pw));
        keep.push_back(std::move(op2));
        break;
      }
      case PlanOp::Kind::kPool: {
        const cudnnResampleMode_t mode = op.pool == PoolMode::kMax ? CUDNN_RESAMPLE_MAXPOOL
                                         : op.pool == PoolMode::kAverageIncludePad
                                             ? CUDNN_RESAMPLE_AVGPOOL_INCLUDE_PADDING
                                             : CUDNN_RESAMPLE_AVGPOOL_EXCLUDE_PADDING;
        const cudnnPaddingMode_t padding =
            op.pool == PoolMode::kMax ? CUDNN_NEG_INF_PAD : CUDNN_ZERO_PAD;
        const int64_t spatial = 2;
        std::vector<cudnnFraction_t> window = fractions(op.window), strides = fractions(op.strides),
                                     pre = fractions(op.padsBegin), post = fractions(op.padsEnd);
        Desc rs(CUDNN_BACKEND_RESAMPLE_DESCRIPTOR);
        rs.set(CUDNN_ATTR_RESAMPLE_MODE, CUDNN_TYPE_RESAMPLE_MODE, 1, &mode)
            .set(CUDNN_ATTR_RESAMPLE_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &f32)
            .set(CUDNN_ATTR_RESAMPLE_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial)
            .set(CUDNN_ATTR_RESAMPLE_PADDING_MODE, CUDNN_TYPE_PADDING_MODE, 1, &padding)
            .set(CUDNN_ATTR_RESAMPLE_WINDOW_DIMS, CUDNN_TYPE_FRACTION, 2, window.data())
            .set(CUDNN_ATTR_RESAMPLE_STRIDES, CUDNN_TYPE_FRACTION, 2, strides.data())
            .set(CUDNN_ATTR_RESAMPLE_PRE_PADDINGS, CUDNN_TYPE_FRACTION, 2, pre.data())
            .set(CUDNN_ATTR_RESAMPLE_POST_PADDINGS, CUDNN_TYPE_FRACTION, 2, post.data())
            .finalize("resample descriptor");
        Desc op2(CUDNN_BACKEND_OPERATION_RESAMPLE_FWD_DESCRIPTOR);
        op2.setDesc(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_XDESC, tensor(op.x))
            .setDesc(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_YDESC, tensor(op.y))
            .setDesc(CUDNN_ATTR_OPERATION_RESAMPLE_FWD_DESC, rs)
            .finalize("resample operation");
        ops.push_back(op2.get());
        keep.push_back(std::move(rs));
        keep.push_back(std::move(op2));
        break;
      }
    }
  }
  return ops;
}

}  // namespace

std::string validateDescriptors(const RegionPlan& plan) {
  try {
    std::vector<Desc> keep;
    std::vector<int64_t> uids;
    std::vector<cudnnBackendDescriptor_t> ops = buildOperations(plan, keep, uids, Precision::kFp32);
    if (ops.size() != plan.ops.size()) return "cudnn: an operation was not built";
    // cuDNN 9 finalizes an operation graph without a handle (the handle
    // attribute is deprecated there), which checks how the operations
    // connect; heuristics and plans do need the device.
    Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    graph
        .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
             static_cast<int64_t>(ops.size()), ops.data())
        .finalize("operation graph");
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

namespace {

/// The engine behind an engine configuration: its global index and its
/// numerical notes (TENSOR_CORE, REDUCED_PRECISION_REDUCTION, ...).
std::pair<int64_t, std::vector<cudnnBackendNumericalNote_t>> engineOf(const Desc& config) {
  Desc engine(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  cudnnBackendDescriptor_t e = engine.get();
  int64_t n = 0;
  checkCudnn(cudnnBackendGetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n, &e),
             "engine of a configuration");
  int64_t index = -1;
  checkCudnn(
      cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n, &index),
      "engine index");
  std::vector<cudnnBackendNumericalNote_t> notes(CUDNN_NUMERICAL_NOTE_TYPE_COUNT);
  checkCudnn(
      cudnnBackendGetAttribute(e, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
                               static_cast<int64_t>(notes.size()), &n, notes.data()),
      "engine numerical notes");
  notes.resize(static_cast<size_t>(n));
  return {index, std::move(notes)};
}

const char* noteName(cudnnBackendNumericalNote_t note) {
  switch (note) {
    case CUDNN_NUMERICAL_NOTE_TENSOR_CORE: return "tensor core";
    case CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS: return "down-converts inputs";
    case CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION: return "reduced-precision reduction";
    case CUDNN_NUMERICAL_NOTE_FFT: return "FFT";
    case CUDNN_NUMERICAL_NOTE_NONDETERMINISTIC: return "nondeterministic";
    case CUDNN_NUMERICAL_NOTE_WINOGRAD: return "Winograd";
    default: return nullptr;
  }
}

}  // namespace

ExecutablePlan::ExecutablePlan(const RegionPlan& plan, cudnnContext* handle, Precision precision)
    : d_(std::make_unique<Descriptors>()) {
  std::vector<Desc>& keep = d_->keep;
  std::vector<cudnnBackendDescriptor_t> ops = buildOperations(plan, keep, uids_, precision);

  Desc graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnHandle_t h = handle;
  graph.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
      .set(CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
           static_cast<int64_t>(ops.size()), ops.data())
      .finalize("operation graph");

  // Mode A's list first (ranked for speed), then the fallback list, whose
  // engines cover more graphs; the first configuration the precision
  // allows and that finalizes wins.
  std::string lastError = "heuristics returned no engine configuration";
  int skipped = 0;
  const bool reducesProducts = std::any_of(plan.ops.begin(), plan.ops.end(), [](const PlanOp& op) {
    return op.kind == PlanOp::Kind::kConvForward || op.kind == PlanOp::Kind::kMatMul;
  });
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    Desc heur(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    try {
      heur.setDesc(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
          .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
          .finalize("engine heuristics");
    } catch (const std::exception& e) {
      lastError = e.what();
      continue;
    }
    constexpr int64_t kMaxConfigs = 64;
    std::vector<Desc> configs;
    std::vector<cudnnBackendDescriptor_t> raw;
    for (int64_t i = 0; i < kMaxConfigs; ++i) {
      configs.emplace_back(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
      raw.push_back(configs.back().get());
    }
    int64_t found = 0;
    if (cudnnStatus_t st = cudnnBackendGetAttribute(heur.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                                    CUDNN_TYPE_BACKEND_DESCRIPTOR, kMaxConfigs,
                                                    &found, raw.data());
        st != CUDNN_STATUS_SUCCESS) {
      lastError = std::string("heuristics results: ") + cudnnGetErrorString(st);
      continue;
    }
    for (int64_t i = 0; i < std::min(found, kMaxConfigs) && !d_->plan; ++i) {
      try {
        const Desc& config = configs[static_cast<size_t>(i)];
        auto [index, notes] = engineOf(config);
        if (!engineAllowed(notes, precision, reducesProducts)) {
          ++skipped;
          continue;
        }
        auto p = std::make_unique<Desc>(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        p->set(CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &h)
            .setDesc(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, config)
            .finalize("execution plan");
        int64_t count = 0;
        checkCudnn(cudnnBackendGetAttribute(p->get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                            CUDNN_TYPE_INT64, 1, &count, &workspace_),
                   "workspace size");
        d_->plan = std::move(p);
        engine_ = "engine " + std::to_string(index) + " (heuristics " +
                  (mode == CUDNN_HEUR_MODE_A ? "A" : "fallback") + " #" + std::to_string(i + 1);
        for (cudnnBackendNumericalNote_t note : notes)
          if (const char* name = noteName(note)) engine_ += std::string("; ") + name;
        engine_ += ")";
      } catch (const std::exception& e) {
        lastError = e.what();
      }
    }
    keep.push_back(std::move(heur));
    if (d_->plan) break;
  }
  if (!d_->plan) {
    if (skipped > 0)
      lastError += "; " + std::to_string(skipped) + " tensor-core (TF32) engine(s) skipped in " +
                   precisionName(precision) + ", allow them with --precision tf32";
    throw std::runtime_error("cudnn: no " + std::string(precisionName(precision)) + " engine for " +
                             plan.summary + " (" + lastError + ")");
  }
  keep.push_back(std::move(graph));
}

ExecutablePlan::~ExecutablePlan() = default;

void ExecutablePlan::execute(cudnnContext* handle, const std::vector<void*>& pointers,
                             void* workspace) const {
  std::vector<void*> data;
  for (int64_t uid : uids_) data.push_back(pointers[static_cast<size_t>(uid - 1)]);
  Desc pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           static_cast<int64_t>(data.size()), data.data())
      .set(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids_.size()),
           uids_.data())
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize("variant pack");
  checkCudnn(cudnnBackendExecute(handle, d_->plan->get(), pack.get()), "cudnnBackendExecute");
}

// --- DeviceRegion ---

DeviceRegion::DeviceRegion(const RegionPlan& plan, Precision precision, std::string name)
    : plan_(plan) {
  checkCudnn(cudnnCreate(&handle_), "cudnnCreate");
  try {
    exec_ = std::make_unique<ExecutablePlan>(plan, handle_, precision);
  } catch (const std::exception& e) {
    cudnnDestroy(handle_);
    throw std::runtime_error(name + ": " + e.what());
  }
  DeviceAllocator& alloc = deviceAllocator();
  const size_t width = elementBytes(precision);
  constants_.assign(plan.tensors.size(), nullptr);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const PlanTensor& t = plan.tensors[i];
    if (t.role != TensorRole::kConstant) continue;
    // Constants once per session: already in device layout (weights were
    // reordered when planned), so only the 16-bit modes convert.
    const std::vector<float>& c = plan.constants[t.index];
    std::vector<uint16_t> halves;
    const void* bytes = c.data();
    if (width == 2) {
      halves.resize(c.size());
      if (precision == Precision::kFp16)
        convertElements(c.data(), halves.data(), static_cast<int64_t>(c.size()), floatToHalf);
      else
        convertElements(c.data(), halves.data(), static_cast<int64_t>(c.size()), floatToBfloat16);
      bytes = halves.data();
    }
    constants_[i] = alloc.allocate(c.size() * width);
    checkCuda(cudaMemcpy(constants_[i], bytes, c.size() * width, cudaMemcpyHostToDevice),
              "cudaMemcpy (constants)");
  }
}

DeviceRegion::~DeviceRegion() {
  DeviceAllocator& alloc = deviceAllocator();
  for (void* p : constants_) alloc.deallocate(p);
  exec_.reset();
  if (handle_) cudnnDestroy(handle_);
}

void DeviceRegion::enqueue(CUstream_st* stream, const std::vector<void*>& inputs,
                           const std::vector<void*>& outputs, void* workspace) {
  if (inputs.size() != plan_.inputTensors.size() || outputs.size() != plan_.outputTensors.size())
    throw std::runtime_error("cudnn: the fused node's arity does not match its plan");
  std::vector<void*> pointers = constants_;
  for (size_t i = 0; i < inputs.size(); ++i)
    pointers[static_cast<size_t>(plan_.inputTensors[i])] = inputs[i];
  for (size_t o = 0; o < outputs.size(); ++o)
    pointers[static_cast<size_t>(plan_.outputTensors[o])] = outputs[o];
  std::lock_guard<std::mutex> lock(mutex_);
  checkCudnn(cudnnSetStream(handle_, stream), "cudnnSetStream");
  exec_->execute(handle_, pointers, workspace);
}

std::string checkEngine(const RegionPlan& plan, Precision precision) {
  // One handle for every check: cudnnCreate costs far more than a
  // heuristics query, and partitioning ResNet-50 checks dozens of regions.
  // Checks are serialized on it; it lives as long as the process.
  static std::mutex mutex;
  static cudnnHandle_t handle = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  try {
    if (!handle) checkCudnn(cudnnCreate(&handle), "cudnnCreate");
    ExecutablePlan exec(plan, handle, precision);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

}  // namespace subgraph::cudnn
