//===- tests/plugins/corpus/absent_dependency.cpp - A library that is not there -===//
//
// The broken plugin `missing_dependency` links against this library, which
// is built into a folder the loader never searches (no RUNPATH points at
// it), so loading that plugin fails the way a plugin needing an absent
// libcudnn does.
//
//===----------------------------------------------------------------------===//
extern "C" __attribute__((visibility("default"))) int subgraph_test_absent_dependency(void) {
  return 1;
}
