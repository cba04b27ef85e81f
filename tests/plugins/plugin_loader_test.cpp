//===- tests/plugins/plugin_loader_test.cpp - Refusing broken plugins -----===//
//
// The loader against the broken-plugin corpus (corpus/broken_plugin.cpp,
// one .so per failure category) and against files that are not plugins at
// all (made here: missing, a directory, empty, text, truncated ELF, wrong
// architecture, 32-bit, wrong ELF type). Each must be refused with exactly
// one line that names the path and the reason, never a crash, and leave
// nothing loaded (dlopen with RTLD_NOLOAD finds no trace of it). Then
// load/unload cycles, and backend-list resolution errors.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>
#include <elf.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "pattern_check.h"
#include "plugin_tables.h"
#include "subgraph/plugins/plugin_loader.h"

namespace subgraph::plugins {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = SUBGRAPH_TEST_CORPUS_DIR;
const fs::path kPluginDir = SUBGRAPH_TEST_PLUGIN_DIR;

/// True if `path` is mapped in this process.
bool isLoaded(const fs::path& path) {
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (!h) return false;
  dlclose(h);
  return true;
}

/// A fresh temporary directory, removed afterwards.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "sg_plugins_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

/// Makes `dir` the working directory until the object dies.
class ScopedWorkingDirectory {
 public:
  explicit ScopedWorkingDirectory(const fs::path& dir) : old_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~ScopedWorkingDirectory() {
    std::error_code ec;
    fs::current_path(old_, ec);
  }
  ScopedWorkingDirectory(const ScopedWorkingDirectory&) = delete;
  ScopedWorkingDirectory& operator=(const ScopedWorkingDirectory&) = delete;

