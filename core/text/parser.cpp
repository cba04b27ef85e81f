//===- core/text/parser.cpp - Text to graph --------------------------------===//
//
// A recursive-descent parser for the grammar in docs/text-format.md, one
// token of lookahead. Methodology:
//  1. Values are created on first mention, whether that is a use or a
//     definition, so forward references and cycles parse; a definition then
//     attaches the producer (Graph::addNode with pre-made outputs). A name
//     defined twice is an error; a name used but never defined stays a
//     dangling value for the verifier to report (in a nested graph it is an
//     outer-scope capture, resolved by name as in ONNX).
//  2. Errors unwind with an internal exception carrying a position; the
//     public entry points turn it into a Status "<source>:<line>:<col>: ...".
//  3. Every allocation whose size the input controls is bounded by the
//     ParseOptions limits (constant bytes, graph nesting depth, node count), so hostile
//     input ends in an error, never in a crash, hang or huge allocation.
//
//===----------------------------------------------------------------------===//
#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <span>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

#include <boost/container/small_vector.hpp>

#include "external_data.h"
#include "lexer.h"
#include "subgraph/ir/text_format.h"
#include "syntax.h"

namespace subgraph {
namespace {

/// The deepest nesting parsed whatever ParseOptions::maxGraphDepth asks:
/// each level costs a few recursive frames here and in every later walk of
/// the graph (verifier, printer, clone, destruction), so a caller that
/// raises the limit must not be able to overflow the stack. 256 levels use
/// well under 1 MiB of stack in an ASan build (tests/reliability).
constexpr int kDeepestNesting = 256;

using text::SourceLoc;
using text::Token;
using text::TokenKind;

/// Internal unwinding for a parse error; never escapes this file.
struct ParseFailure {
  SourceLoc loc;
  std::string message;
};

/// A signed integer literal as sign and magnitude, so that the full range
/// of both i64 and u64 can be checked without a wider type.
struct IntLiteral {
  bool negative = false;
  uint64_t magnitude = 0;
};

/// How a value got defined in the graph being parsed; a constant may also
/// be a graph input (old ONNX style), every other second definition is an
/// error.
enum class DefinitionKind : uint8_t { kNone, kInput, kConstant, kNodeResult };

struct Definition {
  SourceLoc loc;
  DefinitionKind kind = DefinitionKind::kNone;
};

/// Per-graph parse state: the graph and where each value was defined,
/// indexed by value id. Every value of a graph being parsed is made by
/// the parser, so ids are dense, and a table by id costs 12 bytes a value
/// where a map by name cost a heap block and a copy of the name.
struct GraphScope {
  Graph* graph = nullptr;
  std::vector<Definition> definitions;
  // Values by a hash of their name, last mentioned first: an operand is
  // nearly always a value mentioned a few lines above (or a shared weight),
  // found here in a table that stays in cache, where the graph's name index
  // costs a cache miss a lookup on a large graph. Made once the graph is
  // past kRecentFrom values, so that small bodies carry none.
  // A slot keeps the name's hash, so that a slot another name holds is
  // passed over without loading that (long evicted) value.
  struct RecentSlot {
    uint32_t hash = 0;
    Value* value = nullptr;
  };
  std::vector<RecentSlot> recent;
  static constexpr size_t kRecentSlots = 4096;
  static constexpr size_t kRecentFrom = 256;

  Definition& definitionOf(const Value& value) {
    if (value.id() >= definitions.size()) definitions.resize(value.id() + 1);
    return definitions[value.id()];
  }
  /// The value named `name`, creating it if the graph has none.
  Value* findOrCreate(std::string_view name);
};

Value* GraphScope::findOrCreate(std::string_view name) {
  if (recent.empty()) {
    if (graph->valueIdBound() < kRecentFrom) return graph->findOrCreateValue(name);
    recent.assign(kRecentSlots, RecentSlot{});
  }
  uint32_t hash = 2166136261U;  // FNV-1a: names are short, and this is cheap
  for (char c : name) hash = (hash ^ static_cast<unsigned char>(c)) * 16777619U;
  RecentSlot& slot = recent[hash & (kRecentSlots - 1)];
  if (slot.value == nullptr || slot.hash != hash || slot.value->name() != name)
    slot = RecentSlot{hash, graph->findOrCreateValue(name)};
  return slot.value;
}

/// A result on the left of `=`: name token and optional declared type.
struct ResultDecl {
  Token name;
  std::optional<TensorType> type;
  SourceLoc typeLoc;
};

/// Most statements define one result; room for two keeps the list of a
/// statement off the heap.
using ResultList = boost::container::small_vector<ResultDecl, 2>;

class Parser {
 public:
  Parser(std::string_view source, const ParseOptions& options)
      : source_(source), lexer_(source), options_(options) {
    current_ = lexer_.next();
  }

  /// Parses the whole input as one graph followed by end of input.
  std::unique_ptr<Graph> parseTopLevel();
  /// Where the last consumed token starts; locates errors raised by the
  /// Graph API rather than by the grammar.
  SourceLoc lastLoc() const { return lastLoc_; }

