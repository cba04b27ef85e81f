//===- tools/opgen/opgen.cpp - Build-time op class generator (ClassGen) ---===//
//
// Reads the declarative op table (core/ops/*.json) and writes, into the build
// tree, everything that would otherwise be written by hand for each op:
//
//   onnx_ops.h        one typed node class per op (ConvNode: getX(), getGroup(),
//                     setStrides(), verify(), hash(), isEqual(), clone(),
//                     print()), an attribute struct and a builder per op
//                     (createConv(graph, x, w, b, {.strides = {2, 2}}));
//   onnx_ops.cpp      the class members and registerBuiltinOps(), which
//                     registers every schema with its factory, InferFn and
//                     VerifyFn;
//   op_functions.h    declarations of the hand-written inference and
//                     verification functions the table names, so that a
//                     misspelt or mistyped function fails to compile;
//   ops.md            the op reference table for docs/ops.md.
//
// The table is validated strictly (unknown keys, defaults of the wrong kind,
// undefined type constraints, accessor name clashes): an error names the file
// and op and the build stops. Outputs are rewritten only when their content
// changes, so editing one op's doc string does not rebuild the world.
//
// Usage: opgen --header H --source S --functions F --markdown M table.json...
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

/// A table error: printed as "opgen: <message>" and the build fails.
struct TableError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Operand {
  std::string name;
  std::string arity = "single";  // single | optional | variadic
  int minCount = 1;
  std::string type;  // type constraint name or empty
  std::string doc;
  std::string accessor;  // e.g. "X" for getX()
  std::string param;     // builder parameter name, e.g. "x"
};

struct Attr {
  std::string name;
  std::string kind;  // int float string ints floats strings tensor graph graphs
  bool required = false;
  bool hasDefault = false;
  json defaultValue;
  std::string doc;
  std::string accessor;  // e.g. "AutoPad" for getAutoPad()
  std::string field;     // attribute-struct member, e.g. "autoPad"
};

struct Op {
  std::string family;  // table file stem, e.g. "nn"
  std::string file;
  std::string domain;  // "" is ONNX's default domain
  std::string name;
  int since = 1;
  std::string doc;
  bool dataParallel = false;
  std::vector<Operand> inputs;
  std::vector<Operand> outputs;
  std::vector<Attr> attrs;
  std::vector<std::pair<std::string, std::vector<std::string>>> typeConstraints;
  std::string infer;
  std::string verify;
};

struct Table {
  std::map<std::string, std::vector<std::string>> typeSets;
  std::vector<Op> ops;
  std::vector<std::pair<std::string, std::string>> families;  // stem, doc
};

const std::set<std::string> kDataTypes = {"u8",  "u16", "u32",  "u64", "i8",  "i16",  "i32",
                                          "i64", "f16", "bf16", "f32", "f64", "bool", "str"};
const std::set<std::string> kAttrKinds = {"int",     "float",  "string", "ints",  "floats",
                                          "strings", "tensor", "graph",  "graphs"};
const std::set<std::string> kCppKeywords = {
    "and",     "auto",    "bool",     "break",    "case",    "char",      "class",  "const",
    "delete",  "do",      "double",   "else",     "enum",    "explicit",  "false",  "float",
    "for",     "friend",  "if",       "int",      "long",    "namespace", "new",    "not",
    "or",      "private", "public",   "register", "return",  "short",     "signed", "sizeof",
    "static",  "struct",  "switch",   "template", "this",    "throw",     "true",   "try",
    "typedef", "union",   "unsigned", "using",    "virtual", "void",      "while",  "xor"};

[[noreturn]] void fail(const std::string& where, const std::string& message) {
  throw TableError(where + ": " + message);
}

bool isIdentifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

