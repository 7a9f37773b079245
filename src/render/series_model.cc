#include "render/series_model.h"

#include <algorithm>
#include <charconv>
#include <cstring>

namespace nvmlx::render {
namespace {

constexpr size_t kChunkBytes = 4096;

}  // namespace

const std::string* FindLabel(const Labels& labels, std::string_view name) {
  for (const auto& [k, v] : labels) {
    if (k == name) return &v;
  }
  return nullptr;
}

void SeriesModel::Clear() {
  for (SeriesFamily& f : families) {
    f.points.clear();
    spare_points_.push_back(std::move(f.points));
  }
  families.clear();
  labels_.clear();
  set_begin_.clear();
  chunk_ = 0;
  used_ = 0;
}

SeriesFamily& SeriesModel::AddFamily() {
  SeriesFamily& f = families.emplace_back();
  if (!spare_points_.empty()) {
    f.points = std::move(spare_points_.back());
    spare_points_.pop_back();
  }
  return f;
}

uint32_t SeriesModel::AddLabelSet(std::span<const LabelView> labels) {
  set_begin_.push_back(static_cast<uint32_t>(labels_.size()));
  labels_.insert(labels_.end(), labels.begin(), labels.end());
  return static_cast<uint32_t>(set_begin_.size() - 1);
}

std::string_view SeriesModel::Intern(std::string_view s) {
  if (s.empty()) return {};
  while (chunk_ < chunks_.size() && used_ + s.size() > chunks_[chunk_].size) {
    ++chunk_;  // the rest of this chunk is left unused until Clear()
    used_ = 0;
  }
  if (chunk_ == chunks_.size()) {
    const size_t size = std::max(kChunkBytes, s.size());
    chunks_.push_back({std::make_unique<char[]>(size), size});
    used_ = 0;
  }
  char* at = chunks_[chunk_].data.get() + used_;
  std::memcpy(at, s.data(), s.size());
  used_ += s.size();
  return {at, s.size()};
}

std::string_view SeriesModel::InternInt(int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return Intern(std::string_view(buf, static_cast<size_t>(end - buf)));
}

}  // namespace nvmlx::render