 private:
  //===--- Tokens -------------------------------------------------------===//
  const Token& cur() const { return current_; }
  bool at(TokenKind kind) const { return current_.kind == kind; }
  bool atKeyword(std::string_view word) const {
    return current_.kind == TokenKind::kIdentifier && current_.text == word;
  }
  Token take() {
    Token t = std::move(current_);
    current_ = lexer_.next();
    lastLoc_ = t.loc;
    return t;
  }
  [[noreturn]] void fail(SourceLoc loc, std::string message) const {
    throw ParseFailure{loc, std::move(message)};
  }
  /// Reports "expected <what>, found <current token>"; a lexer error token
  /// reports its own message instead.
  [[noreturn]] void failExpected(std::string_view what) const {
    if (at(TokenKind::kError)) fail(cur().loc, std::string(cur().text));
    fail(cur().loc, "expected " + std::string(what) + ", found " + describeToken(cur()));
  }
  Token expect(TokenKind kind, std::string_view what) {
    if (!at(kind)) failExpected(what);
    return take();
  }
  /// expect() for a description that names something: `what()` builds it
  /// only for the error, not on every token of a large graph.
  template <typename What>
  Token expectNamed(TokenKind kind, What&& what) {
    if (!at(kind)) failExpected(what());
    return take();
  }
  void expectKeyword(std::string_view word) {
    if (!atKeyword(word)) failExpected("'" + std::string(word) + "'");
    take();
  }
  bool accept(TokenKind kind) {
    if (!at(kind)) return false;
    take();
    return true;
  }

  //===--- Grammar ------------------------------------------------------===//
  std::unique_ptr<Graph> parseGraph(std::string defaultName, int depth);
  void parseGraphInputs(GraphScope& scope);
  void parseOpsetImports(Graph& graph);
  /// Parses statements up to and including the closing '}'.
  void parseGraphBody(GraphScope& scope, int depth);
  void parseReturn(GraphScope& scope);
  void parseDefinition(GraphScope& scope, int depth);
  void parseConstant(GraphScope& scope, std::span<const ResultDecl> results);
  void parseNode(GraphScope& scope, std::span<const ResultDecl> results, int depth);
  Value* useValue(GraphScope& scope, const Token& name);
  Value* defineValue(GraphScope& scope, const Token& name, DefinitionKind kind);
  std::vector<Attribute> parseAttributes(int depth);
  AttrValue parseAttrValue(std::string_view attrName, int depth);
  AttrValue parseTypedList(const Token& kindWord, std::string_view attrName, int depth);
  AttrValue parseUntypedList(std::string_view attrName, int depth);

  TensorType parseType();
  /// Dims of a shape, on the stack while they are parsed.
  using DimList = boost::container::small_vector<Dim, 8>;
  Shape parseDims();
  void parseDimList(DimList& dims);
  DataType parseDataTypeName();
  Tensor parseTensorLiteral();
  Tensor parseExternalTensor(DataType dtype, std::vector<int64_t> dims, int64_t count,
                             SourceLoc loc);
  std::vector<int64_t> parseStaticDims(DataType dtype, SourceLoc loc);

  //===--- Literals -----------------------------------------------------===//
  /// A number as written: the token, and for `nan(0x...)` its bits.
  struct NumberLit {
    Token token;
    std::optional<uint64_t> nanBits;
  };
  bool atNumber() const;
  NumberLit parseNumber(std::string_view what);
  IntLiteral toIntLiteral(const Token& token) const;
  int64_t toSigned(const Token& token, int64_t min, int64_t max, std::string_view typeName) const;
  uint64_t toUnsigned(const Token& token, uint64_t max, std::string_view typeName) const;
  /// The bits of a float literal converted to `dtype` (f16/bf16/f32/f64).
  uint64_t toFloatBits(const NumberLit& lit, DataType dtype) const;
  float toF32(const NumberLit& lit) const {
    return std::bit_cast<float>(static_cast<uint32_t>(toFloatBits(lit, DataType::kFloat32)));
  }
  /// Appends one element of `dtype` to `bytes` (or `strings`).
  void parseElement(DataType dtype, std::vector<std::byte>& bytes,
                    std::vector<std::string>& strings);

  /// The interned key of an op as the source spells it. A file names a
  /// few dozen ops a million times; interning takes the registry's lock
  /// and builds a string.
  const OpKey* opKeyFor(std::string_view spelling, std::string_view domain,
                        std::string_view opName);

