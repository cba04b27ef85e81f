//===- tests/runtime/npy_test.cpp - .npy reading and writing --------------===//
//
// Round trips through the .npy codec for every supported dtype and rank,
// and one rejection per kind of malformed file.
//
//===----------------------------------------------------------------------===//
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "subgraph/runtime/npy.h"

namespace subgraph::runtime {
namespace {

using ::testing::HasSubstr;

/// Tensors of several dtypes and ranks (scalar, 1-d, 3-d, empty) survive a
/// round trip byte for byte, with a 64-byte aligned header.
TEST(NpyTest, RoundTripsDtypesAndRanks) {
  std::vector<Tensor> cases = {
      Tensor::fromVector<float>(DataType::kFloat32, {2, 1, 3}, {1, 2, 3, 4, 5, 6}),
      Tensor::fromVector<int64_t>(DataType::kInt64, {3}, {-1, 0, 1}),
      Tensor::fromVector<double>(DataType::kFloat64, {}, {2.5}),
      Tensor::fromVector<uint8_t>(DataType::kBool, {2}, {1, 0}),
      Tensor::fromVector<float>(DataType::kFloat32, {0, 4}, {}),
  };
  for (const Tensor& t : cases) {
    StatusOr<std::string> bytes = encodeNpy(t);
    ASSERT_TRUE(bytes.isOk()) << bytes.status().message();
    EXPECT_EQ((bytes.value().size() - t.bytes().size()) % 64, 0u);
    StatusOr<Tensor> back = decodeNpy(bytes.value());
    ASSERT_TRUE(back.isOk()) << back.status().message();
    EXPECT_TRUE(back.value() == t);
  }
}

/// NumPy's own header for a (2, 3) float32 array parses.
TEST(NpyTest, ReadsNumpyWrittenHeader) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  header.append(128 - 10 - header.size() - 1, ' ');
  header += '\n';
  std::string file =
      std::string("\x93NUMPY\x01\x00", 8) + static_cast<char>(header.size()) + '\0' + header;
  std::vector<float> v = {1, 2, 3, 4, 5, 6};
  file.append(reinterpret_cast<const char*>(v.data()), 24);
  StatusOr<Tensor> t = decodeNpy(file, "a.npy");
  ASSERT_TRUE(t.isOk()) << t.status().message();
  EXPECT_EQ(t.value().dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(t.value().data<float>()[5], 6.0f);
}

/// Malformed files fail with one line naming the file and the problem.
TEST(NpyTest, RejectsMalformedFiles) {
  Tensor t = Tensor::fromVector<float>(DataType::kFloat32, {2}, {1, 2});
  std::string good = encodeNpy(t).value();
  EXPECT_THAT(decodeNpy("garbage", "x.npy").status().message(),
              HasSubstr("x.npy: not a valid .npy file: bad magic"));
  EXPECT_THAT(decodeNpy(good.substr(0, good.size() - 1), "x.npy").status().message(),
              HasSubstr("data is 7 bytes, the header promises 8"));
  std::string big = good;
  big.replace(big.find("(2,)"), 4, "(9999999999999999999,)");
  EXPECT_FALSE(decodeNpy(big, "x.npy").isOk());
  std::string odd = good;
  odd.replace(odd.find("<f4"), 3, "<c8");
  EXPECT_THAT(decodeNpy(odd, "x.npy").status().message(),
              HasSubstr("unsupported .npy dtype '<c8'"));
  std::string be = good;
  be.replace(be.find("<f4"), 3, ">f4");
  EXPECT_THAT(decodeNpy(be, "x.npy").status().message(), HasSubstr("big-endian"));
  EXPECT_EQ(readNpyFile("/nonexistent/q.npy").status().code(), StatusCode::kIo);
  EXPECT_EQ(encodeNpy(Tensor::fromVector<uint16_t>(DataType::kBFloat16, {1}, {0})).status().code(),
            StatusCode::kUnsupported);
}

}  // namespace
}  // namespace subgraph::runtime
