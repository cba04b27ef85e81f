//===- plugins/host/plugin_library.cpp - Loading and checking one plugin --===//
//
// loadPlugin() in four steps, each of which can refuse the plugin with one
// line naming the path and the reason:
//  1. The file: it exists, is a regular file, its ELF header says it is a
//     shared library for this machine, and every program header's bytes lie
//     inside the file. Checking the header ourselves gives "wrong
//     architecture: built for AArch64" instead of the loader's "invalid ELF
//     header", and a truncated file a line instead of SIGBUS inside dlopen
//     (the loader maps segments past the end of the file and faults on
//     touching them).
//  2. The loader: Boost.DLL opens it by absolute path with RTLD_NOW (so an
//     unresolved symbol fails now, not in the middle of a run) and
//     RTLD_LOCAL (so two plugins' symbols never mix); a missing dependency
//     is named from dlerror().
//  3. The entry point: it must exist, and it is called inside a try block;
//     a failure or an exception is reported with the plugin's message.
//  4. The tables: ABI versions (both numbers printed), struct sizes, names,
//     required slots, patterns and op definitions are checked before any of
//     it is used, so a broken table is an error at load time rather than a
//     crash later.
// Whatever fails, the library is released and unloaded before returning.
//
//===----------------------------------------------------------------------===//
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <boost/dll/shared_library.hpp>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include "device_queue.h"
#include "host_api.h"
#include "pattern_check.h"
#include "plugin_tables.h"
#include "subgraph/ir/op_schema_builder.h"
#include "subgraph/plugins/plugin_loader.h"
#include "subgraph/support/file_io.h"