  std::string_view source_;
  text::Lexer lexer_;
  const ParseOptions& options_;
  // Statements the top-level graph makes room for (reservedStatementCount).
  size_t reserveStatements_ = 0;
  // Keys by spelling; the views point into the source or the lexer's store.
  std::unordered_map<std::string_view, const OpKey*> opKeys_;
  // The shape parseType() made last (interned), for the next to reuse.
  OptionalShape lastShape_;
  // The fast path's dims (Lexer::scanStaticDims), kept to reuse its room.
  boost::container::small_vector<int64_t, 8> staticDims_;
  Token current_;
  SourceLoc lastLoc_;
  // Nodes seen so far in every graph, for ParseOptions::maxNodes.
  uint64_t nodesParsed_ = 0;
  text::ExternalDataReader external_{options_.externalDataDir};
};

//===--- Graphs -----------------------------------------------------------===//

std::unique_ptr<Graph> Parser::parseTopLevel() {
  if (!atKeyword("graph")) failExpected("'graph' at the start of the input");
  reserveStatements_ = text::reservedStatementCount(source_, options_.maxNodes);
  std::unique_ptr<Graph> graph = parseGraph("main", 1);
  if (!at(TokenKind::kEnd)) failExpected("end of input after the graph's closing '}'");
  return graph;
}

std::unique_ptr<Graph> Parser::parseGraph(std::string defaultName, int depth) {
  if (depth > options_.maxGraphDepth)
    fail(cur().loc, "graphs nested deeper than the limit of " +
                        std::to_string(options_.maxGraphDepth) + " levels");
  if (depth > kDeepestNesting)
    fail(cur().loc, "graphs nested deeper than " + std::to_string(kDeepestNesting) +
                        " levels, the most the parser's stack holds whatever "
                        "ParseOptions::maxGraphDepth says");
  expectKeyword("graph");
  auto graph = std::make_unique<Graph>(std::move(defaultName));
  if (at(TokenKind::kAtName)) graph->setName(std::string(take().text));
  GraphScope scope;
  scope.graph = graph.get();
  if (depth == 1 && reserveStatements_ != 0) {
    // Each statement makes about one node and one value.
    graph->reserve(reserveStatements_, reserveStatements_);
    scope.definitions.reserve(reserveStatements_);
  }
  if (accept(TokenKind::kLParen)) parseGraphInputs(scope);
  if (atKeyword("opset")) parseOpsetImports(*graph);
  expect(TokenKind::kLBrace, "'{' to open the graph body");
  parseGraphBody(scope, depth);
  return graph;
}

void Parser::parseGraphInputs(GraphScope& scope) {
  if (accept(TokenKind::kRParen)) return;
  while (true) {
    Token name = expect(TokenKind::kValueName, "a graph input such as '%x'");
    Value* input = defineValue(scope, name, DefinitionKind::kInput);
    if (accept(TokenKind::kColon)) input->setType(parseType());
    scope.graph->appendInput(input);
    if (accept(TokenKind::kRParen)) return;
    expect(TokenKind::kComma, "',' or ')' in the graph inputs");
  }
}

void Parser::parseOpsetImports(Graph& graph) {
  take();  // `opset`
  expect(TokenKind::kLParen, "'(' after 'opset'");
  std::unordered_map<std::string, SourceLoc> seen;
  while (!accept(TokenKind::kRParen)) {
    if (!seen.empty()) expect(TokenKind::kComma, "',' or ')' in the opset list");
    if (!at(TokenKind::kIdentifier) && !at(TokenKind::kString))
      failExpected("an opset domain such as 'ai.onnx'");
    Token domainTok = take();
    std::string domain(canonicalDomain(domainTok.text));
    auto [it, inserted] = seen.emplace(domain, domainTok.loc);
    if (!inserted)
      fail(domainTok.loc,
           "opset for domain " + text::nameForMessage(domainTok.text) + " is given twice");
    expect(TokenKind::kEquals, "'=' after the opset domain");
    Token version = expect(TokenKind::kInteger, "an opset version number");
    graph.setOpsetImport(
        domain, toSigned(version, 0, std::numeric_limits<int64_t>::max(), "an opset version"));
  }
}

void Parser::parseGraphBody(GraphScope& scope, int depth) {
  while (!accept(TokenKind::kRBrace)) {
    if (atKeyword("return")) {
      parseReturn(scope);
      expect(TokenKind::kRBrace, "'}' after the return statement, which ends the graph");
      return;
    }
    if (at(TokenKind::kValueName) || at(TokenKind::kIdentifier) || at(TokenKind::kString)) {
      parseDefinition(scope, depth);
      continue;
    }
    if (at(TokenKind::kEnd)) failExpected("'}' to close the graph");
    failExpected("a statement ('%name = ...', an op call or 'return')");
  }
}

void Parser::parseReturn(GraphScope& scope) {
  take();  // `return`
  if (at(TokenKind::kRBrace)) return;
  while (true) {
    if (atKeyword("_")) {
      take();
      scope.graph->addOutput(nullptr);
    } else {
      Token name = expect(TokenKind::kValueName, "a graph output such as '%y'");
      scope.graph->addOutput(useValue(scope, name));
    }
    if (!accept(TokenKind::kComma)) return;
  }
}

void Parser::parseDefinition(GraphScope& scope, int depth) {
  ResultList results;
  if (at(TokenKind::kValueName)) {
    while (true) {
      ResultDecl decl;
      decl.name = expect(TokenKind::kValueName, "a result name such as '%y'");
      if (accept(TokenKind::kColon)) {
        decl.typeLoc = cur().loc;
        decl.type = parseType();
      }
      results.push_back(std::move(decl));
      if (accept(TokenKind::kEquals)) break;
      expect(TokenKind::kComma, "',' or '=' after a result");
    }
  }
  if (!results.empty() && atKeyword("const")) {
    parseConstant(scope, {results.data(), results.size()});
    return;
  }
  parseNode(scope, {results.data(), results.size()}, depth);
}

void Parser::parseConstant(GraphScope& scope, std::span<const ResultDecl> results) {
  take();  // `const`
  if (results.size() != 1) fail(results[1].name.loc, "a constant defines exactly one value");
  if (results[0].type)
    fail(results[0].typeLoc, "a constant takes its type from its data; remove the ': <type>' on " +
                                 text::sigilName('%', results[0].name.text));
  if (!at(TokenKind::kIdentifier)) failExpected("a constant's type such as 'f32[2, 3]'");
  Tensor data = parseTensorLiteral();
  Value* value = defineValue(scope, results[0].name, DefinitionKind::kConstant);
  scope.graph->setInitializer(value, std::move(data));
}

void Parser::parseNode(GraphScope& scope, std::span<const ResultDecl> results, int depth) {
  std::vector<Value*> outputs;
  outputs.reserve(results.size());
  for (const ResultDecl& r : results) {
    Value* v = defineValue(scope, r.name, DefinitionKind::kNodeResult);
    if (r.type) v->setType(*r.type);
    outputs.push_back(v);
  }
  if (atKeyword("const") || atKeyword("return") || atKeyword("graph"))
    fail(cur().loc,
         "'" + std::string(cur().text) + "' is a reserved word; quote it to use it as an op name");
  if (!at(TokenKind::kIdentifier) && !at(TokenKind::kString))
    failExpected(results.empty() ? "a statement ('%name = ...', an op call or 'return')"
                                 : "an op name or 'const' after '='");
  Token op = take();
  if (op.text.empty()) fail(op.loc, "op name must not be empty");
  if (++nodesParsed_ > options_.maxNodes)
    fail(op.loc, "more nodes than the limit of " + std::to_string(options_.maxNodes) +
                     " (ParseOptions::maxNodes)");
  size_t dot = op.text.rfind('.');
  std::string_view domain =
      dot == std::string_view::npos ? std::string_view() : op.text.substr(0, dot);
  std::string_view opName = dot == std::string_view::npos ? op.text : op.text.substr(dot + 1);
  if (opName.empty()) fail(op.loc, "op name " + text::nameForMessage(op.text) + " ends with '.'");
  const OpKey* key = opKeyFor(op.text, domain, opName);

  expectNamed(TokenKind::kLParen,
              [&] { return "'(' after op name " + text::nameForMessage(op.text); });
  // Collected on the stack, then copied once into a vector of the exact
  // size: growing a vector operand by operand allocated up to four times.
  boost::container::small_vector<Value*, 8> operands;
  while (!accept(TokenKind::kRParen)) {
    if (!operands.empty()) expect(TokenKind::kComma, "',' or ')' in the operand list");
    if (atKeyword("_")) {
      take();
      operands.push_back(nullptr);
    } else {
      operands.push_back(useValue(
          scope, expect(TokenKind::kValueName, "an operand such as '%x' or '_' for none")));
    }
  }
  std::vector<Value*> inputs(operands.begin(), operands.end());
  std::vector<Attribute> attrs;
  if (at(TokenKind::kLBrace)) attrs = parseAttributes(depth);
  std::string name;
  if (at(TokenKind::kAtName)) name = take().text;
  scope.graph->addNode(key, std::move(inputs), std::move(outputs), std::move(attrs),
                       std::move(name));
}

const OpKey* Parser::opKeyFor(std::string_view spelling, std::string_view domain,
                              std::string_view opName) {
  auto [it, inserted] = opKeys_.try_emplace(spelling, nullptr);
  if (inserted) it->second = OpRegistry::global().intern(domain, opName);
  return it->second;
}

Value* Parser::useValue(GraphScope& scope, const Token& name) {
  if (name.text.empty()) fail(name.loc, "value name must not be empty");
  return scope.findOrCreate(name.text);
}

Value* Parser::defineValue(GraphScope& scope, const Token& name, DefinitionKind kind) {
  if (name.text.empty()) fail(name.loc, "value name must not be empty");
  Value* value = scope.findOrCreate(name.text);
  Definition& definition = scope.definitionOf(*value);
  // The one legal redefinition: an input that also has constant data.
  if (definition.kind != DefinitionKind::kNone &&
      !(kind == DefinitionKind::kConstant && definition.kind == DefinitionKind::kInput)) {
    const SourceLoc& first = definition.loc;
    fail(name.loc, "value " + text::sigilName('%', name.text) + " is already defined at " +
                       std::to_string(first.line) + ":" + std::to_string(first.column));
  }
  definition = Definition{name.loc, kind};
  return value;
}

//===--- Attributes -------------------------------------------------------===//

std::vector<Attribute> Parser::parseAttributes(int depth) {
  take();  // `{`
  std::vector<Attribute> attrs;
  // Nodes carry a handful of attributes, which a scan checks for repeats
  // without allocating; past kScanLimit (a hostile file can give one node
  // hundreds of thousands) a hash set keeps the check linear. Token texts
  // are stable, so the set holds views.
  constexpr size_t kScanLimit = 16;
  boost::container::small_vector<std::string_view, kScanLimit> names;
  std::unordered_set<std::string_view> seen;
  while (!accept(TokenKind::kRBrace)) {
    if (!attrs.empty()) expect(TokenKind::kComma, "',' or '}' in the attribute list");
    if (!at(TokenKind::kIdentifier) && !at(TokenKind::kString)) failExpected("an attribute name");
    Token name = take();
    if (name.text.empty()) fail(name.loc, "attribute name must not be empty");
    bool repeated = false;
    if (names.size() < kScanLimit) {
      repeated = std::find(names.begin(), names.end(), name.text) != names.end();
      names.push_back(name.text);
    } else {
      if (seen.empty()) seen.insert(names.begin(), names.end());
      repeated = !seen.insert(name.text).second;
    }
    if (repeated)
      fail(name.loc, "attribute " + text::nameForMessage(name.text) + " is given twice");
    expectNamed(TokenKind::kEquals,
                [&] { return "'=' after attribute name " + text::nameForMessage(name.text); });
    attrs.emplace_back(std::string(name.text), parseAttrValue(name.text, depth));
  }
  return attrs;
}

AttrValue Parser::parseAttrValue(std::string_view attrName, int depth) {
  if (at(TokenKind::kInteger))
    return toSigned(take(), std::numeric_limits<int64_t>::min(),
                    std::numeric_limits<int64_t>::max(), "an int attribute");
  if (at(TokenKind::kString)) return std::string(take().text);
  if (at(TokenKind::kLBracket)) return parseUntypedList(attrName, depth);
  if (atNumber()) return toF32(parseNumber("a float"));
  if (at(TokenKind::kIdentifier)) {
    std::string_view word = cur().text;
    if (word == "graph")
      return std::shared_ptr<Graph>(parseGraph(std::string(attrName), depth + 1));
    if (word == "ints" || word == "floats" || word == "strings" || word == "graphs")
      return parseTypedList(take(), attrName, depth);
    if (parseDataType(word)) return parseTensorLiteral();
  }
  failExpected("an attribute value (number, string, list, tensor or graph)");
}

AttrValue Parser::parseTypedList(const Token& kindWord, std::string_view attrName, int depth) {
  expectNamed(TokenKind::kLBracket,
              [&] { return "'[' after '" + std::string(kindWord.text) + "'"; });
  std::string_view kind = kindWord.text;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  std::vector<std::shared_ptr<Graph>> graphs;
  bool first = true;
  while (!accept(TokenKind::kRBracket)) {
    if (!first) expect(TokenKind::kComma, "',' or ']' in the list");
    first = false;
    if (kind == "ints") {
      ints.push_back(toSigned(expect(TokenKind::kInteger, "an integer"),
                              std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), "an ints element"));
    } else if (kind == "floats") {
      floats.push_back(toF32(parseNumber("a number")));
    } else if (kind == "strings") {
      strings.emplace_back(expect(TokenKind::kString, "a string").text);
    } else {
      graphs.push_back(parseGraph(std::string(attrName), depth + 1));
    }
  }
  if (kind == "ints") return ints;
  if (kind == "floats") return floats;
  if (kind == "strings") return strings;
  return graphs;
}

AttrValue Parser::parseUntypedList(std::string_view attrName, int depth) {
  SourceLoc open = take().loc;  // `[`
  if (at(TokenKind::kRBracket))
    fail(open, "an empty list needs its kind: write ints[], floats[], strings[] or graphs[]");
  if (atKeyword("graph")) {
    std::vector<std::shared_ptr<Graph>> graphs;
    do {
      graphs.push_back(parseGraph(std::string(attrName), depth + 1));
    } while (accept(TokenKind::kComma));
    expect(TokenKind::kRBracket, "',' or ']' in the list of graphs");
    return graphs;
  }
  if (at(TokenKind::kString)) {
    std::vector<std::string> strings;
    do {
      strings.emplace_back(expect(TokenKind::kString, "a string (the list holds strings)").text);
    } while (accept(TokenKind::kComma));
    expect(TokenKind::kRBracket, "',' or ']' in the list");
    return strings;
  }
  // Numbers: the list is floats if any element is spelled as a float.
  std::vector<NumberLit> numbers;
  do {
    if (at(TokenKind::kString)) fail(cur().loc, "a list cannot mix numbers and strings");
    numbers.push_back(parseNumber("a number (the list holds numbers)"));
  } while (accept(TokenKind::kComma));
  expect(TokenKind::kRBracket, "',' or ']' in the list");
  bool anyFloat = false;
  for (const NumberLit& n : numbers) anyFloat |= n.token.kind != TokenKind::kInteger;
  if (!anyFloat) {
    std::vector<int64_t> ints;
    for (const NumberLit& n : numbers)
      ints.push_back(toSigned(n.token, std::numeric_limits<int64_t>::min(),
                              std::numeric_limits<int64_t>::max(), "an ints element"));
    return ints;
  }
  std::vector<float> floats;
  for (const NumberLit& n : numbers) floats.push_back(toF32(n));
  return floats;
}

//===--- Types and tensors ------------------------------------------------===//

DataType Parser::parseDataTypeName() {
  if (accept(TokenKind::kQuestion)) return DataType::kUndefined;
  if (!at(TokenKind::kIdentifier)) failExpected("an element type such as 'f32'");
  std::optional<DataType> dtype = parseDataType(cur().text);
  if (!dtype || *dtype == DataType::kUndefined)
    fail(cur().loc, "unknown element type '" + std::string(cur().text) +
                        "' (expected f16, bf16, f32, f64, i8, i16, i32, i64, u8, u16, u32, u64, "
                        "bool or str)");
  take();
  return *dtype;
}

TensorType Parser::parseType() {
  TensorType type(parseDataTypeName());
  if (!at(TokenKind::kLBracket)) return type;
  DimList dims;
  parseDimList(dims);
  // Neighbouring statements mostly share a shape; reusing the last one
  // skips building a Shape and interning it (a lock and a hash) per value.
  if (!lastShape_ || !std::equal(dims.begin(), dims.end(), lastShape_->begin(), lastShape_->end()))
    lastShape_ = Shape(dims.begin(), dims.end());
  type.shape = lastShape_;
  return type;
}

Shape Parser::parseDims() {
  DimList dims;
  parseDimList(dims);
  return Shape(dims.begin(), dims.end());
}

void Parser::parseDimList(DimList& dims) {
  // `[` is the current token, and the lexer stands just past it.
  staticDims_.clear();
  if (std::optional<SourceLoc> closing = lexer_.scanStaticDims(staticDims_)) {
    for (int64_t d : staticDims_) dims.push_back(Dim(d));
    lastLoc_ = *closing;
    current_ = lexer_.next();
    return;
  }
  take();  // `[`
  while (!accept(TokenKind::kRBracket)) {
    if (!dims.empty()) expect(TokenKind::kComma, "',' or ']' in the shape");
    if (accept(TokenKind::kQuestion)) {
      dims.push_back(Dim::unknown());
    } else if (at(TokenKind::kInteger)) {
      dims.push_back(Dim(
          toSigned(take(), 0, std::numeric_limits<int64_t>::max(), "a dimension (dims are >= 0)")));
    } else if (at(TokenKind::kIdentifier) || at(TokenKind::kString)) {
      Token sym = take();
      if (sym.text.empty()) fail(sym.loc, "a symbolic dimension needs a name");
      dims.push_back(Dim::symbol(sym.text));
    } else {
      failExpected("a dimension (an integer, a symbol such as 'N', or '?')");
    }
  }
}

std::vector<int64_t> Parser::parseStaticDims(DataType dtype, SourceLoc loc) {
  if (!at(TokenKind::kLBracket))
    failExpected("the constant's shape, e.g. '[2, 3]' ('[]' for a scalar)");
  Shape shape = parseDims();
  std::vector<int64_t> dims;
  for (const Dim& d : shape) {
    if (!d.isStatic())
      fail(loc, "a constant's shape must be static, got " + text::shapeText(shape));
    dims.push_back(d.size());
  }
  std::optional<int64_t> count = staticElementCount(shape);
  size_t width = dtype == DataType::kString ? sizeof(std::string) : dataTypeSize(dtype);
  if (!count || (width && static_cast<uint64_t>(*count) > options_.maxConstantBytes / width))
    fail(loc, "constant " + std::string(dataTypeName(dtype)) + text::shapeText(shape) +
                  " exceeds the limit of " + std::to_string(options_.maxConstantBytes) + " bytes");
  return dims;
}

Tensor Parser::parseTensorLiteral() {
  SourceLoc loc = cur().loc;
  DataType dtype = parseDataTypeName();
  if (dtype == DataType::kUndefined) fail(loc, "a constant needs a known element type");
  std::vector<int64_t> dims = parseStaticDims(dtype, loc);
  int64_t count = 1;
  for (int64_t d : dims) count *= d;  // bounded by parseStaticDims
  if (atKeyword("external")) return parseExternalTensor(dtype, std::move(dims), count, loc);
  std::vector<std::byte> bytes;
  std::vector<std::string> strings;
  if (atKeyword("splat")) {
    take();
    expect(TokenKind::kLParen, "'(' after 'splat'");
    parseElement(dtype, bytes, strings);
    expect(TokenKind::kRParen, "')' after the splat value");
    if (dtype == DataType::kString) {
      if (!strings[0].empty() &&
          static_cast<uint64_t>(count) >
              options_.maxConstantBytes / (strings[0].size() + sizeof(std::string)))
        fail(loc, "constant exceeds the limit of " + std::to_string(options_.maxConstantBytes) +
                      " bytes");
      strings.assign(static_cast<size_t>(count), strings[0]);
      return Tensor(std::move(dims), std::move(strings));
    }
    std::vector<std::byte> element = std::move(bytes);
    bytes.clear();
    bytes.reserve(element.size() * static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i) bytes.insert(bytes.end(), element.begin(), element.end());
  } else {
    SourceLoc open =
        expect(TokenKind::kLBracket, "'[' with the constant's elements or 'splat(...)'").loc;
    int64_t n = 0;
    while (!at(TokenKind::kRBracket)) {
      if (n) expect(TokenKind::kComma, "',' or ']' in the constant's elements");
      if (at(TokenKind::kEllipsis))
        fail(cur().loc,
             "constant data was elided ('...') when it was printed; print with "
             "elideConstantsOver = 0 to get a parseable graph");
      if (n == count)
        fail(cur().loc, "too many elements: shape " +
                            text::shapeText(Shape(dims.begin(), dims.end())) + " holds " +
                            std::to_string(count));
      parseElement(dtype, bytes, strings);
      ++n;
    }
    if (n != count)
      fail(cur().loc, "too few elements: shape " +
                          text::shapeText(Shape(dims.begin(), dims.end())) + " holds " +
                          std::to_string(count) + " but " + std::to_string(n) +
                          " were given (opened at " + std::to_string(open.line) + ":" +
                          std::to_string(open.column) + ")");
    take();  // `]`
  }
  if (dtype == DataType::kString) return Tensor(std::move(dims), std::move(strings));
  return Tensor(dtype, std::move(dims), std::move(bytes));
}

// external("file", offset, bytes): the constant's bytes in a file beside
// the graph (external_data.h). The count must be exactly what the shape
// holds, so a short or long record is an error, not a misread.
Tensor Parser::parseExternalTensor(DataType dtype, std::vector<int64_t> dims, int64_t count,
                                   SourceLoc loc) {
  take();  // `external`
  if (dtype == DataType::kString) fail(loc, "a str constant cannot be external data");
  expect(TokenKind::kLParen, "'(' after 'external'");
  Token location = expect(TokenKind::kString, "the external data's file name");
  expect(TokenKind::kComma, "',' after the file name");
  uint64_t offset =
      toUnsigned(expect(TokenKind::kInteger, "a byte offset"), UINT64_MAX, "an offset");
  expect(TokenKind::kComma, "',' after the offset");
  Token countToken = expect(TokenKind::kInteger, "a byte count");
  uint64_t bytes = toUnsigned(countToken, UINT64_MAX, "a byte count");
  expect(TokenKind::kRParen, "')' after the byte count");
  const uint64_t expected = static_cast<uint64_t>(count) * dataTypeSize(dtype);
  if (bytes != expected)
    fail(countToken.loc, "external data holds " + std::to_string(bytes) + " bytes, but " +
                             std::string(dataTypeName(dtype)) +
                             text::shapeText(Shape(dims.begin(), dims.end())) + " needs " +
                             std::to_string(expected));
  StatusOr<std::vector<std::byte>> data = external_.read(std::string(location.text), offset, bytes);
  if (!data.isOk()) fail(location.loc, data.status().message());
  return Tensor(dtype, std::move(dims), std::move(data).value());
}

template <typename T>
void appendBytes(std::vector<std::byte>& bytes, T value) {
  std::byte raw[sizeof(T)];
  std::memcpy(raw, &value, sizeof(T));
  bytes.insert(bytes.end(), raw, raw + sizeof(T));
}

void Parser::parseElement(DataType dtype, std::vector<std::byte>& bytes,
                          std::vector<std::string>& strings) {
  auto intElement = [&](std::string_view name) {
    return expectNamed(TokenKind::kInteger,
                       [&] { return "an integer element of " + std::string(name); });
  };
  switch (dtype) {
    case DataType::kString:
      strings.emplace_back(expect(TokenKind::kString, "a string element").text);
      return;
    case DataType::kBool:
      if (atKeyword("true") || atKeyword("false")) {
        appendBytes<uint8_t>(bytes, take().text == "true" ? 1 : 0);
      } else if (at(TokenKind::kInteger)) {
        appendBytes(bytes, static_cast<uint8_t>(toUnsigned(take(), 255, "a bool element")));
      } else {
        failExpected("'true' or 'false'");
      }
      return;
    case DataType::kFloat32:
    case DataType::kFloat64:
    case DataType::kFloat16:
    case DataType::kBFloat16: {
      uint64_t bits = toFloatBits(parseNumber("a number"), dtype);
      if (dtype == DataType::kFloat64)
        appendBytes(bytes, bits);
      else if (dtype == DataType::kFloat32)
        appendBytes(bytes, static_cast<uint32_t>(bits));
      else
        appendBytes(bytes, static_cast<uint16_t>(bits));
      return;
    }
    case DataType::kInt8:
      appendBytes(bytes, static_cast<int8_t>(toSigned(intElement("i8"), INT8_MIN, INT8_MAX, "i8")));
      return;
    case DataType::kInt16:
      appendBytes(bytes,
                  static_cast<int16_t>(toSigned(intElement("i16"), INT16_MIN, INT16_MAX, "i16")));
      return;
    case DataType::kInt32:
      appendBytes(bytes,
                  static_cast<int32_t>(toSigned(intElement("i32"), INT32_MIN, INT32_MAX, "i32")));
      return;
    case DataType::kInt64:
      appendBytes(bytes, toSigned(intElement("i64"), INT64_MIN, INT64_MAX, "i64"));
      return;
    case DataType::kUInt8:
      appendBytes(bytes, static_cast<uint8_t>(toUnsigned(intElement("u8"), UINT8_MAX, "u8")));
      return;
    case DataType::kUInt16:
      appendBytes(bytes, static_cast<uint16_t>(toUnsigned(intElement("u16"), UINT16_MAX, "u16")));
      return;
    case DataType::kUInt32:
      appendBytes(bytes, static_cast<uint32_t>(toUnsigned(intElement("u32"), UINT32_MAX, "u32")));
      return;
    case DataType::kUInt64:
      appendBytes(bytes, toUnsigned(intElement("u64"), UINT64_MAX, "u64"));
      return;
    case DataType::kUndefined: break;
  }
  fail(cur().loc, "a constant needs a known element type");
}

//===--- Numbers ----------------------------------------------------------===//

bool Parser::atNumber() const {
  return at(TokenKind::kInteger) || at(TokenKind::kFloat) || atKeyword("nan") || atKeyword("inf");
}

Parser::NumberLit Parser::parseNumber(std::string_view what) {
  if (!atNumber()) failExpected(what);
  NumberLit lit;
  lit.token = take();
  if (lit.token.kind == TokenKind::kIdentifier) lit.token.kind = TokenKind::kFloat;
  if (lit.token.text == "nan" && accept(TokenKind::kLParen)) {
    Token bits = expect(TokenKind::kInteger, "the NaN's bits in hex, e.g. nan(0x7fc00001)");
    if (bits.text.rfind("0x", 0) != 0 && bits.text.rfind("0X", 0) != 0)
      fail(bits.loc, "NaN bits must be written in hex, e.g. nan(0x7fc00001)");
    lit.nanBits = toUnsigned(bits, UINT64_MAX, "NaN bits");
    expect(TokenKind::kRParen, "')' after the NaN's bits");
  }
  return lit;
}

IntLiteral Parser::toIntLiteral(const Token& token) const {
  std::string_view s = token.text;
  IntLiteral lit;
  if (!s.empty() && s[0] == '-') {
    lit.negative = true;
    s.remove_prefix(1);
  }
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), lit.magnitude, base);
  if (ec == std::errc::result_out_of_range)
    fail(token.loc, "integer " + std::string(token.text) + " is out of range");
  if (ec != std::errc() || ptr != s.data() + s.size())
    fail(token.loc, "invalid integer '" + std::string(token.text) + "'");
  return lit;
}

