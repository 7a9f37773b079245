#include "fields/reader.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "fields/conversions.h"

namespace nvmlx::fields {
namespace {

bool Readable(const FieldDef* f) {
  return f != nullptr && f->source == Source::kDevice &&
         ((f->nvml_field_id > 0 && f->convert != nullptr) || f->read != nullptr);
}

// Index of (field_id, scope) in `request`, appending it when new: two catalog fields may share one
// NVML field (POWER_VIOLATION and CLOCKS_EVENT_REASON_SW_POWER_CAP_NS are both FI 74), and the
// perf-policy fields cost ~0.7 ms each, so each is asked for once.
int SlotFor(std::vector<nvmlFieldValue_t>* request, unsigned field_id, unsigned scope) {
  for (size_t i = 0; i < request->size(); ++i) {
    if ((*request)[i].fieldId == field_id && (*request)[i].scopeId == scope) {
      return static_cast<int>(i);
    }
  }
  nvmlFieldValue_t fv{};
  fv.fieldId = field_id;
  fv.scopeId = scope;
  request->push_back(fv);
  return static_cast<int>(request->size() - 1);
}

int64_t SteadyMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

DeviceReader::DeviceReader(const nvml::Library& lib, nvml::Device device,
                           std::vector<const FieldDef*> fields)
    : lib_(lib), device_(device) {
  for (const FieldDef* f : fields) {
    if (Readable(f)) fields_.push_back(f);
  }
  std::sort(fields_.begin(), fields_.end(),
            [](const FieldDef* a, const FieldDef* b) { return a->id < b->id; });
  fields_.erase(std::unique(fields_.begin(), fields_.end(),
                            [](const FieldDef* a, const FieldDef* b) { return a->id == b->id; }),
                fields_.end());
  slot_.assign(fields_.size(), -1);
  partner_slot_.assign(fields_.size(), -1);
  rate_state_.assign(fields_.size(), RateState{});
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FieldDef* f = fields_[i];
    if (f->nvml_field_id > 0) {
      batched_.push_back(f);
      slot_[i] = SlotFor(&request_, f->nvml_field_id, f->nvml_scope_id);
      if (f->rate_partner_field_id > 0) {
        partner_slot_[i] = SlotFor(&request_, f->rate_partner_field_id, f->nvml_scope_id);
      }
    } else {
      direct_.push_back(f);
    }
  }
}

void DeviceReader::Read(std::vector<model::Sample>* samples,
                        std::vector<FieldError>* errors) const {
  std::vector<nvmlFieldValue_t> values = request_;
  Status batch;
  if (!values.empty()) {
    batch = lib_.FieldValues(device_, values.data(), static_cast<int>(values.size()));
  }
  // Once the GPU answered GPU_IS_LOST, further calls only stall on the RM lock: skip them.
  Status lost = batch.code() == StatusCode::kGpuLost ? batch : Status::Ok();

  auto element = [&](int slot) -> Result<nvmlFieldValue_t> {
    if (!batch.ok()) return batch;
    const nvmlFieldValue_t& fv = values[slot];
    if (fv.nvmlReturn != NVML_SUCCESS) {
      // The call succeeds as a whole while single elements fail; name the NVML field id.
      return nvml::FromNvmlReturn(
          fv.nvmlReturn, "nvmlDeviceGetFieldValues(field " + std::to_string(fv.fieldId) + ")",
          lib_.api().nvmlErrorString);
    }
    return fv;
  };

  ReadContext ctx{lib_, device_, std::nullopt, std::nullopt, std::nullopt, std::nullopt};
  for (size_t i = 0; i < fields_.size(); ++i) {
    const FieldDef* f = fields_[i];
    Result<model::Value> value = Internal("unreachable");
    if (slot_[i] < 0) {
      value = lost.ok() ? f->read(ctx) : Result<model::Value>(lost);
    } else if (!f->rate) {
      Result<nvmlFieldValue_t> fv = element(slot_[i]);
      value = fv.ok() ? f->convert(*fv) : Result<model::Value>(fv.status());
    } else {
      // A rate from one raw counter or the sum of two: compare with the previous Read's value.
      const bool pair = partner_slot_[i] >= 0;
      Result<nvmlFieldValue_t> a = element(slot_[i]);
      Result<nvmlFieldValue_t> b = pair ? element(partner_slot_[i]) : a;
      Result<model::Value> va = a.ok() ? f->convert(*a) : Result<model::Value>(a.status());
      Result<model::Value> vb = b.ok() ? f->convert(*b) : Result<model::Value>(b.status());
      RateState& st = rate_state_[i];
      if (!va.ok() || !vb.ok()) {
        st.has_prev = false;
        errors->push_back({f->id, !va.ok() ? va.status() : vb.status()});
        continue;
      }
      const uint64_t sum = static_cast<uint64_t>(std::get<int64_t>(*va)) +
                           (pair ? static_cast<uint64_t>(std::get<int64_t>(*vb)) : uint64_t{0});
      // Prefer the driver's own sample time (µs since epoch), which belongs to the counter;
      // fall back to the steady clock when the driver leaves it 0.
      const bool driver_time = a->timestamp > 0 && b->timestamp > 0;
      const int64_t now_us = driver_time ? std::max(a->timestamp, b->timestamp) : SteadyMicros();
      std::optional<int64_t> rate;
      if (st.has_prev && st.driver_time == driver_time) {
        rate = internal::CounterRate(st.sum, st.time_us, sum, now_us, f->rate_divisor);
      }
      const bool advanced = !st.has_prev || st.driver_time != driver_time || now_us > st.time_us;
      if (advanced) st = RateState{true, driver_time, sum, now_us};
      if (rate) samples->push_back({f->id, model::Value(*rate)});
      continue;
    }
    if (!value.ok() && value.status().code() == StatusCode::kGpuLost && lost.ok()) {
      lost = value.status();
    }
    if (value.ok()) {
      samples->push_back({f->id, std::move(*value)});
    } else {
      errors->push_back({f->id, value.status()});
    }
  }
}

}  // namespace nvmlx::fields