// "auto_pad" -> "AutoPad", "transA" -> "TransA", "data_0" -> "Data0".
std::string upperCamel(const std::string& name) {
  std::string out;
  bool upper = true;
  for (char c : name) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// "auto_pad" -> "autoPad", "X" -> "x", "InvStdDev" -> "invStdDev".
std::string lowerCamel(const std::string& name) {
  std::string out = upperCamel(name);
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

void checkKeys(const json& object, const std::set<std::string>& allowed, const std::string& where) {
  if (!object.is_object()) fail(where, "expected a JSON object");
  for (const auto& item : object.items())
    if (!allowed.count(item.key())) fail(where, "unknown key '" + item.key() + "'");
}

std::string getString(const json& object, const char* key, const std::string& where,
                      bool required = false) {
  auto it = object.find(key);
  if (it == object.end()) {
    if (required) fail(where, std::string("missing '") + key + "'");
    return {};
  }
  if (!it->is_string()) fail(where, std::string("'") + key + "' must be a string");
  return it->get<std::string>();
}

Operand parseOperand(const json& j, const std::string& where) {
  checkKeys(j, {"name", "arity", "min", "type", "doc"}, where);
  Operand o;
  o.name = getString(j, "name", where, true);
  if (!isIdentifier(o.name)) fail(where, "operand name '" + o.name + "' is not an identifier");
  std::string arity = getString(j, "arity", where);
  if (!arity.empty()) o.arity = arity;
  if (o.arity != "single" && o.arity != "optional" && o.arity != "variadic")
    fail(where, "operand '" + o.name + "': arity must be single, optional or variadic");
  if (j.contains("min")) {
    if (o.arity != "variadic") fail(where, "operand '" + o.name + "': 'min' needs variadic arity");
    if (!j["min"].is_number_integer() || j["min"].get<int>() < 0)
      fail(where, "operand '" + o.name + "': 'min' must be a non-negative integer");
    o.minCount = j["min"].get<int>();
  }
  o.type = getString(j, "type", where);
  o.doc = getString(j, "doc", where);
  return o;
}

bool defaultMatchesKind(const json& v, const std::string& kind) {
  auto all = [&](auto pred) { return v.is_array() && std::all_of(v.begin(), v.end(), pred); };
  if (kind == "int") return v.is_number_integer();
  if (kind == "float") return v.is_number();
  if (kind == "string") return v.is_string();
  if (kind == "ints") return all([](const json& e) { return e.is_number_integer(); });
  if (kind == "floats") return all([](const json& e) { return e.is_number(); });
  if (kind == "strings") return all([](const json& e) { return e.is_string(); });
  return false;  // tensors and graphs have no JSON default
}

Attr parseAttr(const json& j, const std::string& where) {
  checkKeys(j, {"name", "kind", "required", "default", "doc"}, where);
  Attr a;
  a.name = getString(j, "name", where, true);
  if (!isIdentifier(a.name)) fail(where, "attribute name '" + a.name + "' is not an identifier");
  a.kind = getString(j, "kind", where, true);
  if (!kAttrKinds.count(a.kind))
    fail(where, "attribute '" + a.name + "': unknown kind '" + a.kind + "'");
  if (j.contains("required")) {
    if (!j["required"].is_boolean())
      fail(where, "attribute '" + a.name + "': 'required' must be a bool");
    a.required = j["required"].get<bool>();
  }
  if (j.contains("default")) {
    a.hasDefault = true;
    a.defaultValue = j["default"];
    if (a.required) fail(where, "attribute '" + a.name + "' is required and cannot have a default");
    if (!defaultMatchesKind(a.defaultValue, a.kind))
      fail(where, "attribute '" + a.name + "': default " + a.defaultValue.dump() +
                      " is not a valid " + a.kind);
  }
  a.doc = getString(j, "doc", where);
  a.accessor = upperCamel(a.name);
  a.field = lowerCamel(a.name);
  return a;
}

// Gives every operand and attribute a unique accessor name. Where ONNX moved
// an attribute to an input of the same name (Slice "starts", Split "split"),
// the input keeps getStarts() and the attribute becomes getStartsAttr().
void assignAccessors(Op& op, const std::string& where) {
  std::set<std::string> taken;
  for (auto* list : {&op.inputs, &op.outputs})
    for (auto& o : *list) {
      o.accessor = upperCamel(o.name);
      if (!taken.insert(o.accessor).second)
        fail(where, "two operands would both get the accessor get" + o.accessor + "()");
    }
  for (auto& a : op.attrs) {
    if (taken.count(a.accessor)) a.accessor += "Attr";
    if (!taken.insert(a.accessor).second)
      fail(where, "attribute '" + a.name + "' clashes with accessor get" + a.accessor + "()");
  }
  // Builder parameters: lowerCamel, avoiding keywords and the fixed
  // parameters of every builder.
  std::set<std::string> params = {"graph", "attrs", "options", "operandList", "attrList"};
  for (auto& o : op.inputs) {
    o.param = lowerCamel(o.name);
    if (kCppKeywords.count(o.param) || params.count(o.param)) o.param += "In";
    if (!params.insert(o.param).second)
      fail(where, "input '" + o.name + "' clashes with builder parameter '" + o.param + "'");
  }
  std::set<std::string> fields;
  for (auto& a : op.attrs) {
    if (kCppKeywords.count(a.field)) a.field += "Value";
    if (!fields.insert(a.field).second)
      fail(where, "attribute '" + a.name + "' clashes with attribute field '" + a.field + "'");
  }
}

Op parseOp(const json& j, const std::string& file, const std::string& family,
           const std::map<std::string, std::vector<std::string>>& typeSets) {
  std::string where = file;
  checkKeys(j,
            {"name", "domain", "since", "doc", "dataParallel", "inputs", "outputs", "attributes",
             "typeConstraints", "infer", "verify"},
            where + ": op " + (j.is_object() && j.contains("name") ? j["name"].dump() : "?"));
  Op op;
  op.file = file;
  op.family = family;
  op.name = getString(j, "name", where, true);
  op.domain = getString(j, "domain", where);
  if (op.domain == "ai.onnx") op.domain.clear();
  where += ": op '" + op.name + "'";
  if (!isIdentifier(op.name)) fail(where, "op name is not an identifier");
  if (j.contains("since")) {
    if (!j["since"].is_number_integer() || j["since"].get<int>() < 1)
      fail(where, "'since' must be a positive integer");
    op.since = j["since"].get<int>();
  }
  op.doc = getString(j, "doc", where, true);
  if (j.contains("dataParallel")) {
    if (!j["dataParallel"].is_boolean()) fail(where, "'dataParallel' must be a bool");
    op.dataParallel = j["dataParallel"].get<bool>();
  }
  for (const char* key : {"inputs", "outputs", "attributes"})
    if (j.contains(key) && !j[key].is_array())
      fail(where, std::string("'") + key + "' must be a list");
  if (j.contains("inputs"))
    for (const auto& o : j["inputs"]) op.inputs.push_back(parseOperand(o, where));
  if (j.contains("outputs"))
    for (const auto& o : j["outputs"]) op.outputs.push_back(parseOperand(o, where));
  if (op.outputs.empty()) fail(where, "an op needs at least one output");
  if (j.contains("attributes"))
    for (const auto& a : j["attributes"]) op.attrs.push_back(parseAttr(a, where));
  {
    std::set<std::string> names;
    for (const auto& a : op.attrs)
      if (!names.insert(a.name).second) fail(where, "attribute '" + a.name + "' is listed twice");
  }
  for (const auto* list : {&op.inputs, &op.outputs}) {
    std::set<std::string> names;
    for (size_t i = 0; i < list->size(); ++i) {
      if (!names.insert((*list)[i].name).second)
        fail(where, "operand '" + (*list)[i].name + "' is listed twice");
      if ((*list)[i].arity == "variadic" && i + 1 != list->size())
        fail(where, "variadic operand '" + (*list)[i].name + "' must be the last one");
    }
  }
  if (j.contains("typeConstraints")) {
    const json& tcs = j["typeConstraints"];
    if (!tcs.is_object()) fail(where, "'typeConstraints' must be an object");
    for (const auto& item : tcs.items()) {
      std::vector<std::string> types;
      if (item.value().is_string()) {
        std::string ref = item.value().get<std::string>();
        if (ref.empty() || ref[0] != '@' || !typeSets.count(ref.substr(1)))
          fail(where, "type constraint '" + item.key() + "' names unknown type set '" + ref + "'");
        types = typeSets.at(ref.substr(1));
      } else if (item.value().is_array()) {
        for (const auto& t : item.value()) {
          if (!t.is_string() || !kDataTypes.count(t.get<std::string>()))
            fail(where, "type constraint '" + item.key() + "': unknown element type " + t.dump());
          types.push_back(t.get<std::string>());
        }
      } else {
        fail(where, "type constraint '" + item.key() + "' must be \"@set\" or a list of types");
      }
      op.typeConstraints.emplace_back(item.key(), types);
    }
  }
  for (const auto* list : {&op.inputs, &op.outputs})
    for (const auto& o : *list)
      if (!o.type.empty() && std::none_of(op.typeConstraints.begin(), op.typeConstraints.end(),
                                          [&](const auto& tc) { return tc.first == o.type; }))
        fail(where, "operand '" + o.name + "' uses undefined type constraint '" + o.type + "'");
  op.infer = getString(j, "infer", where);
  op.verify = getString(j, "verify", where);
  for (const std::string* fn : {&op.infer, &op.verify})
    if (!fn->empty() && !isIdentifier(*fn)) fail(where, "'" + *fn + "' is not a C++ function name");
  assignAccessors(op, where);
  return op;
}

json readJson(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw TableError(file + ": cannot open");
  try {
    return json::parse(in, nullptr, true, /*ignore_comments=*/false);
  } catch (const json::parse_error& e) {
    throw TableError(file + ": " + e.what());
  }
}

Table loadTables(const std::vector<std::string>& files) {
  Table table;
  std::vector<std::pair<std::string, json>> docs;
  for (const auto& file : files) docs.emplace_back(file, readJson(file));
  // Type sets first, so any table may use any set.
  for (const auto& [file, doc] : docs) {
    checkKeys(doc, {"doc", "typeSets", "ops"}, file);
    if (!doc.contains("typeSets")) continue;
    for (const auto& item : doc["typeSets"].items()) {
      if (table.typeSets.count(item.key()))
        fail(file, "type set '" + item.key() + "' defined twice");
      std::vector<std::string> types;
      for (const auto& t : item.value()) {
        if (!t.is_string() || !kDataTypes.count(t.get<std::string>()))
          fail(file, "type set '" + item.key() + "': unknown element type " + t.dump());
        types.push_back(t.get<std::string>());
      }
      table.typeSets[item.key()] = types;
    }
  }
  std::set<std::string> names;
  for (const auto& [file, doc] : docs) {
    if (!doc.contains("ops")) continue;
    std::string family = std::filesystem::path(file).stem().string();
    table.families.emplace_back(family, doc.value("doc", ""));
    if (!doc["ops"].is_array()) fail(file, "'ops' must be a list");
    for (const auto& j : doc["ops"]) {
      Op op = parseOp(j, file, family, table.typeSets);
      if (!names.insert(op.name).second) fail(file, "op '" + op.name + "' is defined twice");
      table.ops.push_back(std::move(op));
    }
  }
  return table;
}

//===--- C++ spelling helpers ---------------------------------------------===//

std::string cppString(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
  return out + "\"";
}

// Shortest round-trip spelling of a float, always a valid C++ float literal.
std::string cppFloat(double value) {
  char buf[64];
  auto result = std::to_chars(buf, buf + sizeof(buf), static_cast<float>(value));
  std::string s(buf, result.ptr);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s + "f";
}

std::string cppDataType(const std::string& t) {
  static const std::map<std::string, std::string> names = {
      {"u8", "kUInt8"},    {"u16", "kUInt16"},    {"u32", "kUInt32"},  {"u64", "kUInt64"},
      {"i8", "kInt8"},     {"i16", "kInt16"},     {"i32", "kInt32"},   {"i64", "kInt64"},
      {"f16", "kFloat16"}, {"bf16", "kBFloat16"}, {"f32", "kFloat32"}, {"f64", "kFloat64"},
      {"bool", "kBool"},   {"str", "kString"}};
  return "DataType::" + names.at(t);
}

std::string cppAttrKind(const std::string& kind) {
  static const std::map<std::string, std::string> names = {
      {"int", "kInt"},       {"float", "kFloat"},   {"string", "kString"},
      {"ints", "kInts"},     {"floats", "kFloats"}, {"strings", "kStrings"},
      {"tensor", "kTensor"}, {"graph", "kGraph"},   {"graphs", "kGraphs"}};
  return "AttrKind::" + names.at(kind);
}

std::string cppArity(const std::string& arity) {
  if (arity == "optional") return "Arity::kOptional";
  if (arity == "variadic") return "Arity::kVariadic";
  return "Arity::kSingle";
}

// The C++ type of an attribute's value.
std::string valueType(const std::string& kind) {
  static const std::map<std::string, std::string> types = {
      {"int", "int64_t"},
      {"float", "float"},
      {"string", "std::string"},
      {"ints", "std::vector<int64_t>"},
      {"floats", "std::vector<float>"},
      {"strings", "std::vector<std::string>"},
      {"tensor", "Tensor"},
      {"graph", "std::shared_ptr<Graph>"},
      {"graphs", "std::vector<std::shared_ptr<Graph>>"}};
  return types.at(kind);
}

bool isGraphKind(const std::string& kind) { return kind == "graph" || kind == "graphs"; }

// What a typed getter returns: the value itself when a default or the
// verifier guarantees one, an optional otherwise, a pointer for tensors.
std::string getterType(const Attr& a) {
  if (a.kind == "tensor") return "const Tensor*";
  if (a.kind == "graph") return "std::shared_ptr<Graph>";
  if (a.kind == "graphs") return "std::vector<std::shared_ptr<Graph>>";
  if (a.hasDefault || a.required) return valueType(a.kind);
  return "std::optional<" + valueType(a.kind) + ">";
}

std::string cppDefault(const Attr& a) {
  const json& v = a.defaultValue;
  auto list = [&](auto element) {
    std::string s = valueType(a.kind) + "{";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + element(v[i]);
    return s + "}";
  };
  if (a.kind == "int") return "int64_t{" + std::to_string(v.get<int64_t>()) + "}";
  if (a.kind == "float") return cppFloat(v.get<double>());
  if (a.kind == "string") return "std::string(" + cppString(v.get<std::string>()) + ")";
  if (a.kind == "ints")
    return list([](const json& e) { return "int64_t{" + std::to_string(e.get<int64_t>()) + "}"; });
  if (a.kind == "floats") return list([](const json& e) { return cppFloat(e.get<double>()); });
  return list([](const json& e) { return "std::string(" + cppString(e.get<std::string>()) + ")"; });
}

// Human spelling of a default for docs: 1, 1e-05, "NOTSET", [1, 1].
std::string docDefault(const Attr& a) {
  if (a.kind != "float") return a.defaultValue.dump();
  std::string literal = cppFloat(a.defaultValue.get<double>());
  return literal.substr(0, literal.size() - 1);  // drop the 'f' suffix
}

//===--- onnx_ops.h ---------------------------------------------------------===//

void emitClassDecl(std::ostream& os, const Op& op) {
  const std::string cls = op.name + "Node";
  os << "/// " << op.name << " (" << (op.domain.empty() ? "ai.onnx" : op.domain) << ", since opset "
     << op.since << "): " << op.doc << "\n";
  os << "class " << cls << " final : public Node {\n public:\n";
  os << "  /// The op type, as written in graphs and ONNX files.\n";
  os << "  static constexpr std::string_view kOpType = " << cppString(op.name) << ";\n";
  os << "  /// True if `node` is a " << op.name << " node.\n";
  os << "  static bool classof(const Node* node);\n";
  os << "  /// The interned op key shared by every " << op.name << " node.\n";
  os << "  static const OpKey* staticOpKey();\n\n";

  auto emitOperands = [&](const std::vector<Operand>& list, bool isInput) {
    const char* fn = isInput ? "input" : "output";
    const char* all = isInput ? "inputs" : "outputs";
    for (size_t i = 0; i < list.size(); ++i) {
      const Operand& o = list[i];
      std::string what = std::string(isInput ? "Input" : "Output") + " '" + o.name + "'";
      std::string doc = o.doc.empty() ? "" : " " + o.doc;
      if (o.arity == "variadic") {
        os << "  /// " << what << " (variadic): every " << fn << " from position " << i << " on."
           << doc << "\n";
        os << "  std::span<Value* const> get" << o.accessor
           << "() const { return detail::operandTail(" << all << "(), " << i << "); }\n";
      } else {
        os << "  /// " << (o.arity == "optional" ? "Optional " : "")
           << (o.arity == "optional"
                   ? std::string(isInput ? "input" : "output") + " '" + o.name + "'"
                   : what)
           << (o.arity == "optional" ? "; null when absent." : ".") << doc << "\n";
        os << "  Value* get" << o.accessor << "() const { return " << fn << "(" << i << "); }\n";
      }
    }
  };
  emitOperands(op.inputs, true);
  emitOperands(op.outputs, false);

  if (!op.attrs.empty()) os << "\n";
  for (const Attr& a : op.attrs) {
    std::string status = a.required     ? "required"
                         : a.hasDefault ? "default " + docDefault(a)
                                        : "optional";
    os << "  /// Attribute '" << a.name << "' (" << a.kind << ", " << status << ")."
       << (a.doc.empty() ? "" : " " + a.doc);
    if (a.required)
      os << " Throws `Error` naming the node when absent.";
    else if (a.kind == "tensor" || isGraphKind(a.kind))
      os << " Null or empty when absent.";
    else if (!a.hasDefault)
      os << " nullopt when absent.";
    os << "\n  " << getterType(a) << " get" << a.accessor << "() const;\n";
    os << "  /// Sets attribute '" << a.name << "'.\n";
    os << "  void set" << a.accessor << "(" << valueType(a.kind) << " v) { setAttr("
       << cppString(a.name) << ", std::move(v)); }\n";
  }

  os << "\n  /// Checks operand counts and attribute kinds against the schema, then\n"
        "  /// the op's own rules; the error names this node.\n";
  os << "  Status verify() const;\n";
  os << "  /// Hash of op, inputs, output count and effective attribute values:\n"
        "  /// defaults are applied, so spelling out a default does not change it.\n"
        "  /// hash(), isEqual() and print() never throw: on a node whose\n"
        "  /// attributes have the wrong kinds they use the raw attributes.\n";
  os << "  size_t hash() const;\n";
  os << "  /// Same inputs, output count and effective attribute values.\n";
  os << "  bool isEqual(const " << cls << "& other) const;\n";
  os << "  /// Copies this node into `graph` reading `inputs` (same count as this\n"
        "  /// node's), with the same name, attributes and output types.\n";
  os << "  " << cls << "* clone(Graph& graph, std::vector<Value*> inputs) const;\n";
  os << "  /// Prints the node in text-format style with every effective attribute.\n";
  os << "  void print(std::ostream& os) const;\n";
  os << "\n private:\n";
  os << "  friend void registerBuiltinOps(OpRegistry&);\n";
  os << "  " << cls << "() = default;\n";
  os << "  static std::unique_ptr<Node> make();\n";
  os << "};\n\n";
}

void emitBuilderDecl(std::ostream& os, const Op& op) {
  const std::string cls = op.name + "Node";
  if (!op.attrs.empty()) {
    os << "/// Attributes for create" << op.name << "(); an unset member keeps the op's default.\n";
    os << "struct " << op.name << "Attrs {\n";
    for (const Attr& a : op.attrs) {
      os << "  /// '" << a.name << "'" << (a.required ? " (required)" : "") << ".\n";
      if (a.kind == "graph")
        os << "  std::shared_ptr<Graph> " << a.field << " = nullptr;\n";
      else
        os << "  std::optional<" << valueType(a.kind) << "> " << a.field << " = std::nullopt;\n";
    }
    os << "};\n";
  }
  os << "/// Adds a " << op.name
     << " node to `graph`; see NodeBuildOptions for naming,\n"
        "/// output count and type inference. Throws `Error` on a null required input\n"
        "/// or a failed inference.\n";
  os << cls << "* create" << op.name << "(Graph& graph";
  // Trailing optional and variadic operands get defaults.
  size_t firstDefaulted = op.inputs.size();
  while (firstDefaulted > 0 && op.inputs[firstDefaulted - 1].arity != "single") --firstDefaulted;
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const Operand& o = op.inputs[i];
    os << ", " << (o.arity == "variadic" ? "std::vector<Value*> " : "Value* ") << o.param;
    if (i >= firstDefaulted) os << (o.arity == "variadic" ? " = {}" : " = nullptr");
  }
  if (!op.attrs.empty()) os << ", const " << op.name << "Attrs& attrs = {}";
  os << ", const NodeBuildOptions& options = {});\n\n";
}

std::string emitHeader(const Table& table) {
  std::ostringstream os;
  os << "//===- subgraph/ops/onnx_ops.h - Typed node classes for built-in ops -*- C++ -*-===//\n"
        "//\n"
        "// GENERATED by tools/opgen from core/ops/*.json; do not edit. Include\n"
        "// \"subgraph/ir/op_classes.h\" rather than this file.\n"
        "//\n"
        "// One class per op adds typed accessors to Node but no data, so\n"
        "// isa<ConvNode>(n) and dyn_cast<ConvNode>(n) work on any node; create<Op>()\n"
        "// builds a node with typed attributes and infers its output types.\n"
        "//\n"
        "//===----------------------------------------------------------------------===//\n"
        "#pragma once\n\n"
        "#include <cstdint>\n#include <memory>\n#include <optional>\n#include <ostream>\n"
        "#include <span>\n#include <string>\n#include <string_view>\n#include <vector>\n\n"
        "#include \"subgraph/ir/graph.h\"\n"
        "#include \"subgraph/ir/node.h\"\n"
        "#include \"subgraph/ir/op_classes.h\"\n\n"
        "namespace subgraph {\n\n";
  std::string family;
  for (const Op& op : table.ops) {
    if (op.family != family) {
      family = op.family;
      os << "//===--- " << family << " (core/ops/" << family << ".json) ---===//\n\n";
    }
    emitClassDecl(os, op);
    emitBuilderDecl(os, op);
  }
  os << "}  // namespace subgraph\n";
  return os.str();
}

//===--- onnx_ops.cpp -------------------------------------------------------===//

std::string getterBody(const Attr& a) {
  std::string n = cppString(a.name);
  if (a.kind == "tensor") return "return detail::tensorAttr(*this, " + n + ");";
  if (a.kind == "graph") return "return detail::graphAttr(*this, " + n + ");";
  if (a.kind == "graphs") return "return detail::graphsAttr(*this, " + n + ");";
  if (a.required)
    return "return detail::requiredAttr<" + valueType(a.kind) + ">(*this, " + n + ");";
  if (!a.hasDefault)
    return "return detail::optionalAttr<" + valueType(a.kind) + ">(*this, " + n + ");";
  static const std::map<std::string, std::string> getters = {
      {"int", "getInt"},   {"float", "getFloat"},   {"string", "getString"},
      {"ints", "getInts"}, {"floats", "getFloats"}, {"strings", "getStrings"}};
  // Node::get* applies the schema default, which is the table default.
  return "return " + getters.at(a.kind) + "(" + n + ");";
}

void emitClassDefs(std::ostream& os, const Op& op) {
  const std::string cls = op.name + "Node";
  os << "//===--- " << op.name << " ---===//\n\n";
  os << "const OpKey* " << cls << "::staticOpKey() {\n"
     << "  static const OpKey* const key = OpRegistry::global().intern(" << cppString(op.domain)
     << ", kOpType);\n"
     << "  return key;\n}\n\n";
  os << "bool " << cls
     << "::classof(const Node* node) { return &node->opKey() == staticOpKey(); }\n\n";
  os << "std::unique_ptr<Node> " << cls << "::make() { return std::unique_ptr<Node>(new " << cls
     << "()); }\n\n";
  for (const Attr& a : op.attrs)
    os << getterType(a) << " " << cls << "::get" << a.accessor << "() const { " << getterBody(a)
       << " }\n";
  if (!op.attrs.empty()) os << "\n";

  os << "Status " << cls << "::verify() const {\n"
     << "  SUBGRAPH_RETURN_IF_ERROR(verifyAgainstSchema(*this));\n";
  if (!op.verify.empty())
    os << "  return ops::" << op.verify << "(*this);\n";
  else
    os << "  return Status::ok();\n";
  os << "}\n\n";

  // A node whose declared attributes have the wrong kind (or that lacks a
  // required one) cannot be read through the typed getters; hash, isEqual
  // and print then fall back to the raw attributes instead of throwing.
  const bool hasAttrs = !op.attrs.empty();
  os << "size_t " << cls << "::hash() const {\n";
  if (hasAttrs) os << "  if (!detail::attrsWellTyped(*this)) return Node::hash();\n";
  os << "  size_t h = detail::hashOperands(*this);\n";
  for (const Attr& a : op.attrs)
    os << "  detail::hashMix(h, detail::hashAttr(get" << a.accessor << "()));\n";
  os << "  detail::hashMix(h, detail::hashUndeclaredAttrs(*this));\n  return h;\n}\n\n";

  os << "bool " << cls << "::isEqual(const " << cls << "& other) const {\n";
  if (hasAttrs)
    os << "  if (!detail::attrsWellTyped(*this) || !detail::attrsWellTyped(other))\n"
          "    return isStructurallyEqual(other);\n";
  os << "  return detail::sameOperands(*this, other)";
  for (const Attr& a : op.attrs)
    os << " &&\n         detail::sameAttr(get" << a.accessor << "(), other.get" << a.accessor
       << "())";
  os << " &&\n         detail::sameUndeclaredAttrs(*this, other);\n}\n\n";

  os << cls << "* " << cls << "::clone(Graph& graph, std::vector<Value*> inputs) const {\n"
     << "  return static_cast<" << cls
     << "*>(detail::cloneNode(*this, graph, std::move(inputs)));\n}\n\n";

  os << "void " << cls << "::print(std::ostream& os) const {\n"
     << "  detail::printNodeHead(*this, os);\n  bool first = true;\n";
  if (hasAttrs) {
    os << "  const bool typed = detail::attrsWellTyped(*this);\n  if (typed) {\n";
    for (const Attr& a : op.attrs)
      os << "    detail::printAttr(os, first, " << cppString(a.name) << ", get" << a.accessor
         << "());\n";
    os << "  }\n  detail::printNodeTail(*this, os, first, typed);\n}\n\n";
  } else {
    os << "  detail::printNodeTail(*this, os, first, true);\n}\n\n";
  }

  // Builder.
  os << cls << "* create" << op.name << "(Graph& graph";
  for (const Operand& o : op.inputs)
    os << ", " << (o.arity == "variadic" ? "std::vector<Value*> " : "Value* ") << o.param;
  if (!op.attrs.empty()) os << ", const " << op.name << "Attrs& attrs";
  os << ", const NodeBuildOptions& options) {\n";
  os << "  std::vector<Value*> operandList;\n";
  for (const Operand& o : op.inputs) {
    if (o.arity == "single")
      os << "  detail::requireInput(" << o.param << ", \"" << op.name << "\", \"" << o.name
         << "\");\n";
    if (o.arity == "variadic")
      os << "  operandList.insert(operandList.end(), " << o.param << ".begin(), " << o.param
         << ".end());\n";
    else
      os << "  operandList.push_back(" << o.param << ");\n";
  }
  os << "  std::vector<Attribute> attrList;\n";
  for (const Attr& a : op.attrs) {
    if (a.kind == "graph")
      os << "  if (attrs." << a.field << ") attrList.emplace_back(" << cppString(a.name)
         << ", attrs." << a.field << ");\n";
    else
      os << "  if (attrs." << a.field << ") attrList.emplace_back(" << cppString(a.name)
         << ", *attrs." << a.field << ");\n";
  }
  os << "  return static_cast<" << cls << "*>(detail::buildNode(graph, " << cls
     << "::staticOpKey(), std::move(operandList), std::move(attrList), options));\n}\n\n";
}

void emitRegistration(std::ostream& os, const Op& op) {
  auto operands = [&](const char* field, const std::vector<Operand>& list) {
    if (list.empty()) return;
    os << "    s." << field << " = {\n";
    for (const Operand& o : list)
      os << "        {" << cppString(o.name) << ", " << cppArity(o.arity) << ", "
         << cppString(o.type) << ", " << cppString(o.doc) << ", " << o.minCount << "},\n";
    os << "    };\n";
  };
  os << "  {\n    OpSchema s;\n    s.domain = " << cppString(op.domain) << ";\n"
     << "    s.name = " << cppString(op.name) << ";\n"
     << "    s.sinceVersion = " << op.since << ";\n"
     << "    s.doc = " << cppString(op.doc) << ";\n"
     << "    s.dataParallel = " << (op.dataParallel ? "true" : "false") << ";\n";
  operands("inputs", op.inputs);
  operands("outputs", op.outputs);
  if (!op.attrs.empty()) {
    os << "    s.attributes = {\n";
    for (const Attr& a : op.attrs)
      os << "        {" << cppString(a.name) << ", " << cppAttrKind(a.kind) << ", "
         << (a.required ? "true" : "false") << ", "
         << (a.hasDefault ? "AttrValue(" + cppDefault(a) + ")" : std::string("std::nullopt"))
         << ", " << cppString(a.doc) << "},\n";
    os << "    };\n";
  }
  if (!op.typeConstraints.empty()) {
    os << "    s.typeConstraints = {\n";
    for (const auto& [name, types] : op.typeConstraints) {
      os << "        {" << cppString(name) << ", {";
      for (size_t i = 0; i < types.size(); ++i) os << (i ? ", " : "") << cppDataType(types[i]);
      os << "}},\n";
    }
    os << "    };\n";
  }
  if (!op.infer.empty()) os << "    s.infer = ops::" << op.infer << ";\n";
  if (!op.verify.empty()) os << "    s.verify = ops::" << op.verify << ";\n";
  os << "    s.factory = &" << op.name << "Node::make;\n"
     << "    registerOrThrow(registry, std::move(s));\n  }\n";
}

std::string emitSource(const Table& table) {
  std::ostringstream os;
  os << "//===- onnx_ops.cpp - Typed node classes and built-in op registration -----===//\n"
        "//\n"
        "// GENERATED by tools/opgen from core/ops/*.json; do not edit.\n"
        "//\n"
        "//===----------------------------------------------------------------------===//\n"
        "#include \"subgraph/ops/onnx_ops.h\"\n\n"
        "#include \"op_functions.h\"\n\n"
        "namespace subgraph {\n\n";
  for (const Op& op : table.ops) emitClassDefs(os, op);
  os << "namespace {\n\n"
        "// A built-in schema that fails to register is a bug in the op table or the\n"
        "// generator, never a user error, so it is reported loudly.\n"
        "void registerOrThrow(OpRegistry& registry, OpSchema schema) {\n"
        "  std::string name = schema.name;\n"
        "  Status status = registry.registerSchema(std::move(schema));\n"
        "  if (!status.isOk())\n"
        "    throw Error(StatusCode::kInternal, \"built-in op '\" + name + \"': \" + "
        "status.message());\n"
        "}\n\n"
        "}  // namespace\n\n"
        "void registerBuiltinOps(OpRegistry& registry) {\n";
  for (const Op& op : table.ops) emitRegistration(os, op);
  os << "}\n\n}  // namespace subgraph\n";
  return os.str();
}

//===--- op_functions.h -----------------------------------------------------===//

std::string emitFunctions(const Table& table) {
  std::set<std::string> infers, verifies;
  for (const Op& op : table.ops) {
    if (!op.infer.empty()) infers.insert(op.infer);
    if (!op.verify.empty()) verifies.insert(op.verify);
  }
  std::ostringstream os;
  os << "//===- op_functions.h - Hand-written op functions named by the op table -*- C++ -*-===//\n"
        "//\n"
        "// GENERATED by tools/opgen from core/ops/*.json; do not edit. The\n"
        "// definitions live in core/ops/infer_<family>.cpp, next to the op family's\n"
        "// other rules.\n"
        "//\n"
        "//===----------------------------------------------------------------------===//\n"
        "#pragma once\n\n"
        "#include \"subgraph/ir/node.h\"\n"
        "#include \"subgraph/ir/shape_inference.h\"\n"
        "#include \"subgraph/support/status.h\"\n\n"
        "namespace subgraph::ops {\n\n";
  for (const auto& fn : infers) {
    os << "/// Used by:";
    for (const Op& op : table.ops)
      if (op.infer == fn) os << " " << op.name;
    os << ".\nStatus " << fn << "(InferenceContext& ctx);\n";
  }
  os << "\n";
  for (const auto& fn : verifies) {
    os << "/// Used by:";
    for (const Op& op : table.ops)
      if (op.verify == fn) os << " " << op.name;
    os << ".\nStatus " << fn << "(const Node& node);\n";
  }
  os << "\n}  // namespace subgraph::ops\n";
  return os.str();
}

//===--- ops.md -------------------------------------------------------------===//

std::string emitMarkdown(const Table& table) {
  std::ostringstream os;
  os << "<!-- Generated by tools/opgen into <build>/generated/ops.md. -->\n";
  os << table.ops.size()
     << " built-in ops. In the operand lists `?`\n"
        "marks an optional operand and `...` a variadic one; in the attribute lists `!`\n"
        "marks a required attribute and `=` gives the default.\n";
  for (const auto& [family, doc] : table.families) {
    os << "\n### " << family << " (`core/ops/" << family << ".json`)\n\n";
    if (!doc.empty()) os << doc << "\n\n";
    os << "| Op | Since | Elementwise | Inputs | Outputs | Attributes | Inference |\n"
          "|---|---|---|---|---|---|---|\n";
    for (const Op& op : table.ops) {
      if (op.family != family) continue;
      auto operands = [](const std::vector<Operand>& list) {
        std::string s;
        for (const Operand& o : list) {
          if (!s.empty()) s += ", ";
          s += o.name + (o.arity == "optional" ? "?" : o.arity == "variadic" ? "..." : "");
        }
        return s.empty() ? std::string("-") : s;
      };
      std::string attrs;
      for (const Attr& a : op.attrs) {
        if (!attrs.empty()) attrs += ", ";
        attrs += a.name + ":" + a.kind;
        if (a.required) attrs += "!";
        if (a.hasDefault) attrs += "=" + docDefault(a);
      }
      os << "| " << (op.domain.empty() ? op.name : op.domain + "." + op.name) << " | " << op.since
         << " | " << (op.dataParallel ? "yes" : "") << " | " << operands(op.inputs) << " | "
         << operands(op.outputs) << " | " << (attrs.empty() ? "-" : attrs) << " | "
         << (op.infer.empty() ? "-" : op.infer) << " |\n";
    }
  }
  return os.str();
}

// Writes `content` to `path` unless the file already holds exactly that, so
// that unchanged outputs keep their timestamps and dependents stay built.
void writeIfChanged(const std::string& path, const std::string& content) {
  {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::stringstream existing;
      existing << in.rdbuf();
      if (existing.str() == content) return;
    }
  }
  std::filesystem::path p(path);
  if (p.has_parent_path()) std::filesystem::create_directories(p.parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw TableError(path + ": cannot write");
  out << content;
  if (!out.flush()) throw TableError(path + ": write failed");
}

}  // namespace

