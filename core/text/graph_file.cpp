//===- core/text/graph_file.cpp - A text graph and its data file on disk --===//
//
// writeGraphFile(): the one writer of .sg files with their .data files,
// for the program and the library front end alike.
//
//===----------------------------------------------------------------------===//
#include <filesystem>
#include <string>
#include <vector>

#include "subgraph/ir/text_format.h"
#include "subgraph/support/file_io.h"

namespace subgraph {

Status writeGraphFile(const Graph& graph, const std::string& path, bool inlineConstants) {
  const std::string dataPath = path + ".data";
  PrintOptions print;
  print.externalDataLocation = std::filesystem::path(dataPath).filename().string();
  std::string text;
  // The data comes first: printing the text writes it.
  std::vector<FileToWrite> files;
  files.push_back({dataPath,
                   [&](std::ostream& data) {
                     if (!inlineConstants) print.externalData = &data;
                     text = printGraph(graph, print);
                   },
                   /*removeIfEmpty=*/true});
  files.push_back({path, [&](std::ostream& os) { os << text; }, false});
  return writeFilesAtomically(files);
}

}  // namespace subgraph