int64_t Parser::toSigned(const Token& token, int64_t min, int64_t max,
                         std::string_view typeName) const {
  if (token.kind != TokenKind::kInteger)
    fail(token.loc,
         "expected an integer for " + std::string(typeName) + ", found " + describeToken(token));
  IntLiteral lit = toIntLiteral(token);
  auto outOfRange = [&] {
    fail(token.loc, "integer " + std::string(token.text) + " is out of range for " +
                        std::string(typeName) + " [" + std::to_string(min) + ", " +
                        std::to_string(max) + "]");
  };
  if (lit.negative) {
    // -(min + 1) + 1 is |min| without overflowing int64.
    uint64_t limit = min >= 0 ? 0 : static_cast<uint64_t>(-(min + 1)) + 1;
    if (lit.magnitude > limit) outOfRange();
    if (lit.magnitude == 0) return 0;
    return -static_cast<int64_t>(lit.magnitude - 1) - 1;
  }
  if (lit.magnitude > static_cast<uint64_t>(max)) outOfRange();
  return static_cast<int64_t>(lit.magnitude);
}

uint64_t Parser::toUnsigned(const Token& token, uint64_t max, std::string_view typeName) const {
  IntLiteral lit = toIntLiteral(token);
  if ((lit.negative && lit.magnitude != 0) || lit.magnitude > max)
    fail(token.loc, "integer " + std::string(token.text) + " is out of range for " +
                        std::string(typeName) + " [0, " + std::to_string(max) + "]");
  return lit.magnitude;
}

