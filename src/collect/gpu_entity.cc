#include "collect/gpu_entity.h"

#include <string>
#include <utility>

#include "util/log.h"

namespace nvmlx::collect {

size_t Entities::Add(EntityFixed fixed, model::DeviceIdentity identity, bool lost) {
  auto e = std::make_unique<GpuEntity>();
  e->fixed = std::move(fixed);
  e->lost.store(lost);
  entities_.push_back(std::move(e));
  identities_->push_back(std::move(identity));
  return entities_.size() - 1;
}

bool Entities::Lost(size_t i) const {
  const GpuEntity& e = *entities_[i];
  return e.lost.load() || (e.fixed.parent && entities_[*e.fixed.parent]->lost.load());
}

void Entities::MarkLost(size_t i, const Status& why) const {
  if (entities_[i]->fixed.parent) i = *entities_[i]->fixed.parent;
  if (entities_[i]->lost.exchange(true)) return;
  log::Error("GPU is lost (fell off the bus?); its series stop, other GPUs continue",
             {{"gpu", std::to_string(identity(i).index)},
              {"UUID", identity(i).uuid},
              {"err", why.ToString()}});
}

}  // namespace nvmlx::collect
