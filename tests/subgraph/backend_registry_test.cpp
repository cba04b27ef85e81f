//===- tests/subgraph/backend_registry_test.cpp - Named backends ----------===//
//
// Registration by macro and at run time (from several threads at once),
// property order, and the one-line errors for unknown, repeated and
// malformed backend names.
//
//===----------------------------------------------------------------------===//
#include "subgraph/partition/backend_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>

#include "partition_test_util.h"

namespace subgraph::partition {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace testing;

/// Fuses Relu nodes.
class SgReluProperty : public LambdaProperty {
 public:
  SgReluProperty()
      : LambdaProperty("relu", [] {
          return std::make_unique<OpTypeSelector>(std::set<std::string>{"Relu"});
        }) {}
};

/// Fuses Neg nodes.
class SgNegProperty : public LambdaProperty {
 public:
  SgNegProperty()
      : LambdaProperty(
            "neg", [] { return std::make_unique<OpTypeSelector>(std::set<std::string>{"Neg"}); }) {}
};

SUBGRAPH_REGISTER_SUBGRAPH_BACKEND(SgTest);
SUBGRAPH_REGISTER_SUBGRAPH_PROPERTY(SgTest, SgReluProperty);
SUBGRAPH_REGISTER_SUBGRAPH_PROPERTY(SgTest, SgNegProperty);

/// The macros register a backend whose properties run in declaration order.
TEST(BackendRegistry, MacrosRegisterPropertiesInOrder) {
  ASSERT_TRUE(BackendRegistry::global().contains("SgTest"));
  StatusOr<SubgraphBackend> backend = BackendRegistry::global().instantiate("SgTest");
  ASSERT_TRUE(backend.isOk()) << backend.status().message();
  ASSERT_EQ(backend->properties.size(), 2u);
  EXPECT_EQ(backend->properties[0]->name(), "relu");
  EXPECT_EQ(backend->properties[1]->name(), "neg");
}

//   %x -> Relu -> Neg -> %y
/// Each property is a full pass: the Relu pass runs first, then the Neg
/// pass, so they make two regions even though the nodes are adjacent.
TEST(BackendRegistry, PropertiesRunAsSuccessivePasses) {
  auto g = parseGraphOrThrow(R"(
    graph @g(%x: f32[4]) {
      %a = Relu(%x) @a
      %y = Neg(%a) @b
      return %y
    })");
  StatusOr<PartitionReport> report = partitionGraph(*g, std::vector<std::string>{"SgTest"});
  ASSERT_TRUE(report.isOk()) << report.status().message();
  ASSERT_EQ(report->regions.size(), 2u);
  EXPECT_EQ(report->regions[0].property, "relu");
  EXPECT_EQ(report->regions[1].property, "neg");
  expectValid(*g);
}

/// Every instantiation makes fresh properties.
TEST(BackendRegistry, InstantiatesFreshProperties) {
  auto a = BackendRegistry::global().instantiate("SgTest").value();
  auto b = BackendRegistry::global().instantiate("SgTest").value();
  EXPECT_NE(a.properties[0].get(), b.properties[0].get());
}

/// Backends registered concurrently at run time are all there afterwards.
TEST(BackendRegistry, RegistersFromManyThreads) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([t] {
      for (int i = 0; i < 50; ++i) {
        Status s = BackendRegistry::global().registerProperty(
            "threaded" + std::to_string(t), [] { return std::make_unique<SgReluProperty>(); });
        EXPECT_TRUE(s.isOk()) << s.message();
        (void)BackendRegistry::global().names();
      }
    });
  for (auto& th : threads) th.join();
  for (int t = 0; t < 8; ++t) {
    auto backend = BackendRegistry::global().instantiate("threaded" + std::to_string(t));
    ASSERT_TRUE(backend.isOk());
    EXPECT_EQ(backend->properties.size(), 50u);
  }
}

/// An unknown name is one line that lists the registered backends.
TEST(BackendRegistry, UnknownBackendListsAvailableOnes) {
  registerBuiltinBackends();
  auto result = instantiateBackends({"nosuch"});
  ASSERT_FALSE(result.isOk());
  EXPECT_EQ(result.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(result.status().message(),
              HasSubstr("unknown subgraph backend 'nosuch'; available: "));
  EXPECT_THAT(result.status().message(), HasSubstr("convbn, convbnrelu"));
  EXPECT_EQ(result.status().message().find('\n'), std::string::npos);
}

/// NONE alone means no backends; with others, or a backend named twice, it
/// is an error.
TEST(BackendRegistry, HandlesNoneAndRepeats) {
  registerBuiltinBackends();
  auto none = instantiateBackends({"NONE"});
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->empty());
  EXPECT_THAT(instantiateBackends({"NONE", "convbn"}).status().message(),
              HasSubstr("'NONE' cannot be combined"));
  EXPECT_THAT(instantiateBackends({"convbn", "convbn"}).status().message(),
              HasSubstr("'convbn' is listed twice"));
}

/// Names that could not be written in --backend A,B are refused.
TEST(BackendRegistry, RejectsMalformedNames) {
  BackendRegistry& r = BackendRegistry::global();
  EXPECT_THAT(r.registerBackend("").message(), HasSubstr("non-empty name"));
  EXPECT_THAT(r.registerBackend("a,b").message(), HasSubstr("may not contain commas"));
  EXPECT_THAT(r.registerBackend("a b").message(), HasSubstr("may not contain commas"));
  EXPECT_THAT(r.registerBackend("NONE").message(), HasSubstr("reserved"));
  EXPECT_THAT(r.registerProperty("x", nullptr).message(), HasSubstr("null property factory"));
}

/// "--backend A, B" splits on commas and trims; an empty item is an error.
TEST(BackendRegistry, ParsesBackendLists) {
  EXPECT_THAT(parseBackendList(" convbn , convbnrelu").value(),
              ElementsAre("convbn", "convbnrelu"));
  EXPECT_THAT(parseBackendList("convbn,,x").status().message(), HasSubstr("empty backend name"));
  EXPECT_FALSE(parseBackendList("").isOk());
}

/// The built-in backends are registered once however often this is called.
TEST(BackendRegistry, BuiltinsRegisterOnce) {
  registerBuiltinBackends();
  registerBuiltinBackends();
  EXPECT_THAT(BackendRegistry::global().names(), Contains("convbn"));
  EXPECT_EQ(BackendRegistry::global().instantiate("convbn")->properties.size(), 1u);
}

}  // namespace
}  // namespace subgraph::partition