uint64_t Parser::toFloatBits(const NumberLit& lit, DataType dtype) const {
  const Token& t = lit.token;
  std::string typeName(dataTypeName(dtype));
  if (lit.nanBits) {
    uint64_t bits = *lit.nanBits;
    bool isNan = false;
    switch (dtype) {
      case DataType::kFloat64: isNan = std::isnan(std::bit_cast<double>(bits)); break;
      case DataType::kFloat32:
        isNan = bits <= UINT32_MAX && std::isnan(std::bit_cast<float>(static_cast<uint32_t>(bits)));
        break;
      case DataType::kFloat16:
        isNan = bits <= 0xffff && (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff);
        break;
      default: isNan = bits <= 0xffff && (bits & 0x7f80) == 0x7f80 && (bits & 0x7f); break;
    }
    if (!isNan) {
      char hex[24];
      std::snprintf(hex, sizeof hex, "0x%llx", static_cast<unsigned long long>(bits));
      fail(t.loc, "nan(" + std::string(hex) + ") is not a NaN bit pattern of " + typeName);
    }
    return bits;
  }
  if (t.text == "nan" || t.text == "-nan") return text::canonicalNanBits(dtype, t.text[0] == '-');
  if (t.text.size() > 2 &&
      (t.text.find("0x") != std::string_view::npos || t.text.find("0X") != std::string_view::npos))
    fail(t.loc, "hex integer " + std::string(t.text) + " cannot be a " + typeName +
                    " value; hex is only for nan(0x...)");
  const char* begin = t.text.data();
  const char* end = begin + t.text.size();
  auto rangeError = [&] {
    fail(t.loc, "number " + std::string(t.text) + " is out of range for " + typeName);
  };
  if (dtype == DataType::kFloat64) {
    double d = 0;
    auto [ptr, ec] = std::from_chars(begin, end, d);
    if (ec == std::errc::result_out_of_range) rangeError();
    if (ec != std::errc() || ptr != end)
      fail(t.loc, "invalid number '" + std::string(t.text) + "'");
    return std::bit_cast<uint64_t>(d);
  }
  float f = 0;
  auto [ptr, ec] = std::from_chars(begin, end, f);
  if (ec == std::errc::result_out_of_range) rangeError();
  if (ec != std::errc() || ptr != end) fail(t.loc, "invalid number '" + std::string(t.text) + "'");
  if (dtype == DataType::kFloat32) return std::bit_cast<uint32_t>(f);
  uint16_t bits = dtype == DataType::kFloat16 ? floatToHalfBits(f) : floatToBFloat16Bits(f);
  float back = dtype == DataType::kFloat16 ? halfBitsToFloat(bits) : bfloat16BitsToFloat(bits);
  // Overflow to infinity or underflow to zero would silently change the
  // value, as from_chars refuses to for f32 and f64.
  if ((std::isinf(back) && !std::isinf(f)) || (back == 0.0f && f != 0.0f)) rangeError();
  return bits;
}