int main(int argc, char** argv) {
  std::map<std::string, std::string> outputs;
  std::vector<std::string> tables;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--header" || arg == "--source" || arg == "--functions" || arg == "--markdown") {
      if (i + 1 >= argc) {
        std::cerr << "opgen: " << arg << " needs a path\n";
        return 2;
      }
      outputs[arg.substr(2)] = argv[++i];
    } else if (arg.rfind("--", 0) == 0) {
      std::cerr
          << "opgen: unknown option '" << arg << "'\n"
          << "usage: opgen --header H --source S --functions F [--markdown M] table.json...\n";
      return 2;
    } else {
      tables.push_back(arg);
    }
  }
  for (const char* required : {"header", "source", "functions"})
    if (!outputs.count(required)) {
      std::cerr << "opgen: missing --" << required << "\n";
      return 2;
    }
  if (tables.empty()) {
    std::cerr << "opgen: no op tables given\n";
    return 2;
  }
  try {
    std::sort(tables.begin(), tables.end());  // stable output whatever the glob order
    Table table = loadTables(tables);
    writeIfChanged(outputs["header"], emitHeader(table));
    writeIfChanged(outputs["source"], emitSource(table));
    writeIfChanged(outputs["functions"], emitFunctions(table));
    if (outputs.count("markdown")) writeIfChanged(outputs["markdown"], emitMarkdown(table));
  } catch (const TableError& e) {
    std::cerr << "opgen: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "opgen: internal error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
