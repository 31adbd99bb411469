#pragma once
// The engine's hash map from 64-bit keys to values, its entries in one array (open
// addressing, linear probing, at most half full). The event core looks up a route or a barrier
// at each NIC transfer and collective; std::unordered_map reads its bucket, then the node it
// points to, two cache misses past a thousand GPUs where this reads one entry (and rarely the
// next). Keys are the caller's names; the largest 64-bit value is reserved (it marks a free
// entry).
#include <bit>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace moesim::engine {

template <class Value>
class FlatMap {
 public:
  static constexpr std::uint64_t kFree = std::numeric_limits<std::uint64_t>::max();

  // The value of `key`, or nullptr. Good until the next add.
  Value* find(std::uint64_t key) {
    if (entries_.empty()) return nullptr;
    for (std::size_t i = first(key);; i = (i + 1) & mask()) {
      if (entries_[i].key == key) return &entries_[i].value;
      if (entries_[i].key == kFree) return nullptr;
    }
  }
  // The value of `key`, made with `Value{}` if it has none. Good until the next add.
  Value& operator[](std::uint64_t key) {
    if (Value* v = find(key)) return *v;
    return add(key, Value{});
  }
  // Adds `key`, which has no value yet. Throws std::invalid_argument for the reserved key.
  Value& add(std::uint64_t key, Value value) {
    if (key == kFree) throw std::invalid_argument("FlatMap: the largest 64-bit key is reserved");
    if (2 * (size_ + 1) > entries_.size()) grow();
    ++size_;
    return place(key, std::move(value));
  }
  std::size_t size() const { return size_; }

 private:
  struct Entry {
    std::uint64_t key = kFree;
    Value value{};
  };
  std::size_t mask() const { return entries_.size() - 1; }
  // Fibonacci hashing: the key times 2^64 / phi, its top bits (the table holds 2^bits entries).
  std::size_t first(std::uint64_t key) const {
    return static_cast<std::size_t>((key * 0x9E3779B97F4A7C15ull) >> (64 - std::countr_zero(entries_.size())));
  }
  Value& place(std::uint64_t key, Value value) {
    std::size_t i = first(key);
    while (entries_[i].key != kFree) i = (i + 1) & mask();
    entries_[i] = Entry{key, std::move(value)};
    return entries_[i].value;
  }
  void grow() {
    std::vector<Entry> old = std::exchange(entries_, std::vector<Entry>(std::max<std::size_t>(16, 2 * entries_.size())));
    for (Entry& e : old)
      if (e.key != kFree) place(e.key, std::move(e.value));
  }

  std::vector<Entry> entries_;
  std::size_t size_ = 0;
};

}  // namespace moesim::engine
