#pragma once
// How result tables are written as text, shared by every batch output (sweep and search CSV,
// Markdown, progress lines): the same value always reads the same way.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace moesim::batch {

// Rows keep their column order in JSON files.
using Json = nlohmann::ordered_json;

// A cell's text: "" for null, strings as they are, numbers in the shortest form that reads back
// to the same value, lists and objects as JSON.
std::string plain_value(const Json& v);

// Lines of cells, each quoted as RFC 4180 requires (a comma, quote, CR or LF in a cell: the
// cell in double quotes, its quotes doubled); lines end with LF.
std::string csv_text(const std::vector<std::vector<std::string>>& rows);

// Text safe inside a Markdown table cell: '|' escaped, line breaks as spaces.
std::string md_cell(const std::string& text);

}  // namespace moesim::batch
