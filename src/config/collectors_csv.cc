#include "config/collectors_csv.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "config/text_file.h"
#include "util/escape.h"
#include "util/log.h"
#include "util/strings.h"

namespace nvmlx::config {
namespace {

// One CSV cell, with where it starts (for messages).
struct Cell {
  std::string text;  // unquoted and trimmed
  int line = 0;
};

struct Record {
  std::vector<Cell> cells;
  int line = 0;  // where the record starts
};

// Splits the text into records the way Go's encoding/csv does for dcgm-exporter (Comment='#',
// LazyQuotes=false, TrimLeadingSpace=false), plus our two leniencies: lines holding only
// spaces/tabs are blank, and '#' after leading spaces/tabs starts a comment. A quote must open a
// cell (right after the comma); anywhere else in an unquoted cell it is an error, because
// dcgm-exporter rejects such files and a file we accept should also work there.
class Tokenizer {
 public:
  Tokenizer(std::string_view text, std::string_view source) : text_(text), source_(source) {
    // A UTF-8 BOM (Windows editors) would otherwise glue itself to the first field name.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF") text_.remove_prefix(3);
  }

  // Next record; nullopt at the end of the text. Errors go to *status.
  std::optional<Record> Next(Status* status) {
    while (pos_ < text_.size()) {
      size_t eol = text_.find('\n', pos_);
      if (eol == std::string_view::npos) eol = text_.size();
      std::string_view physical = text_.substr(pos_, eol - pos_);
      std::string_view content = util::TrimBlanks(physical);
      if (!content.empty() && content.back() == '\r')
        content = util::TrimBlanks(content.substr(0, content.size() - 1));
      if (content.empty() || content.front() == '#') {
        SkipLine(eol);
        continue;
      }
      return ParseRecord(status);
    }
    return std::nullopt;
  }

 private:
  void SkipLine(size_t eol) {
    pos_ = eol < text_.size() ? eol + 1 : eol;
    line_start_ = pos_;
    ++line_;
  }

  int Column() const { return static_cast<int>(pos_ - line_start_) + 1; }

  Status Error(int line, const std::string& what) const {
    return InvalidArgument(std::string(source_) + ":" + std::to_string(line) + ": " + what);
  }

  // At the end of a cell: '\n', "\r\n" or the end of the text?
  bool AtEndOfLine() const {
    if (pos_ >= text_.size()) return true;
    if (text_[pos_] == '\n') return true;
    // encoding/csv also drops a lone '\r' right before the end of the text.
    return text_[pos_] == '\r' && (pos_ + 1 == text_.size() || text_[pos_ + 1] == '\n');
  }

  std::optional<Record> ParseRecord(Status* status) {
    Record rec;
    rec.line = line_;
    while (true) {
      Cell cell;
      cell.line = line_;
      const int number = static_cast<int>(rec.cells.size()) + 1;
      if (pos_ < text_.size() && text_[pos_] == '"') {
        if (!ParseQuoted(number, &cell.text, status)) return std::nullopt;
      } else {
        const size_t start = pos_;
        while (pos_ < text_.size() && text_[pos_] != ',' && !AtEndOfLine()) {
          if (text_[pos_] == '"') {
            *status = Error(line_, "bare quote (\") in unquoted column " + std::to_string(number) +
                                       " at character " + std::to_string(Column()) +
                                       "; a quoted value must start right after the comma, "
                                       "as in: gauge,\"a, b\"");
            return std::nullopt;
          }
          ++pos_;
        }
        cell.text = std::string(util::TrimBlanks(text_.substr(start, pos_ - start)));
      }
      rec.cells.push_back(std::move(cell));
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      // End of line (or text): consume the line break.
      if (pos_ < text_.size() && text_[pos_] == '\r') ++pos_;
      if (pos_ < text_.size() && text_[pos_] == '\n') ++pos_;
      ++line_;
      line_start_ = pos_;
      return rec;
    }
  }

