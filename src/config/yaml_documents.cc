#include "config/yaml_documents.h"

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <sstream>
#include <string>

namespace nvmlx::config {
namespace {

// Notes where documents start; every other event is dropped (nothing is built).
class DocumentStarts : public YAML::EventHandler {
 public:
  explicit DocumentStarts(YamlDocuments* out) : out_(out) {}
  void OnDocumentStart(const YAML::Mark& mark) override {
    if (out_->count == 1) out_->second_line = mark.line + 1;
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  YamlDocuments* out_;
};

}  // namespace

YamlDocuments CountYamlDocuments(std::string_view text, int limit) {
  YamlDocuments out;
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  DocumentStarts starts(&out);
  while (out.count < limit && parser.HandleNextDocument(starts)) ++out.count;
  return out;
}

}  // namespace nvmlx::config