 private:
  fs::path old_;
};

std::string readAll(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

void writeAll(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary) << bytes;
}

/// Expects loadPlugin(path) to fail with one line naming `path` and
/// containing `reason`, and the library not to stay loaded.
void expectRefused(const fs::path& path, const std::string& reason) {
  SCOPED_TRACE(path.string());
  StatusOr<std::shared_ptr<LoadedPlugin>> loaded = loadPlugin(path);
  ASSERT_FALSE(loaded.isOk()) << "loaded a broken plugin";
  const std::string& m = loaded.status().message();
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  EXPECT_NE(m.find(path.string()), std::string::npos) << m;
  EXPECT_NE(m.find(reason), std::string::npos) << m;
  EXPECT_FALSE(isLoaded(path)) << "still loaded after refusal";
}

struct CorpusCase {
  const char* file;
  std::string reason;
};

// The version numbers come from the header, so a new ABI version needs no
// edit here.
const std::string kAbi = std::to_string(SG_PLUGIN_ABI_VERSION);

/// Each corpus plugin breaks the ABI in one way; the expected reason is the
/// part of the message that says which.
TEST(PluginLoaderTest, RefusesEveryBrokenPluginOfTheCorpus) {
  const CorpusCase cases[] = {
      {"no_entry", "no entry point 'subgraph_plugin_entry'"},
      {"entry_fails", "the entry point failed (status 1): no accelerator found"},
      {"entry_throws", "the entry point threw an exception: thrown across the C boundary"},
      {"null_table", "returned success but no plugin table"},
      {"abi_too_old",
       "plugin ABI version 0, older than this subgraph supports (1 to " + kAbi + ")"},
      {"abi_too_new", "plugin ABI version 99, newer than this subgraph's " + kAbi},
      {"short_struct", "struct_size 16 is smaller than version 1's"},
      {"no_name", "no valid backend name"},
      {"bad_name", "no valid backend name"},
      {"name_none", "no valid backend name"},
      {"null_array", "a count with a null array"},
      {"property_no_selector", "has neither a pattern nor"},
      {"property_too_new", "property 0 has plugin ABI version 7, newer than"},
      {"bad_pattern", "pattern edge 0 names a missing node"},
      {"mxnet_op_name",
       "pattern node 0 names op 'Convolution', which is not an ONNX op (MXNet's name; ONNX calls "
       "it Conv), so it can never match"},
      {"misspelled_op", "names op 'Sigmiod', which is not an ONNX op (did you mean Sigmoid?)"},
      {"seed_unknown_op",
       "property 'broken_property' seed_op_types names op 'Rleu', which is not an ONNX op (did "
       "you mean Elu or Relu?), so it can never seed a region"},
      {"seed_empty", "has an empty seed_op_types, so nothing could seed it"},
      {"seed_on_pattern", "sets seed_op_types, which only a selector property takes"},
      {"kernel_no_run", "lacks create, destroy or run"},
      {"duplicate_kernel", "two kernels for op 'subgraph.broken.x'"},
      {"transform_stage", "unknown stage 7"},
      {"device_kind", "device 'cuda' lacks a queue or event slot (all are required since ABI 3)"},
      {"device_v2_kind", "device kind 'cuda' needs plugin ABI version 3"},
      {"device_no_copy_up",
       "device 'emu' lacks a plain copy from the host (SgCopyDesc with direction "
       "SG_COPY_HOST_TO_DEVICE and no layouts)"},
      {"device_kernel_no_queue",
       "kernel for 'subgraph.broken.x' runs on device 'emu' but has no run_on_queue"},
      {"device_copy_without_device",
       "copy 0 copies to or from a device, but the plugin has no device of its own"},
      {"op_def", "op definition 0 has no domain or name"},
      {"layout_no_copy_out", "layout 'blk' has no copy to plain row-major"},
      {"layout_old_version", "layout 0 declares plugin ABI version 1, but it exists only since"},
      {"copy_unlisted_layout", "copy 1 names a layout that is not in the plugin's layouts"},
      {"unresolved_symbol", "unresolved symbol"},
      {"missing_dependency", "missing dependency libsg_absent_dependency.so"},
  };
  for (const CorpusCase& c : cases)
    expectRefused(kCorpus / (std::string(c.file) + ".so"), c.reason);
}

/// Since ABI 6 a plugin's devices_for gives a session its devices; they are
/// checked when a session places work on one (the plugin loads), and a
/// session that names a device past the last, or a broken one, gets one
/// line. The first device needs no devices_for call at all.
TEST(PluginLoaderTest, RefusesBrokenSessionDevices) {
  const std::pair<const char*, const char*> cases[] = {
      {"devices_bad_id", "device 1 of devices_for has id 5 (ids count 0, 1, ... in order)"},
      {"devices_no_copies", "device 1 of devices_for has no copies of its own"},
  };
  for (const auto& [file, reason] : cases) {
    StatusOr<std::shared_ptr<LoadedPlugin>> loaded =
        loadPlugin(kCorpus / (std::string(file) + ".so"));
    ASSERT_TRUE(loaded.isOk()) << loaded.status().message();
    PluginRunOptions options;
    options.device = "emu:0";
    StatusOr<int> first = (*loaded)->deviceIndex(options);
    ASSERT_TRUE(first.isOk()) << first.status().message();
    EXPECT_EQ(*first, 0);
    options.device = "emu:1";
    StatusOr<int> second = (*loaded)->deviceIndex(options);
    ASSERT_FALSE(second.isOk()) << file;
    EXPECT_EQ(second.status().code(), StatusCode::kPluginFailure);
    EXPECT_THAT(second.status().message(), ::testing::HasSubstr(reason));
    EXPECT_EQ(second.status().message().find('\n'), std::string::npos);
  }
}

/// Files that are not plugins: each gets its own reason before the system
/// loader is even asked.
TEST(PluginLoaderTest, RefusesFilesThatAreNotPlugins) {
  TempDir dir;
  const fs::path good = kPluginDir / "example_convbn.so";
  ASSERT_TRUE(fs::exists(good));
  std::string elf = readAll(good);
  ASSERT_GT(elf.size(), sizeof(Elf64_Ehdr));

  expectRefused(dir.path() / "missing.so", "no such file");
  fs::create_directory(dir.path() / "dir.so");
  expectRefused(dir.path() / "dir.so", "is a directory");
  writeAll(dir.path() / "empty.so", "");
  expectRefused(dir.path() / "empty.so", "is empty");
  writeAll(dir.path() / "text.so", "#!/bin/sh\necho not a library\n");
  expectRefused(dir.path() / "text.so", "is not an ELF file");
  writeAll(dir.path() / "truncated.so", elf.substr(0, 24));
  expectRefused(dir.path() / "truncated.so", "truncated ELF file");

  auto patched = [&](const char* name, size_t offset, std::string bytes) {
    std::string copy = elf;
    copy.replace(offset, bytes.size(), bytes);
    writeAll(dir.path() / name, copy);
    return dir.path() / name;
  };
  // e_machine (offset 18): AArch64 on x86-64 hosts, x86-64 elsewhere.
  const uint16_t other = reinterpret_cast<const Elf64_Ehdr*>(elf.data())->e_machine == EM_X86_64
                             ? EM_AARCH64
                             : EM_X86_64;
  expectRefused(patched("arch.so", offsetof(Elf64_Ehdr, e_machine),
                        std::string(reinterpret_cast<const char*>(&other), 2)),
                "wrong architecture: built for");
  expectRefused(patched("class32.so", EI_CLASS, std::string(1, ELFCLASS32)),
                "wrong architecture: a 32-bit ELF file");
  const uint16_t rel = ET_REL, exec = ET_EXEC;
  expectRefused(patched("object.so", offsetof(Elf64_Ehdr, e_type),
                        std::string(reinterpret_cast<const char*>(&rel), 2)),
                "not a shared library (ELF type relocatable object)");
  expectRefused(patched("exec.so", offsetof(Elf64_Ehdr, e_type),
                        std::string(reinterpret_cast<const char*>(&exec), 2)),
                "not a shared library (ELF type executable)");

  StatusOr<std::shared_ptr<LoadedPlugin>> relative = loadPlugin("example_convbn.so");
  ASSERT_FALSE(relative.isOk());
  EXPECT_NE(relative.status().message().find("must be absolute"), std::string::npos);
}

/// A plugin file cut short (a failed copy, a full disk) is refused from its
/// ELF headers, before dlopen maps segments past the end of the file and
/// dies of SIGBUS touching them, at every cut: inside the program headers,
/// inside a loaded segment, one byte short. The test would die of that
/// signal were the loader asked.
TEST(PluginLoaderTest, RefusesTruncatedFilesBeforeTheSystemLoaderMapsThem) {
  TempDir dir;
  const std::string elf = readAll(kPluginDir / "example_convbn.so");
  ASSERT_GT(elf.size(), 8192u);
  for (size_t size : {size_t{100}, size_t{4096}, elf.size() / 2, elf.size() - 1}) {
    SCOPED_TRACE(size);
    const fs::path cut = dir.path() / ("cut" + std::to_string(size) + ".so");
    writeAll(cut, elf.substr(0, size));
    expectRefused(cut, "is a truncated ELF file");
  }
  // What must not happen: the whole file refused.
  writeAll(dir.path() / "whole.so", elf);
  StatusOr<std::shared_ptr<LoadedPlugin>> whole = loadPlugin(dir.path() / "whole.so");
  EXPECT_TRUE(whole.isOk()) << whole.status().message();
}

/// Backend lists: unknown names, missing files, a plugin claiming a
/// built-in's name, the same backend twice, a file whose declared name
/// differs from its file name, NONE mixed with names; and fallback.
/// A selector property's seed_op_types as the host reads them: none where
/// the table predates the field (its bytes are then never read), or leaves
/// it NULL or "*"; the listed ops otherwise; an error where the list could
/// never seed a region. The corpus cases above refuse such plugins whole.
TEST(PluginLoaderTest, ReadsSeedOpTypesOnlyWhereTheTableHasThem) {
  SgPropertyDesc d{};
  d.abi_version = SG_PLUGIN_ABI_VERSION;
  d.struct_size = sizeof(SgPropertyDesc);
  d.seed_op_types = "Conv|MatMul|com.example.Fused";
  StatusOr<std::vector<std::string>> seeds = adapters::seedOpTypes(d);
  ASSERT_TRUE(seeds.isOk()) << seeds.status().message();
  EXPECT_EQ(*seeds, (std::vector<std::string>{"Conv", "MatMul", "com.example.Fused"}));

  d.seed_op_types = "*";
  EXPECT_TRUE(adapters::seedOpTypes(d)->empty());
  d.seed_op_types = nullptr;
  EXPECT_TRUE(adapters::seedOpTypes(d)->empty());
  // A table of version 4 as first released ends before the field: whatever
  // lies there is not the plugin's.
  d.struct_size = SG_PROPERTY_DESC_V4_SIZE;
  d.seed_op_types = "Rleu";
  EXPECT_TRUE(adapters::seedOpTypes(d)->empty());

  d.struct_size = sizeof(SgPropertyDesc);
  EXPECT_FALSE(adapters::seedOpTypes(d).isOk());
  d.seed_op_types = "|";
  EXPECT_FALSE(adapters::seedOpTypes(d).isOk());
  SgPatternDesc pattern{};
  d.seed_op_types = "Relu";
  d.pattern = &pattern;
  EXPECT_FALSE(adapters::seedOpTypes(d).isOk());
}

TEST(PluginLoaderTest, ResolvesBackendListsAndNamesEveryProblem) {
  TempDir dir;
  SelectOptions options;
  options.searchPath = {dir.path(), kPluginDir};
  auto error = [&](const std::string& list) {
    StatusOr<BackendSelection> s = selectBackends(list, options);
    return s.isOk() ? std::string("(accepted)") : s.status().message();
  };
  EXPECT_NE(error("no_such_backend").find("unknown backend 'no_such_backend'"), std::string::npos);
  const std::string here = fs::current_path().string();
  EXPECT_NE(error("./x.so").find("plugin " + here + "/x.so: no such file"), std::string::npos);
  EXPECT_NE(error("lib/x.so").find("plugin " + here + "/lib/x.so: no such file"),
            std::string::npos);
  EXPECT_NE(error((kCorpus / "builtin_name.so").string())
                .find("duplicate backend name 'convbn' (a built-in backend has it)"),
            std::string::npos);
  EXPECT_NE(error("example_convbn," + (kPluginDir / "example_convbn.so").string())
                .find("duplicate backend name 'example_convbn'"),
            std::string::npos);
  fs::copy_file(kPluginDir / "example_convbn.so", dir.path() / "renamed.so");
  EXPECT_NE(error("renamed").find("declares backend 'example_convbn', not 'renamed'"),
            std::string::npos);
  EXPECT_NE(error("NONE,convbn").find("NONE cannot be combined"), std::string::npos);
  EXPECT_NE(error("convbn,,convbnrelu").find("empty item"), std::string::npos);
  EXPECT_NE(error("convbn,convbn").find("names 'convbn' twice"), std::string::npos);
  // The form is checked before anything loads: a mistake late in the list
  // is the one reported, not the unknown name before it.
  EXPECT_NE(error("no_such_backend,,convbn").find("empty item"), std::string::npos);
  EXPECT_FALSE(checkBackendList("a,,b").isOk());
  EXPECT_TRUE(checkBackendList("a, b").isOk());
  // Names that resolve to nothing are kNotFound (a front end's usage
  // error); a plugin that exists but cannot be used is not.
  EXPECT_EQ(selectBackends("no_such_backend", options).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(selectBackends("./x.so", options).status().code(), StatusCode::kNotFound);
  EXPECT_NE(selectBackends("renamed", options).status().code(), StatusCode::kNotFound);

  StatusOr<BackendSelection> none = selectBackends("NONE", options);
  ASSERT_TRUE(none.isOk());
  EXPECT_TRUE(none->none());
  EXPECT_TRUE(none->backends().empty());

  StatusOr<BackendSelection> mixed = selectBackends("convbn, example_convbn", options);
  ASSERT_TRUE(mixed.isOk()) << mixed.status().message();
  EXPECT_EQ(mixed->names(), (std::vector<std::string>{"convbn", "example_convbn"}));
  EXPECT_EQ(mixed->backends()[0].plugin, nullptr);  // built in
  ASSERT_NE(mixed->backends()[1].plugin, nullptr);

  // Fallback: the broken plugin is skipped with a warning, the rest stays.
  options.allowFallback = true;
  StatusOr<BackendSelection> fallback =
      selectBackends((kCorpus / "entry_fails.so").string() + ",convbn", options);
  ASSERT_TRUE(fallback.isOk()) << fallback.status().message();
  EXPECT_EQ(fallback->names(), (std::vector<std::string>{"convbn"}));
  ASSERT_EQ(fallback->warnings().size(), 1u);
  EXPECT_NE(fallback->warnings()[0].find("no accelerator found"), std::string::npos);
}

/// One rule for plugin files: an item with a '/' or ending in ".so" is a
/// file, absolute or relative to the working directory; it is never looked
/// up on the search path (no "x.so.so"), and a bare name never finds a file
/// in the working directory.
TEST(PluginLoaderTest, ResolvesPluginFilesAgainstTheWorkingDirectory) {
  TempDir dir;
  fs::copy_file(kPluginDir / "example_convbn.so", dir.path() / "example_convbn.so");
  fs::create_directory(dir.path() / "sub");
  fs::copy_file(kPluginDir / "max_splat.so", dir.path() / "sub" / "max_splat.so");
  ScopedWorkingDirectory cwd(dir.path());
  const fs::path here = fs::current_path();
  SelectOptions options;
  options.searchPath = {kPluginDir};
  for (std::string item : {"./example_convbn.so", "example_convbn.so"}) {
    StatusOr<BackendSelection> s = selectBackends(item, options);
    ASSERT_TRUE(s.isOk()) << item << ": " << s.status().message();
    ASSERT_EQ(s->backends().size(), 1u);
    ASSERT_NE(s->backends()[0].plugin, nullptr);
    EXPECT_EQ(s->backends()[0].plugin->info().path, (here / "example_convbn.so").string())
        << item << " must load the file here, not the one on the search path";
  }
  StatusOr<BackendSelection> sub = selectBackends("sub/max_splat.so", options);
  ASSERT_TRUE(sub.isOk()) << sub.status().message();
  EXPECT_EQ(sub->backends()[0].plugin->info().path, (here / "sub" / "max_splat.so").string());

  StatusOr<BackendSelection> missing = selectBackends("missing.so", options);
  ASSERT_FALSE(missing.isOk());
  EXPECT_NE(missing.status().message().find("plugin " + (here / "missing.so").string()),
            std::string::npos)
      << missing.status().message();
  EXPECT_EQ(missing.status().message().find("missing.so.so"), std::string::npos)
      << missing.status().message();

  // A bare name is a search-path lookup: the file here is not it.
  options.searchPath = {dir.path() / "sub"};
  StatusOr<BackendSelection> byName = selectBackends("example_convbn", options);
  ASSERT_FALSE(byName.isOk()) << "a bare name found a file in the working directory";
  EXPECT_NE(byName.status().message().find("unknown backend 'example_convbn'"), std::string::npos);
}

/// SUBGRAPH_PLUGIN_PATH: relative entries are resolved against the working
/// directory, empty ones (the current directory in PATH's convention) are
/// skipped, and every entry that is not a directory is dropped with a line
/// saying which and why, never silently.
TEST(PluginLoaderTest, SearchPathResolvesRelativeEntriesAndSaysWhatItDrops) {
  TempDir dir;
  fs::create_directories(dir.path() / "rel" / "plugins");
  fs::create_directory(dir.path() / "abs");
  std::ofstream(dir.path() / "file") << "not a directory";
  ScopedWorkingDirectory cwd(dir.path());
  const fs::path here = fs::current_path();
  const std::string abs = (dir.path() / "abs").string();
  PluginSearchPath path =
      resolvePluginSearchPath("::rel/plugins:" + abs + ":missing:file:.:" + abs + "/");
  ASSERT_GE(path.dirs.size(), 3u);
  EXPECT_EQ(path.dirs[0], here / "rel" / "plugins");
  EXPECT_EQ(path.dirs[1], fs::path(abs));
  EXPECT_EQ(path.dirs[2], here);  // "." names it explicitly
  for (const fs::path& d : path.dirs) {
    EXPECT_TRUE(d.is_absolute()) << d;
    EXPECT_NE(d, here / "missing");
    EXPECT_NE(d, here / "file");
  }
  EXPECT_EQ(std::count(path.dirs.begin(), path.dirs.end(), fs::path(abs)), 1)
      << "'abs' and 'abs/' are one directory";
  ASSERT_EQ(path.dropped.size(), 2u);
  EXPECT_EQ(path.dropped[0], "SUBGRAPH_PLUGIN_PATH entry 'missing' (" +
                                 (here / "missing").string() + "): no such directory; ignored");
  EXPECT_EQ(path.dropped[1], "SUBGRAPH_PLUGIN_PATH entry 'file' (" + (here / "file").string() +
                                 "): not a directory; ignored");
  // A clean path drops nothing.
  EXPECT_TRUE(resolvePluginSearchPath(abs).dropped.empty());
}

/// A program in the build tree with no plugin directory beside it (this
/// test binary) searches the build's plugin directory; the installed
/// program's case is tests/plugins/out_of_tree_test.cmake.
TEST(PluginLoaderTest, BuildTreeProgramsFindTheBuildsPlugins) {
  std::vector<fs::path> dirs = pluginSearchPath(std::string());
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), kPluginDir.lexically_normal()), dirs.end());
}

/// Loading and unloading the example plugin many times leaves nothing
/// mapped and, under the asan preset, nothing leaked. Every 100th cycle
/// also instantiates its properties. SUBGRAPH_PLUGIN_LOAD_CYCLES overrides
/// the count (1000).
TEST(PluginLoaderTest, LoadsAndUnloadsAThousandTimes) {
  int cycles = 1000;
  if (const char* env = std::getenv("SUBGRAPH_PLUGIN_LOAD_CYCLES")) cycles = std::atoi(env);
  const fs::path path = kPluginDir / "example_convbn.so";
  for (int i = 0; i < cycles; ++i) {
    StatusOr<std::shared_ptr<LoadedPlugin>> loaded = loadPlugin(path);
    ASSERT_TRUE(loaded.isOk()) << "cycle " << i << ": " << loaded.status().message();
    if (i % 100 == 0) {
      partition::SubgraphBackend backend = loaded.value()->instantiateBackend();
      ASSERT_EQ(backend.properties.size(), 1u);
      EXPECT_EQ(backend.properties[0]->name(), "conv_bn");
    }
  }
  EXPECT_FALSE(isLoaded(path)) << "the plugin is still mapped after the last unload";
}

}  // namespace
}  // namespace subgraph::plugins