  // pos_ is at the opening quote. Leaves pos_ at the ',' or line end after the closing quote.
  bool ParseQuoted(int number, std::string* out, Status* status) {
    const int open_line = line_;
    const int open_column = Column();
    ++pos_;
    std::string value;
    while (true) {
      if (pos_ >= text_.size()) {
        *status = Error(open_line, "quoted column " + std::to_string(number) +
                                       " is never closed (opening quote at character " +
                                       std::to_string(open_column) + ")");
        return false;
      }
      const char c = text_[pos_];
      if (c == '"') {
        if (pos_ + 1 < text_.size() && text_[pos_ + 1] == '"') {  // "" is a literal quote
          value += '"';
          pos_ += 2;
          continue;
        }
        ++pos_;
        if (pos_ < text_.size() && text_[pos_] != ',' && !AtEndOfLine()) {
          *status = Error(line_, "unexpected character after the closing quote of column " +
                                     std::to_string(number) + " at character " +
                                     std::to_string(Column()) +
                                     "; write \"\" for a quote inside a quoted value");
          return false;
        }
        break;
      }
      if (c == '\r' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '\n') {
        ++pos_;  // encoding/csv turns \r\n inside quotes into \n
        continue;
      }
      value += c;
      ++pos_;
      if (c == '\n') {
        ++line_;
        line_start_ = pos_;
      }
    }
    *out = std::string(util::TrimBlanks(value));
    return true;
  }

