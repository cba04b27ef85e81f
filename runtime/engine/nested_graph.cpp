//===- runtime/engine/nested_graph.cpp - A graph run inside a kernel ------===//
//
// See engine/nested_graph.h.
//
//===----------------------------------------------------------------------===//
#include "engine/nested_graph.h"

#include <algorithm>
#include <cstring>

namespace subgraph::runtime::engine {
namespace {
constexpr size_t kMaxNestedPlans = 64;
}  // namespace

StatusOr<std::unique_ptr<NestedGraph>> NestedGraph::compile(std::shared_ptr<const Graph> graph,
                                                            std::shared_ptr<Backend> reference) {
  return compile(std::move(graph), std::vector<std::shared_ptr<Backend>>{std::move(reference)});
}

StatusOr<std::unique_ptr<NestedGraph>> NestedGraph::compile(
    std::shared_ptr<const Graph> graph, const std::vector<std::shared_ptr<Backend>>& backends) {
  std::unique_ptr<NestedGraph> nested(new NestedGraph());
  nested->graph_ = std::move(graph);
  nested->limits_ = limitsBeingBuilt();
  StatusOr<std::unique_ptr<Program>> program = buildProgram(*nested->graph_, backends);
  if (!program.isOk()) return program.status();
  if (program.value()->devices.size() != 1) {
    // The graph runs in host memory that the calling kernel carves, so a
    // backend on another device cannot take part: its regions run their
    // bodies on the reference backend instead.
    std::shared_ptr<Backend> reference =
        backends[static_cast<size_t>(program.value()->referenceBackend)];
    program = buildProgram(*nested->graph_, {reference});
    if (!program.isOk()) return program.status();
  }
  nested->program_ = std::move(program).value();
  return nested;
}

std::vector<size_t> NestedGraph::contentInputs() const {
  std::vector<size_t> out;
  for (int i : program_->contentInputs) out.push_back(static_cast<size_t>(i));
  return out;
}

StatusOr<std::shared_ptr<const Plan>> NestedGraph::planFor(
    std::span<const TensorDesc> descs, std::span<const void* const> data) const {
  std::string sig = signatureOf(*program_, descs, data);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = plans_.find(sig); it != plans_.end()) return it->second;
  }
  PlanOptions options;
  options.memoryLimitBytes = limits_.memoryBytes;
  StatusOr<std::shared_ptr<Plan>> plan = resizeProgram(*program_, descs, data, options);
  if (!plan.isOk()) return plan.status();
  std::shared_ptr<const Plan> made = std::move(plan).value();
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = plans_.emplace(sig, made);
  if (inserted) {
    planOrder_.push_back(sig);
    if (planOrder_.size() > kMaxNestedPlans) {
      plans_.erase(planOrder_.front());
      planOrder_.erase(planOrder_.begin());
    }
  }
  return it->second;
}

const TensorDesc& NestedGraph::outputDesc(const Plan& plan, size_t o) const {
  return plan.descs[static_cast<size_t>(program_->outputSlots[o])];
}

size_t NestedGraph::memoryBytes(const Plan& plan) const {
  return Frame::carveBytes(plan, program_->hostDevice);
}

StatusOr<std::unique_ptr<Frame>> NestedGraph::newFrame() const {
  auto frame = std::make_unique<Frame>(*program_);
  SUBGRAPH_RETURN_IF_ERROR(frame->init());
  return frame;
}

Status NestedGraph::run(const Plan& plan, Frame& frame, std::span<std::byte> memory,
                        std::span<const void* const> inputs, std::span<void* const> outputs) const {
  frame.carve(plan, memory);
  frame.bind(plan, inputs, outputs);
  ExecuteOptions options;
  std::vector<StepTiming> timings;
  const NestedProfile* profile = currentNestedProfile();
  if (profile) {
    options.profile = true;
    options.timings = &timings;
    options.scope = profile->scope + "." + label_;
  }
  SUBGRAPH_RETURN_IF_ERROR(execute(*program_, plan, frame, options));
  if (profile && !timings.empty()) {
    std::lock_guard<std::mutex> lock(*profile->mutex);
    for (StepTiming& t : timings) profile->timings->push_back(std::move(t));
  }
  // Outputs the plan could not place in the caller's buffers (inputs passed
  // through, constants, precomputed values) are copied.
  for (size_t o = 0; o < outputs.size(); ++o) {
    const TensorView& v = frame.view(program_->outputSlots[o]);
    if (v.raw() != outputs[o] && v.byteSize() > 0) std::memcpy(outputs[o], v.raw(), v.byteSize());
  }
  return Status::ok();
}

}  // namespace subgraph::runtime::engine
