//===- tests/cli/mpi_wire_test.cpp - The bytes of a pipeline message ------===//
//
// White-box: what MpiPipelinedSession sends between ranks (api/mpi_wire.h)
// comes back as it went, only the values asked for travel, and a message
// that is cut short, corrupted or lies about its sizes is one error, never
// a crash or a tensor larger than the message.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "mpi_wire.h"

namespace subgraph::api::detail {
namespace {

using ::testing::HasSubstr;

Values someValues() {
  Values v;
  v["a"] = Tensor::fromVector(DataType::kFloat32, {2, 3}, std::vector<float>{1, 2, 3, 4, 5, 6});
  v["b"] = Tensor::fromVector(DataType::kInt64, {1}, std::vector<int64_t>{-7});
  v["skipped"] = Tensor::fromVector(DataType::kFloat32, {1}, std::vector<float>{9});
  return v;
}

std::vector<std::byte> encoded() {
  StatusOr<std::vector<std::byte>> bytes =
      encodeWire(WireKind::kValues, 3, true, someValues(), {"a", "b"}, 1 << 20);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().message();
  return bytes.isOk() ? std::move(bytes).value() : std::vector<std::byte>{};
}

TEST(MpiWire, ValuesComeBackAsTheyWentAndOnlyThoseAskedFor) {
  StatusOr<WireMessage> m = decodeWire(encoded());
  ASSERT_TRUE(m.isOk()) << m.status().message();
  EXPECT_EQ(m->kind, WireKind::kValues);
  EXPECT_EQ(m->index, 3u);
  EXPECT_TRUE(m->last);
  ASSERT_EQ(m->values.size(), 2u);
  EXPECT_EQ(m->values.count("skipped"), 0u);
  const Values want = someValues();
  for (const char* name : {"a", "b"}) {
    const Tensor& got = m->values.at(name);
    EXPECT_EQ(got.dtype(), want.at(name).dtype());
    EXPECT_EQ(got.dims(), want.at(name).dims());
    EXPECT_TRUE(std::equal(got.bytes().begin(), got.bytes().end(), want.at(name).bytes().begin(),
                           want.at(name).bytes().end()));
  }
}

TEST(MpiWire, EveryTruncationIsAnError) {
  std::vector<std::byte> bytes = encoded();
  for (size_t n = 0; n < bytes.size(); ++n) {
    StatusOr<WireMessage> m = decodeWire(std::span(bytes.data(), n));
    EXPECT_FALSE(m.isOk()) << "cut to " << n << " bytes";
  }
  bytes.push_back(std::byte{0});
  EXPECT_THAT(decodeWire(bytes).status().message(), HasSubstr("bytes left over"));
}

/// Random corruption: never a crash, and what parses stays within the
/// message's own bytes.
TEST(MpiWire, CorruptedMessagesNeverCrash) {
  const unsigned seed = 20261202;
  std::printf("seed %u\n", seed);
  std::mt19937 rng(seed);
  const std::vector<std::byte> clean = encoded();
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::byte> bytes = clean;
    for (int flips = 0; flips < 3; ++flips)
      bytes[rng() % bytes.size()] = static_cast<std::byte>(rng() & 0xff);
    StatusOr<WireMessage> m = decodeWire(bytes);
    if (!m.isOk()) continue;
    size_t total = 0;
    for (const auto& [name, t] : m->values) total += t.bytes().size() + name.size();
    EXPECT_LE(total, bytes.size());
  }
}

/// A tensor whose dims claim more elements than the message holds is
/// refused before anything is allocated for it.
TEST(MpiWire, DimsLargerThanTheMessageAreRefused) {
  Values v;
  v["x"] = Tensor::fromVector(DataType::kFloat32, {1}, std::vector<float>{1});
  StatusOr<std::vector<std::byte>> bytes = encodeWire(WireKind::kValues, 0, false, v, {"x"}, 1024);
  ASSERT_TRUE(bytes.isOk());
  // The one dim sits 8 bytes before the byte count and the 4 data bytes.
  std::vector<std::byte> b = std::move(bytes).value();
  const int64_t huge = int64_t{1} << 60;
  std::memcpy(b.data() + b.size() - 4 - 8 - 8, &huge, sizeof huge);
  EXPECT_THAT(decodeWire(b).status().message(), HasSubstr("larger than the message"));
}

TEST(MpiWire, WhatCannotTravelIsRefusedWhenSent) {
  Values v;
  v["s"] = Tensor({1}, std::vector<std::string>{"text"});
  EXPECT_THAT(encodeWire(WireKind::kValues, 0, false, v, {"s"}, 1024).status().message(),
              HasSubstr("cannot travel between ranks"));
  v.clear();
  v["x"] = Tensor::fromVector(DataType::kFloat32, {64}, std::vector<float>(64, 1.0f));
  EXPECT_THAT(encodeWire(WireKind::kValues, 0, false, v, {"x"}, 100).status().message(),
              HasSubstr("more than one message carries"));
}

}  // namespace
}  // namespace subgraph::api::detail