namespace subgraph::plugins {

struct LoadedPlugin::Library {
  boost::dll::shared_library library;
};

namespace {

std::string machineName(uint16_t machine) {
  switch (machine) {
    case EM_X86_64: return "x86-64";
    case EM_386: return "x86 (32-bit)";
    case EM_AARCH64: return "AArch64";
    case EM_ARM: return "ARM (32-bit)";
    case EM_PPC64: return "PowerPC64";
    case EM_S390: return "s390x";
    case EM_RISCV: return "RISC-V";
    default: return "machine " + std::to_string(machine);
  }
}

uint16_t hostMachine() {
#if defined(__x86_64__)
  return EM_X86_64;
#elif defined(__aarch64__)
  return EM_AARCH64;
#elif defined(__powerpc64__)
  return EM_PPC64;
#elif defined(__s390x__)
  return EM_S390;
#elif defined(__riscv)
  return EM_RISCV;
#else
  return EM_NONE;
#endif
}

constexpr const char* kNoSuchFile = "no such file";

// Where each program header's bytes lie, checked against the file's size:
// the loader maps every segment, and a segment past the end of a truncated
// file faults with SIGBUS inside dlopen when it is touched, which no error
// path can catch. "" when every extent lies inside the file.
std::string checkExtents(int fd, const ElfW(Ehdr) & ehdr, uint64_t size) {
  auto past = [&](uint64_t offset, uint64_t length) {
    return offset > size || length > size - offset;
  };
  auto truncated = [&](const std::string& what, uint64_t end) {
    return fmt::format("is a truncated ELF file: {} ends at byte {}, past the file's {} bytes",
                       what, end, size);
  };
  if (ehdr.e_phentsize != sizeof(ElfW(Phdr)) || ehdr.e_phnum == 0 || ehdr.e_phnum == PN_XNUM)
    return "is a malformed ELF file: no usable program headers";
  const uint64_t tableBytes = uint64_t{ehdr.e_phnum} * sizeof(ElfW(Phdr));
  if (past(ehdr.e_phoff, tableBytes))
    return truncated("the program header table", ehdr.e_phoff + tableBytes);
  // Section headers are not loaded, but a table past the end is a sure
  // sign of a cut file, and names it better than a segment would.
  if (ehdr.e_shoff != 0 && past(ehdr.e_shoff, uint64_t{ehdr.e_shnum} * ehdr.e_shentsize))
    return truncated("the section header table",
                     ehdr.e_shoff + uint64_t{ehdr.e_shnum} * ehdr.e_shentsize);
  std::vector<ElfW(Phdr)> headers(ehdr.e_phnum);
  const auto want = static_cast<ssize_t>(tableBytes);
  if (::pread(fd, headers.data(), tableBytes, static_cast<off_t>(ehdr.e_phoff)) != want)
    return "cannot be read (the program headers)";
  for (size_t i = 0; i < headers.size(); ++i)
    if (past(headers[i].p_offset, headers[i].p_filesz))
      return truncated(fmt::format("program header {} (type {:#x})", i, headers[i].p_type),
                       headers[i].p_offset + headers[i].p_filesz);
  return {};
}

// Step 1: the reason the file cannot be a plugin for this process, or "".
std::string checkFile(const std::filesystem::path& path) {
  std::error_code ec;
  auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return kNoSuchFile;
  if (std::filesystem::is_directory(status)) return "is a directory, not a shared library";
  if (!std::filesystem::is_regular_file(status)) return "is not a regular file";
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  struct stat st {};
  if (fd.get() < 0 || ::fstat(fd.get(), &st) != 0) return "cannot be read (permission denied?)";
  if (!S_ISREG(st.st_mode)) return "is not a regular file";
  unsigned char header[sizeof(ElfW(Ehdr))] = {};
  const ssize_t read = ::pread(fd.get(), header, sizeof(header), 0);
  const auto got = static_cast<size_t>(std::max<ssize_t>(read, 0));
  if (got < SELFMAG || std::memcmp(header, ELFMAG, SELFMAG) != 0)
    return got == 0 ? "is empty, not an ELF shared library" : "is not an ELF file";
  const bool host64 = sizeof(void*) == 8;
  if (header[EI_CLASS] != (host64 ? ELFCLASS64 : ELFCLASS32))
    return std::string("wrong architecture: a ") +
           (header[EI_CLASS] == ELFCLASS32 ? "32-bit" : "64-bit") + " ELF file, this is " +
           (host64 ? "64-bit" : "32-bit");
  if (got < sizeof(ElfW(Ehdr))) return "is a truncated ELF file: its header is incomplete";
  const bool hostLittle = [] {
    const uint16_t one = 1;
    return *reinterpret_cast<const unsigned char*>(&one) == 1;
  }();
  if (header[EI_DATA] != (hostLittle ? ELFDATA2LSB : ELFDATA2MSB))
    return "wrong architecture: the ELF file's byte order differs from this machine's";
  ElfW(Ehdr) ehdr;
  std::memcpy(&ehdr, header, sizeof(ehdr));
  if (ehdr.e_machine != hostMachine())
    return "wrong architecture: built for " + machineName(ehdr.e_machine) + ", this is " +
           machineName(hostMachine());
  if (ehdr.e_type != ET_DYN)
    return std::string("is not a shared library (ELF type ") +
           (ehdr.e_type == ET_EXEC   ? "executable"
            : ehdr.e_type == ET_REL  ? "relocatable object"
            : ehdr.e_type == ET_CORE ? "core dump"
                                     : std::to_string(ehdr.e_type)) +
           ")";
  return checkExtents(fd.get(), ehdr, static_cast<uint64_t>(st.st_size));
}

// Step 2's message, from dlerror(): which dependency is missing, or which
// symbol is unresolved, in words.
std::string explainLoadError(const std::filesystem::path& path, const char* dlmessage) {
  std::string m = dlmessage ? dlmessage : "unknown loader error";
  // dlerror() starts with the path it failed on; for the plugin itself
  // that repeats what the error line already says.
  const std::string self = path.string() + ": ";
  if (m.rfind(self, 0) == 0) m = m.substr(self.size());
  const std::string notFound = ": cannot open shared object file";
  if (size_t at = m.find(notFound); at != std::string::npos && at > 0)
    return "missing dependency " + m.substr(0, at) + " (not found by the system loader)";
  if (m.find("undefined symbol") != std::string::npos) return "unresolved symbol: " + m;
  return "the system loader refused it: " + m;
}

bool validName(const char* name) {
  if (!name || !*name) return false;
  for (const char* p = name; *p; ++p)
    if (!std::isalnum(static_cast<unsigned char>(*p)) && *p != '_' && *p != '-' && *p != '.')
      return false;
  return std::strcmp(name, "NONE") != 0;
}

std::string versionRange() {
  return std::to_string(SG_PLUGIN_ABI_MIN_VERSION) == std::to_string(SG_PLUGIN_ABI_VERSION)
             ? std::to_string(SG_PLUGIN_ABI_VERSION)
             : std::to_string(SG_PLUGIN_ABI_MIN_VERSION) + " to " +
                   std::to_string(SG_PLUGIN_ABI_VERSION);
}

// The reason a versioned struct header is unusable, or "".
std::string checkHeader(const char* what, uint32_t version, uint32_t size, size_t v1Size) {
  if (version < SG_PLUGIN_ABI_MIN_VERSION)
    return std::string(what) + " has plugin ABI version " + std::to_string(version) +
           ", older than this subgraph supports (" + versionRange() + ")";
  if (version > SG_PLUGIN_ABI_VERSION)
    return std::string(what) + " has plugin ABI version " + std::to_string(version) +
           ", newer than this subgraph's " + std::to_string(SG_PLUGIN_ABI_VERSION) +
           " (rebuild the plugin against this SDK or upgrade subgraph)";
  if (size < v1Size)
    return std::string(what) + " struct_size " + std::to_string(size) +
           " is smaller than version 1's " + std::to_string(v1Size);
  return {};
}

std::string checkProperty(const SgPropertyDesc* p, size_t index) {
  std::string what = "property " + std::to_string(index);
  if (!p) return what + " is null";
  if (std::string e =
          checkHeader(what.c_str(), p->abi_version, p->struct_size, SG_PROPERTY_DESC_V2_SIZE);
      !e.empty())
    return e;
  if (!validName(p->name)) return what + " has no valid name";
  what = "property '" + std::string(p->name) + "'";
  if (p->pattern) {
    StatusOr<partition::Pattern> pattern = adapters::buildPattern(*p->pattern, nullptr);
    if (!pattern.isOk()) return what + ": " + pattern.status().message();
  } else if (!p->create_selector || !p->destroy_selector || !p->select) {
    return what + " has neither a pattern nor create_selector/destroy_selector/select";
  }
  if (StatusOr<std::vector<std::string>> seeds = adapters::seedOpTypes(*p); !seeds.isOk())
    return what + " " + seeds.status().message();
  return {};
}

std::string checkOpDef(const SgOpDef* op, size_t index) {
  std::string what = "op definition " + std::to_string(index);
  if (!op) return what + " is null";
  if (std::string e = checkHeader(what.c_str(), op->abi_version, op->struct_size, sizeof(SgOpDef));
      !e.empty())
    return e;
  if (!op->name || !*op->name || !op->domain) return what + " has no domain or name";
  if ((op->num_inputs && !op->inputs) || (op->num_outputs && !op->outputs) ||
      (op->num_attrs && !op->attrs))
    return what + " has a null operand or attribute array";
  return {};
}

std::string checkKernel(const SgKernelDesc* k, size_t index) {
  std::string what = "kernel " + std::to_string(index);
  if (!k) return what + " is null";
  if (std::string e =
          checkHeader(what.c_str(), k->abi_version, k->struct_size, SG_KERNEL_DESC_V1_SIZE);
      !e.empty())
    return e;
  if (!k->op_type || !*k->op_type) return what + " has no op type";
  if (!k->create || !k->destroy || !k->run)
    return "kernel for '" + std::string(k->op_type) + "' lacks create, destroy or run";
  return {};
}

std::string checkTransform(const SgTransformDesc* t, size_t index) {
  std::string what = "transform " + std::to_string(index);
  if (!t) return what + " is null";
  if (std::string e =
          checkHeader(what.c_str(), t->abi_version, t->struct_size, sizeof(SgTransformDesc));
      !e.empty())
    return e;
  if (!t->name || !*t->name || !t->run) return what + " has no name or no run slot";
  if (t->stage != SG_TRANSFORM_PRE_PARTITION && t->stage != SG_TRANSFORM_POST_PARTITION)
    return "transform '" + std::string(t->name) + "' has unknown stage " + std::to_string(t->stage);
  return {};
}

}  // namespace

std::string adapters::checkPropertyTable(const SgPropertyDesc* const* table, size_t count) {
  std::set<std::string> seen;
  for (size_t i = 0; i < count; ++i) {
    if (std::string e = checkProperty(table[i], i); !e.empty()) return e;
    if (!seen.insert(table[i]->name).second)
      return "two properties are named '" + std::string(table[i]->name) + "'";
  }
  return {};
}

namespace {

// What `subgraph plugins` says about a plugin's device.
std::string describeDevice(const SgDeviceDesc* d) {
  if (!d) return "host memory";
  if (!adapters::isAcceleratorDevice(d)) return std::string(d->kind) + " (own allocator)";
  std::string s = adapters::deviceOf(*d).toString();
  if (d->description && *d->description) s += std::string(" (") + d->description + ")";
  return s;
}

// Step 4: the reason the plugin's tables are unusable, or "".
std::string checkTables(const SgPlugin* p) {
  if (!p) return "the entry point returned success but no plugin table";
  if (std::string e = checkHeader("the plugin", p->abi_version, p->struct_size, SG_PLUGIN_V1_SIZE);
      !e.empty())
    return e;
  if (!validName(p->name))
    return "the plugin has no valid backend name (letters, digits, '_', '-', '.'; not NONE)";
  if ((p->num_properties && !p->properties) || (p->num_op_defs && !p->op_defs) ||
      (p->num_transforms && !p->transforms) || (p->num_kernels && !p->kernels))
    return "the plugin table has a count with a null array";
  if (std::string e = adapters::checkPropertyTable(p->properties, p->num_properties); !e.empty())
    return e;
  if (std::string e = adapters::checkOptionTable(*p); !e.empty()) return e;
  std::set<std::string> seen;
  for (size_t i = 0; i < p->num_op_defs; ++i)
    if (std::string e = checkOpDef(p->op_defs[i], i); !e.empty()) return e;
  seen.clear();
  for (size_t i = 0; i < p->num_kernels; ++i) {
    if (std::string e = checkKernel(p->kernels[i], i); !e.empty()) return e;
    if (!seen.insert(p->kernels[i]->op_type).second)
      return "two kernels for op '" + std::string(p->kernels[i]->op_type) + "'";
  }
  for (size_t i = 0; i < p->num_transforms; ++i)
    if (std::string e = checkTransform(p->transforms[i], i); !e.empty()) return e;
  if (const SgDeviceDesc* d = p->device) {
    if (std::string e =
            checkHeader("the device", d->abi_version, d->struct_size, SG_DEVICE_DESC_V2_SIZE);
        !e.empty())
      return e;
    if (!d->kind) return "the device has no kind";
    if (std::strcmp(d->kind, "cpu") != 0 && !adapters::isAcceleratorDevice(d))
      return std::string("device kind '") + d->kind +
             "' needs plugin ABI version 3 (a device with its queues); the device table has "
             "version " +
             std::to_string(d->abi_version) + " and struct_size " + std::to_string(d->struct_size);
    if (!d->allocate || !d->deallocate) return "the device lacks allocate or deallocate";
    if (adapters::isAcceleratorDevice(d))
      if (std::string e = adapters::checkAcceleratorDevice(*p); !e.empty()) return e;
  }
  return {};
}

// The reason a since-2 struct header is unusable, or "".
std::string checkV2Header(const std::string& what, uint32_t version, uint32_t size, size_t v2Size) {
  if (version < 2)
    return what + " declares plugin ABI version " + std::to_string(version) +
           ", but it exists only since version 2";
  return checkHeader(what.c_str(), version, size, v2Size);
}

// Step 4, version 2: the plugin's layouts and copies. Every layout must be
// reachable from plain and back, or a value in it could never enter or
// leave the plugin's kernels.
std::string checkLayouts(const SgPlugin* p) {
  if (!adapters::hasV2Slots(*p)) return {};
  if ((p->num_layouts && !p->layouts) || (p->num_copies && !p->copies))
    return "the plugin table has a layout or copy count with a null array";
  std::set<std::string> names;
  std::set<const SgLayoutDesc*> known;
  for (size_t i = 0; i < p->num_layouts; ++i) {
    const SgLayoutDesc* l = p->layouts[i];
    std::string what = "layout " + std::to_string(i);
    if (!l) return what + " is null";
    if (std::string e = checkV2Header(what, l->abi_version, l->struct_size, sizeof(SgLayoutDesc));
        !e.empty())
      return e;
    if (!validName(l->name)) return what + " has no valid name";
    if (!l->byte_size) return "layout '" + std::string(l->name) + "' has no byte_size";
    if (!names.insert(l->name).second)
      return "two layouts are named '" + std::string(l->name) + "'";
    known.insert(l);
  }
  std::set<const SgLayoutDesc*> toPlain, fromPlain;
  for (size_t i = 0; i < p->num_copies; ++i) {
    const SgCopyDesc* c = p->copies[i];
    std::string what = "copy " + std::to_string(i);
    if (!c) return what + " is null";
    if (std::string e = checkV2Header(what, c->abi_version, c->struct_size, SG_COPY_DESC_V2_SIZE);
        !e.empty())
      return e;
    if (!c->run) return what + " has no run slot";
    const bool acrossDevice = c->abi_version >= 3 && c->struct_size >= SG_COPY_DESC_V3_SIZE &&
                              c->direction != SG_COPY_ON_HOST;
    if (acrossDevice && !adapters::isAcceleratorDevice(p->device))
      return what + " copies to or from a device, but the plugin has no device of its own";
    if (!c->from && !c->to && !acrossDevice)
      return what + " copies plain to plain (the host's job)";
    if ((c->from && !known.count(c->from)) || (c->to && !known.count(c->to)))
      return what + " names a layout that is not in the plugin's layouts";
    if (!c->from) fromPlain.insert(c->to);
    if (!c->to) toPlain.insert(c->from);
  }
  for (const SgLayoutDesc* l : known) {
    if (!fromPlain.count(l))
      return "layout '" + std::string(l->name) +
             "' has no copy from plain row-major: no value could enter it";
    if (!toPlain.count(l))
      return "layout '" + std::string(l->name) +
             "' has no copy to plain row-major: a value in it could never leave the plugin";
  }
  return {};
}

AttrKind attrKindOf(SgAttrKind kind) { return static_cast<AttrKind>(kind - 1); }

// Registers the plugin's op definitions. Ops live for the whole process
// (the registry never frees schemas); a reloaded plugin finds its ops
// already there and reuses them.
Status registerOps(const SgPlugin& p) {
  for (size_t i = 0; i < p.num_op_defs; ++i) {
    const SgOpDef& op = *p.op_defs[i];
    if (OpRegistry::global().lookup(op.domain, op.name)) continue;
    OpSchemaBuilder b(op.domain, op.name);
    if (op.doc) b.doc(op.doc);
    if (op.data_parallel) b.dataParallel();
    auto operand = [](const SgOperandDef& o, size_t k) {
      return o.name && *o.name ? std::string(o.name) : "operand" + std::to_string(k);
    };
    for (size_t k = 0; k < op.num_inputs; ++k) {
      const SgOperandDef& o = op.inputs[k];
      if (o.arity == 1)
        b.optionalInput(operand(o, k));
      else if (o.arity == 2)
        b.variadicInput(operand(o, k));
      else
        b.input(operand(o, k));
    }
    for (size_t k = 0; k < op.num_outputs; ++k) b.output(operand(op.outputs[k], k));
    if (op.attributes_from) b.attributesFrom(op.attributes_from);
    for (size_t k = 0; k < op.num_attrs; ++k) {
      const SgAttrDef& a = op.attrs[k];
      if (!a.value.name || a.value.kind < SG_ATTR_INT || a.value.kind > SG_ATTR_FLOATS)
        return Status::invalid("op definition '" + std::string(op.name) + "' attribute " +
                               std::to_string(k) + " has no name or an unsupported kind");
      if (a.required) {
        b.requiredAttr(a.value.name, attrKindOf(a.value.kind));
        continue;
      }
      AttrValue v;
      switch (a.value.kind) {
        case SG_ATTR_INT: v = a.value.i; break;
        case SG_ATTR_FLOAT: v = static_cast<float>(a.value.f); break;
        case SG_ATTR_STRING: v = std::string(a.value.s ? a.value.s : ""); break;
        case SG_ATTR_INTS:
          v = std::vector<int64_t>(a.value.ints, a.value.ints + (a.value.ints ? a.value.count : 0));
          break;
        default:
          v = std::vector<float>(a.value.floats,
                                 a.value.floats + (a.value.floats ? a.value.count : 0));
          break;
      }
      b.attr(a.value.name, attrKindOf(a.value.kind), std::move(v));
    }
    b.inferFrom(op.infer_from ? op.infer_from : "Identity");
    Status st = b.registerIn(OpRegistry::global());
    if (!st.isOk() && !OpRegistry::global().lookup(op.domain, op.name))
      return Status::invalid("op definition '" + std::string(op.domain) + "." + op.name +
                             "': " + st.message());
  }
  return Status::ok();
}

PluginInfo describe(const SgPlugin& p, const std::filesystem::path& path) {
  PluginInfo info;
  info.name = p.name;
  info.version = p.version ? p.version : "";
  info.description = p.description ? p.description : "";
  info.path = path.string();
  info.abiVersion = p.abi_version;
  for (size_t i = 0; i < p.num_properties; ++i) {
    const SgPropertyDesc& d = *p.properties[i];
    std::string kind = d.pattern ? "pattern" : "selector";
    // A selector's declared seeds say which nodes it is offered at all.
    if (StatusOr<std::vector<std::string>> seeds = adapters::seedOpTypes(d);
        seeds.isOk() && !seeds->empty())
      kind += fmt::format(", seeds {}", fmt::join(*seeds, "|"));
    info.properties.push_back(std::string(d.name) + " (" + kind + ")");
  }
  for (size_t i = 0; i < p.num_op_defs; ++i)
    info.ops.push_back(*p.op_defs[i]->domain
                           ? std::string(p.op_defs[i]->domain) + "." + p.op_defs[i]->name
                           : std::string(p.op_defs[i]->name));
  for (size_t i = 0; i < p.num_kernels; ++i) info.kernels.push_back(p.kernels[i]->op_type);
  for (size_t i = 0; i < p.num_transforms; ++i)
    info.transforms.push_back(
        std::string(p.transforms[i]->name) +
        (p.transforms[i]->stage == SG_TRANSFORM_PRE_PARTITION ? " (pre)" : " (post)"));
  info.device = describeDevice(p.device);
  if (adapters::hasV6Slots(p) && p.devices_for && adapters::isAcceleratorDevice(p.device))
    info.device += std::string("; a session may have more, ") + p.device->kind +
                   ":1 and on (its options say how many)";
  info.options = adapters::describeOptions(p);
  info.sessionProperties = adapters::hasV5Slots(p) && p.properties_for != nullptr;
  if (adapters::hasV2Slots(p)) {
    for (size_t i = 0; i < p.num_layouts; ++i) info.layouts.push_back(p.layouts[i]->name);
    for (size_t i = 0; i < p.num_copies; ++i) {
      const SgCopyDesc& c = *p.copies[i];
      std::string dtype = c.dtype == SG_DTYPE_UNDEFINED
                              ? "any type"
                              : std::string(dataTypeName(static_cast<DataType>(c.dtype)));
      // A device copy names its sides: "host plain -> emu plain (any type)".
      std::string from = c.from ? c.from->name : "plain", to = c.to ? c.to->name : "plain";
      if (c.abi_version >= 3 && c.struct_size >= SG_COPY_DESC_V3_SIZE &&
          c.direction != SG_COPY_ON_HOST && p.device) {
        std::string dev = p.device->kind;
        from = (c.direction == SG_COPY_HOST_TO_DEVICE ? "host " : dev + " ") + from;
        to = (c.direction == SG_COPY_DEVICE_TO_HOST ? "host " : dev + " ") + to;
      }
      info.copies.push_back(from + " -> " + to + " (" + dtype + ")");
    }
  }
  return info;
}

}  // namespace

const runtime::Layout* LoadedPlugin::layoutFor(const SgLayoutDesc* desc) const {
  for (const auto& l : layouts_)
    if (static_cast<const adapters::PluginLayout&>(*l).desc() == desc) return l.get();
  return nullptr;
}

LoadedPlugin::~LoadedPlugin() {
  // The plugin frees its state while its code is still mapped; only then
  // is the library closed.
  if (plugin_ && plugin_->release) plugin_->release(plugin_->user);
  plugin_ = nullptr;
  if (library_) library_->library.unload();
}

StatusOr<std::shared_ptr<LoadedPlugin>> loadPlugin(const std::filesystem::path& path) {
  auto refuse = [&](const std::string& reason) {
    return Status::invalid("plugin " + path.string() + ": " + reason);
  };
  if (!path.is_absolute()) return refuse("a plugin path must be absolute");
  if (std::string why = checkFile(path); !why.empty())
    return why == kNoSuchFile
               ? Status::error(StatusCode::kNotFound, "plugin " + path.string() + ": " + why)
               : refuse(why);

  std::shared_ptr<LoadedPlugin> loaded(new LoadedPlugin());
  loaded->library_ = std::make_unique<LoadedPlugin::Library>();
  boost::dll::fs::error_code ec;
  loaded->library_->library.load(
      boost::dll::fs::path(path.string()),
      boost::dll::load_mode::rtld_now | boost::dll::load_mode::rtld_local, ec);
  if (ec || !loaded->library_->library.is_loaded())
    return refuse(explainLoadError(path, dlerror()));

  boost::dll::shared_library& lib = loaded->library_->library;
  if (!lib.has(SUBGRAPH_PLUGIN_ENTRY_SYMBOL))
    return refuse("no entry point '" SUBGRAPH_PLUGIN_ENTRY_SYMBOL
                  "' (not a subgraph plugin, or built without SUBGRAPH_PLUGIN())");
  auto entry = reinterpret_cast<SgPluginEntryFn>(lib.get<void()>(SUBGRAPH_PLUGIN_ENTRY_SYMBOL));

  SgMessage message;
  const SgPlugin* table = nullptr;
  SgStatus st = SG_OK;
  try {
    st = entry(host::hostApi(), &table, &message);
  } catch (const std::exception& e) {
    return refuse(std::string("the entry point threw an exception: ") + e.what());
  } catch (...) {
    return refuse("the entry point threw an exception");
  }
  // A plugin that cannot run here (no device) is not a broken plugin:
  // kUnsupported lets discovery list it as unavailable.
  if (st == SG_UNAVAILABLE)
    return Status::error(StatusCode::kUnsupported, "plugin " + path.string() +
                                                       ": unavailable on this machine: " +
                                                       host::messageOr(message, "no message"));
  if (st != SG_OK)
    return refuse("the entry point failed (status " + std::to_string(st) +
                  "): " + host::messageOr(message, "no message"));
  // From here on the plugin owns state: keep the table so that the
  // destructor releases it whatever is refused below.
  if (table && table->abi_version >= SG_PLUGIN_ABI_MIN_VERSION &&
      table->abi_version <= SG_PLUGIN_ABI_VERSION && table->struct_size >= SG_PLUGIN_V1_SIZE)
    loaded->plugin_ = table;
  if (std::string why = checkTables(table); !why.empty()) return refuse(why);
  if (std::string why = checkLayouts(table); !why.empty()) return refuse(why);
  if (Status ops = registerOps(*table); !ops.isOk()) return refuse(ops.message());
  loaded->info_ = describe(*table, path);
  if (adapters::hasV2Slots(*table))
    for (size_t i = 0; i < table->num_layouts; ++i)
      loaded->layouts_.push_back(
          std::make_unique<adapters::PluginLayout>(*loaded, table->layouts[i]));
  return loaded;
}

}  // namespace subgraph::plugins