  std::string_view text_;
  std::string_view source_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  int line_ = 1;
};

// A collectors file is text: a NUL byte means a damaged or binary file (a half-written copy, a
// pre-allocated file never filled). Go's encoding/csv would read it as an ordinary character, and
// then fail on the field name or carry it into HELP; we stop at it and say where it is.
Status CheckNoNul(std::string_view text, std::string_view source) {
  const size_t nul = text.find('\0');
  if (nul == std::string_view::npos) return Status::Ok();
  const size_t newline = nul == 0 ? std::string_view::npos : text.rfind('\n', nul - 1);
  const size_t line_start = newline == std::string_view::npos ? 0 : newline + 1;
  int line = 1;
  for (size_t i = 0; i < nul; ++i) line += text[i] == '\n' ? 1 : 0;
  return InvalidArgument(std::string(source) + ":" + std::to_string(line) +
                         ": NUL byte (\\x00) at character " + std::to_string(nul - line_start + 1) +
                         "; a collectors file is text (is this file damaged or binary?)");
}

std::optional<MetricType> ParseMetricType(std::string_view s) {
  if (s == "gauge") return MetricType::kGauge;
  if (s == "counter") return MetricType::kCounter;
  if (s == "histogram") return MetricType::kHistogram;
  if (s == "summary") return MetricType::kSummary;
  if (s == "label") return MetricType::kLabel;
  return std::nullopt;
}

}  // namespace

std::string_view MetricTypeName(MetricType t) {
  switch (t) {
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kCounter:
      return "counter";
    case MetricType::kHistogram:
      return "histogram";
    case MetricType::kSummary:
      return "summary";
    case MetricType::kLabel:
      return "label";
  }
  return "gauge";
}

Result<std::vector<CollectorEntry>> ParseCollectorsCsv(std::string_view text,
                                                       std::string_view source,
                                                       std::vector<std::string>* warnings,
                                                       UnknownFields unknown) {
  if (Status st = CheckNoNul(text, source); !st.ok()) return st;
  Tokenizer tok(text, source);
  std::vector<CollectorEntry> entries;
  std::map<std::string, int, std::less<>> first_line;  // metric name -> line it was first seen
  const std::string prefix = std::string(source) + ":";
  while (true) {
    Status st;
    std::optional<Record> rec = tok.Next(&st);
    if (!st.ok()) return st;
    if (!rec) break;
    const std::string at = prefix + std::to_string(rec->line) + ": ";
    if (rec->cells.size() != 3) {
      return InvalidArgument(at + "expected 3 comma-separated columns (field, type, help), got " +
                             std::to_string(rec->cells.size()));
    }
    const Cell& name = rec->cells[0];
    const Cell& type = rec->cells[1];
    const std::string cell_at = prefix + std::to_string(name.line) + ": ";
    if (name.text.empty()) return InvalidArgument(cell_at + "missing field name in column 1");
    const fields::FieldDef* field = fields::FindByName(name.text);
    if (field == nullptr) {
      std::string msg = cell_at + "unknown field " + util::QuoteForMessage(name.text);
      if (std::string hint = fields::SuggestName(name.text); !hint.empty()) {
        msg += " (did you mean " + hint + "?)";
      }
      if (unknown == UnknownFields::kFatal) return InvalidArgument(msg);
      // A name from a release newer than this daemon must not stop it (a DaemonSet would
      // crash-loop after a chart upgrade): the row stays, marked, for the plan to leave out and
      // list; the rest of the file is served.
      field = fields::UnknownNameField();
      // Once per name: a repeated row gets the duplicate warning below instead.
      if (warnings != nullptr && !first_line.contains(name.text)) {
        warnings->push_back(msg +
                            "; skipping this row (a field of a newer dcgm-exporter release, or a "
                            "typo; --collectors-unknown-fields=fatal refuses such a file)");
      }
    }
    std::optional<MetricType> mt = ParseMetricType(type.text);
    if (!mt) {
      if (field->source != fields::Source::kExporter) {
        return InvalidArgument(prefix + std::to_string(type.line) + ": unknown metric type " +
                               util::QuoteForMessage(type.text) +
                               " (expected gauge, counter, histogram, summary or label)");
      }
      // dcgm-exporter does not check the type of its own DCGM_EXP_* rows, so such files load
      // there; we load them too and call the (windowed-count) series gauges.
      mt = MetricType::kGauge;
      if (warnings != nullptr) {
        warnings->push_back(prefix + std::to_string(type.line) + ": unknown metric type " +
                            util::QuoteForMessage(type.text) + " for " + name.text +
                            "; using gauge");
      }
    }
    // dcgm-exporter accepts a repeated name but then serves the family twice, which Prometheus
    // rejects for the whole scrape. Keep the first row, so the file still loads and the page stays
    // valid, and say so. Different names for one field (aliases) are distinct metrics: kept.
    if (auto [it, inserted] = first_line.emplace(name.text, rec->line); !inserted) {
      if (warnings != nullptr) {
        warnings->push_back(at + "duplicate field " + util::QuoteForMessage(name.text) +
                            " (first at line " + std::to_string(it->second) +
                            "); ignoring this row");
      }
      continue;
    }
    CollectorEntry e;
    e.field = field;
    e.name = name.text;
    e.type = *mt;
    e.help = rec->cells[2].text;
    e.line = rec->line;
    entries.push_back(std::move(e));
  }
  // dcgm-exporter starts on such a file without a word and then serves no DCGM series at all;
  // we start too (a file that loads there loads here), but say why the page will be empty.
  if (entries.empty() && warnings != nullptr) {
    warnings->push_back(std::string(source) +
                        ": no collector rows (the file is empty or holds only comments and blank "
                        "lines); no GPU field will be collected");
  }
  return entries;
}

Result<std::vector<CollectorEntry>> ParseCollectorsCsv(std::string_view text,
                                                       std::string_view source,
                                                       UnknownFields unknown) {
  std::vector<std::string> warnings;
  Result<std::vector<CollectorEntry>> r = ParseCollectorsCsv(text, source, &warnings, unknown);
  for (const std::string& w : warnings) log::Warn("collectors file", {{"warning", w}});
  return r;
}

Result<std::vector<CollectorEntry>> LoadCollectorsCsv(const std::string& path,
                                                      UnknownFields unknown) {
  Result<std::string> text = ReadTextFile(path, "collectors file");
  if (!text.ok()) return text.status();
  return ParseCollectorsCsv(*text, path, unknown);
}

}  // namespace nvmlx::config