// Messages are one line by contract; names from the input are already
// escaped where the parser quotes them, and this catches any that arrive
// through Graph API messages.
std::string oneLine(const std::string& message) {
  std::string out;
  out.reserve(message.size());
  for (char c : message) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7f) {
      out += c;
      continue;
    }
    char buf[5];
    std::snprintf(buf, sizeof buf, "\\x%02x", u);
    out += c == '\n' ? std::string("\\n") : std::string(buf);
  }
  return out;
}

}  // namespace

StatusOr<std::unique_ptr<Graph>> parseGraph(std::string_view text, const ParseOptions& options) {
  Parser parser(text, options);
  auto error = [&](SourceLoc loc, const std::string& message) {
    return Status::invalid(oneLine(options.sourceName + ":" + std::to_string(loc.line) + ":" +
                                   std::to_string(loc.column) + ": " + message));
  };
  try {
    return parser.parseTopLevel();
  } catch (const ParseFailure& failure) {
    return error(failure.loc, failure.message);
  } catch (const Error& e) {
    // A graph or tensor invariant the grammar alone cannot catch.
    return error(parser.lastLoc(), e.what());
  } catch (const std::bad_alloc&) {
    return error(parser.lastLoc(), "out of memory while parsing");
  }
}

std::unique_ptr<Graph> parseGraphOrThrow(std::string_view text, const ParseOptions& options) {
  auto result = parseGraph(text, options);
  if (!result.isOk()) throw Error(result.status());
  return std::move(result).value();
}

StatusOr<std::unique_ptr<Graph>> parseGraphFile(const std::string& path, ParseOptions options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::error(StatusCode::kNotFound, "cannot open graph file '" + path + "'");
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return Status::invalid("cannot read graph file '" + path + "'");
  options.sourceName = path;
  if (options.externalDataDir.empty()) {
    std::filesystem::path parent = std::filesystem::path(path).parent_path();
    options.externalDataDir = parent.empty() ? "." : parent.string();
  }
  return parseGraph(contents.str(), options);
}

}  // namespace subgraph
