// engram's WebAssembly binding of hnswlib (cosine space), built with WASM SIMD
// by scripts/build-hnswlib.mjs into hnswlib.js beside this file. Only
// lib/vector/hnswlib-runtime.ts loads it.
//
// Why our own build instead of hnswlib-wasm: hnswlib-wasm is compiled without
// SIMD (every distance is a scalar loop) and its addPoints rebuilds a cache of
// used labels, O(index size), on every call. Here distances use 128-bit SIMD
// and a batch of points goes in through WASM memory without any per-call scan:
// at 100k × 384-d, queries went from 2.04x native hnswlib's time to 1.05x
// (bench/vector), and a 100k fill in Chromium from 198 s to about 90 s.
//
// Conventions of this interface:
// - Vectors and labels are passed as pointers into WASM memory that the JS
//   side allocated; vectors are normalised here (cosine = 1 - inner product
//   of unit vectors), as hnswlib-wasm's 'cosine' space did, so the file
//   format and the stored vectors are the same as before.
// - No C++ exception crosses into JS: every call catches and returns the
//   message ("" for success), or a negative count with lastError().
// - Replace-deleted mode is always on: a new point takes over a deleted slot.
#include <emscripten/bind.h>
#include <wasm_simd128.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "hnswlib/hnswlib.h"

namespace {

// 1 - <a, b> with four 128-bit accumulators; the tail (dimensions not a
// multiple of 16, then of 4) is summed one lane or value at a time.
float innerProductDistance(const void *a, const void *b, const void *param) {
  const size_t n = *static_cast<const size_t *>(param);
  const float *x = static_cast<const float *>(a);
  const float *y = static_cast<const float *>(b);
  v128_t s0 = wasm_f32x4_splat(0.0f), s1 = s0, s2 = s0, s3 = s0;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(x + i), wasm_v128_load(y + i)));
    s1 = wasm_f32x4_add(s1, wasm_f32x4_mul(wasm_v128_load(x + i + 4), wasm_v128_load(y + i + 4)));
    s2 = wasm_f32x4_add(s2, wasm_f32x4_mul(wasm_v128_load(x + i + 8), wasm_v128_load(y + i + 8)));
    s3 = wasm_f32x4_add(s3, wasm_f32x4_mul(wasm_v128_load(x + i + 12), wasm_v128_load(y + i + 12)));
  }
  for (; i + 4 <= n; i += 4) s0 = wasm_f32x4_add(s0, wasm_f32x4_mul(wasm_v128_load(x + i), wasm_v128_load(y + i)));
  const v128_t s = wasm_f32x4_add(wasm_f32x4_add(s0, s1), wasm_f32x4_add(s2, s3));
  float sum = wasm_f32x4_extract_lane(s, 0) + wasm_f32x4_extract_lane(s, 1) + wasm_f32x4_extract_lane(s, 2) + wasm_f32x4_extract_lane(s, 3);
  for (; i < n; i++) sum += x[i] * y[i];
  return 1.0f - sum;
}

class CosineSpace : public hnswlib::SpaceInterface<float> {
 public:
  explicit CosineSpace(size_t dimensions) : dimensions_(dimensions) {}
  size_t get_data_size() override { return dimensions_ * sizeof(float); }
  hnswlib::DISTFUNC<float> get_dist_func() override { return innerProductDistance; }
  void *get_dist_func_param() override { return &dimensions_; }

 private:
  size_t dimensions_;
};

// Scales a vector to unit length in place (a zero vector stays zero).
void normalize(float *v, size_t n) {
  float sum = 0.0f;
  for (size_t i = 0; i < n; i++) sum += v[i] * v[i];
  const float scale = 1.0f / (std::sqrt(sum) + 1e-30f);
  for (size_t i = 0; i < n; i++) v[i] *= scale;
}

// hnswlib's label filter, asking a JS function (label) => boolean.
class JsFilter : public hnswlib::BaseFilterFunctor {
 public:
  explicit JsFilter(const emscripten::val &fn) : fn_(fn) {}
  bool operator()(hnswlib::labeltype label) override { return fn_(static_cast<double>(label)).as<bool>(); }

 private:
  const emscripten::val &fn_;
};

// hnswlib's label filter over a bit per label (bit l of word l / 32), in WASM memory:
// hnswlib asks the filter for every candidate it considers, often tens of
// thousands in a walk over a small share of the index, and a call into JS for
// each cost more than the walk's distances.
class BitmapFilter : public hnswlib::BaseFilterFunctor {
 public:
  BitmapFilter(const uint32_t *words, size_t count) : words_(words), count_(count) {}
  bool operator()(hnswlib::labeltype label) override {
    const size_t word = static_cast<size_t>(label) >> 5;
    return word < count_ && ((words_[word] >> (label & 31)) & 1u) != 0;
  }

 private:
  const uint32_t *words_;
  size_t count_;
};

std::string describe(const std::exception &e) { return e.what()[0] == '\0' ? "unknown hnswlib error" : e.what(); }

}  // namespace

class Hnsw {
 public:
  explicit Hnsw(int dimensions) : dimensions_(static_cast<size_t>(dimensions)), space_(static_cast<size_t>(dimensions)) {}
  ~Hnsw() {
    delete index_;
    delete loading_;
  }

  std::string init(int maxElements, int m, int efConstruction, int seed) {
    return guard([&] { replace(new hnswlib::HierarchicalNSW<float>(&space_, maxElements, m, efConstruction, seed, true)); });
  }

  // Reading an index file (hnswlib's format, as serialize() or hnswlib-wasm's saveIndex()
  // wrote it, its structure checked by hnswlib-file.ts first) in two steps, so that the
  // file is never copied whole into WASM memory, which never shrinks: beginLoad() takes
  // the 56-byte header at `header`, allocates the index for `maxElements` and returns
  // where the level-0 block (count × size per element bytes, copied there by JS) goes, or
  // 0 (see lastError()); finishLoad() reads the rest of the file, the upper-level link
  // lists at `links`, and makes the index current. It does what hnswlib's loadIndex()
  // does, which through Emscripten's file system took three times as long (a seek and a
  // read per element in its check pass).
  uintptr_t beginLoad(uintptr_t header, int maxElements) {
    delete loading_;
    loading_ = nullptr;
    uintptr_t level0 = 0;
    error_ = guard([&] {
      auto *index = new hnswlib::HierarchicalNSW<float>(&space_);
      loading_ = index;
      index->allow_replace_deleted_ = true;
      const char *at = reinterpret_cast<const char *>(header);
      const auto take = [&at](void *to, size_t bytes) {
        std::memcpy(to, at, bytes);
        at += bytes;
      };
      size_t fileMaxElements = 0, count = 0;
      take(&index->offsetLevel0_, sizeof(index->offsetLevel0_));
      take(&fileMaxElements, sizeof(fileMaxElements));
      take(&count, sizeof(count));
      take(&index->size_data_per_element_, sizeof(index->size_data_per_element_));
      take(&index->label_offset_, sizeof(index->label_offset_));
      take(&index->offsetData_, sizeof(index->offsetData_));
      take(&index->maxlevel_, sizeof(index->maxlevel_));
      take(&index->enterpoint_node_, sizeof(index->enterpoint_node_));
      take(&index->maxM_, sizeof(index->maxM_));
      take(&index->maxM0_, sizeof(index->maxM0_));
      take(&index->M_, sizeof(index->M_));
      take(&index->mult_, sizeof(index->mult_));
      take(&index->ef_construction_, sizeof(index->ef_construction_));
      const size_t maxCount = static_cast<size_t>(maxElements) < count ? std::max(fileMaxElements, count) : static_cast<size_t>(maxElements);
      index->max_elements_ = maxCount;
      index->data_size_ = space_.get_data_size();
      index->fstdistfunc_ = space_.get_dist_func();
      index->dist_func_param_ = space_.get_dist_func_param();
      index->data_level0_memory_ = static_cast<char *>(malloc(maxCount * index->size_data_per_element_));
      if (index->data_level0_memory_ == nullptr) throw std::runtime_error("Not enough memory: loading failed to allocate level0");
      index->size_links_per_element_ = index->maxM_ * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
      index->size_links_level0_ = index->maxM0_ * sizeof(hnswlib::tableint) + sizeof(hnswlib::linklistsizeint);
      std::vector<std::mutex>(maxCount).swap(index->link_list_locks_);
      std::vector<std::mutex>(hnswlib::HierarchicalNSW<float>::MAX_LABEL_OPERATION_LOCKS).swap(index->label_op_locks_);
      index->visited_list_pool_.reset(new hnswlib::VisitedListPool(1, maxCount));
      index->linkLists_ = static_cast<char **>(calloc(maxCount, sizeof(void *)));
      if (index->linkLists_ == nullptr) throw std::runtime_error("Not enough memory: loading failed to allocate linklists");
      index->element_levels_ = std::vector<int>(maxCount);
      index->revSize_ = 1.0 / index->mult_;
      index->ef_ = 10;
      loadingCount_ = count;
      level0 = reinterpret_cast<uintptr_t>(index->data_level0_memory_);
    });
    if (!error_.empty()) {
      delete loading_;
      loading_ = nullptr;
    }
    return level0;
  }

  std::string finishLoad(uintptr_t links, size_t length) {
    std::string error = guard([&] {
      if (loading_ == nullptr) throw std::runtime_error("finishLoad() without beginLoad()");
      auto &index = *loading_;
      const char *at = reinterpret_cast<const char *>(links);
      const char *end = at + length;
      // The element count goes in first, so that clear() (on a throw) frees the link lists read so far.
      index.cur_element_count = loadingCount_;
      index.label_lookup_.reserve(loadingCount_);
      for (size_t i = 0; i < loadingCount_; i++) {
        index.label_lookup_[index.getExternalLabel(i)] = i;
        unsigned int size = 0;
        if (end - at < static_cast<ptrdiff_t>(sizeof(size))) throw std::runtime_error("Index seems to be corrupted or unsupported");
        std::memcpy(&size, at, sizeof(size));
        at += sizeof(size);
        if (size == 0) continue;
        if (end - at < static_cast<ptrdiff_t>(size)) throw std::runtime_error("Index seems to be corrupted or unsupported");
        char *list = static_cast<char *>(malloc(size));
        if (list == nullptr) throw std::runtime_error("Not enough memory: loading failed to allocate a linklist");
        std::memcpy(list, at, size);
        at += size;
        index.linkLists_[i] = list;
        index.element_levels_[i] = static_cast<int>(size / index.size_links_per_element_);
      }
      if (at != end) throw std::runtime_error("Index seems to be corrupted or unsupported");
      for (size_t i = 0; i < loadingCount_; i++) {
        if (!index.isMarkedDeleted(static_cast<hnswlib::tableint>(i))) continue;
        index.num_deleted_ += 1;
        index.deleted_elements.insert(static_cast<hnswlib::tableint>(i));
      }
      replace(loading_);
      loading_ = nullptr;
    });
    delete loading_;
    loading_ = nullptr;
    return error;
  }

  // hnswlib's index file, byte for byte what its saveIndex() writes, built in WASM
  // memory and handed to JS as a view (valid until release() or the next call):
  // saveIndex() through Emscripten's file system took about 5 ms per MB, this a memcpy.
  emscripten::val serialize() {
    file_.clear();
    error_ = guard([&] {
      auto &index = ready();
      const size_t count = index.cur_element_count;
      size_t size = 56 + count * index.size_data_per_element_;
      for (size_t i = 0; i < count; i++) {
        size += sizeof(unsigned int);
        if (index.element_levels_[i] > 0) size += index.size_links_per_element_ * index.element_levels_[i];
      }
      file_.resize(size);
      char *at = file_.data();
      const auto put = [&at](const void *from, size_t bytes) {
        std::memcpy(at, from, bytes);
        at += bytes;
      };
      const size_t elements = count;
      put(&index.offsetLevel0_, sizeof(index.offsetLevel0_));
      put(&index.max_elements_, sizeof(index.max_elements_));
      put(&elements, sizeof(elements));
      put(&index.size_data_per_element_, sizeof(index.size_data_per_element_));
      put(&index.label_offset_, sizeof(index.label_offset_));
      put(&index.offsetData_, sizeof(index.offsetData_));
      put(&index.maxlevel_, sizeof(index.maxlevel_));
      put(&index.enterpoint_node_, sizeof(index.enterpoint_node_));
      put(&index.maxM_, sizeof(index.maxM_));
      put(&index.maxM0_, sizeof(index.maxM0_));
      put(&index.M_, sizeof(index.M_));
      put(&index.mult_, sizeof(index.mult_));
      put(&index.ef_construction_, sizeof(index.ef_construction_));
      put(index.data_level0_memory_, count * index.size_data_per_element_);
      for (size_t i = 0; i < count; i++) {
        const unsigned int links = index.element_levels_[i] > 0 ? index.size_links_per_element_ * index.element_levels_[i] : 0;
        put(&links, sizeof(links));
        if (links > 0) put(index.linkLists_[i], links);
      }
    });
    if (!error_.empty()) return emscripten::val::null();
    return emscripten::val(emscripten::typed_memory_view(file_.size(), reinterpret_cast<unsigned char *>(file_.data())));
  }

  // Frees the file serialize() made.
  void release() { std::vector<char>().swap(file_); }

  std::string resize(int maxElements) {
    return guard([&] { ready().resizeIndex(maxElements); });
  }

  // `count` vectors of the index's dimensions at `vectors` (normalised in place) under the labels at `labels`.
  std::string addPoints(uintptr_t vectors, uintptr_t labels, int count, bool replaceDeleted) {
    return guard([&] {
      auto &index = ready();
      float *points = reinterpret_cast<float *>(vectors);
      const uint32_t *ids = reinterpret_cast<const uint32_t *>(labels);
      for (int i = 0; i < count; i++) {
        float *point = points + static_cast<size_t>(i) * dimensions_;
        normalize(point, dimensions_);
        index.addPoint(point, ids[i], replaceDeleted);
      }
    });
  }

  std::string markDelete(int label) {
    return guard([&] { ready().markDelete(static_cast<hnswlib::labeltype>(label)); });
  }

  // Up to k nearest labels to the query at `query` (normalised in place), closest
  // first, into `outLabels` (uint32) and `outDistances` (float32). Returns how
  // many, or -1 (see lastError()). `filter` is a JS (label) => boolean or undefined.
  int search(uintptr_t query, int k, emscripten::val filter, uintptr_t outLabels, uintptr_t outDistances) {
    int found = -1;
    error_ = guard([&] {
      float *point = reinterpret_cast<float *>(query);
      normalize(point, dimensions_);
      const bool filtered = !filter.isUndefined() && !filter.isNull();
      JsFilter allowed(filter);
      auto result = ready().searchKnn(point, static_cast<size_t>(k), filtered ? &allowed : nullptr);
      uint32_t *labels = reinterpret_cast<uint32_t *>(outLabels);
      float *distances = reinterpret_cast<float *>(outDistances);
      found = static_cast<int>(result.size());
      for (int i = found - 1; i >= 0; i--) {
        labels[i] = static_cast<uint32_t>(result.top().second);
        distances[i] = result.top().first;
        result.pop();
      }
    });
    return error_.empty() ? found : -1;
  }

  // search() with the allowed labels given as a bitmap of `words` uint32 words at
  // `bitmap` (bit l of word l / 32 set: label l may be returned) instead of a JS filter.
  int searchAllowed(uintptr_t query, int k, uintptr_t bitmap, int words, uintptr_t outLabels, uintptr_t outDistances) {
    int found = -1;
    error_ = guard([&] {
      float *point = reinterpret_cast<float *>(query);
      normalize(point, dimensions_);
      BitmapFilter allowed(reinterpret_cast<const uint32_t *>(bitmap), static_cast<size_t>(words));
      auto result = ready().searchKnn(point, static_cast<size_t>(k), &allowed);
      uint32_t *labels = reinterpret_cast<uint32_t *>(outLabels);
      float *distances = reinterpret_cast<float *>(outDistances);
      found = static_cast<int>(result.size());
      for (int i = found - 1; i >= 0; i--) {
        labels[i] = static_cast<uint32_t>(result.top().second);
        distances[i] = result.top().first;
        result.pop();
      }
    });
    return error_.empty() ? found : -1;
  }

  // Cosine distances between the query at `query` (normalised in place) and the
  // vectors stored under the `count` labels at `labels` (uint32), into
  // `outDistances` (float32), with the graph walk's own SIMD distance: an exact
  // scan of a few labels (a search scope) from the index's memory, with one call
  // from JS instead of one per label. A label that is not live gets NaN.
  std::string distances(uintptr_t query, uintptr_t labels, int count, uintptr_t outDistances) {
    return guard([&] {
      auto &index = ready();
      float *point = reinterpret_cast<float *>(query);
      normalize(point, dimensions_);
      const uint32_t *ids = reinterpret_cast<const uint32_t *>(labels);
      float *out = reinterpret_cast<float *>(outDistances);
      // The vectors are visited in storage order, not the caller's: a scope's vectors lie
      // scattered through the index's memory, and ascending addresses cost far fewer misses.
      order_.clear();
      order_.reserve(static_cast<size_t>(count));
      for (int i = 0; i < count; i++) {
        const auto found = index.label_lookup_.find(static_cast<hnswlib::labeltype>(ids[i]));
        if (found == index.label_lookup_.end() || index.isMarkedDeleted(found->second)) {
          out[i] = std::nanf("");
          continue;
        }
        order_.emplace_back(found->second, static_cast<uint32_t>(i));
      }
      std::sort(order_.begin(), order_.end());
      for (const auto &[internal, i] : order_) out[i] = innerProductDistance(point, index.getDataByInternalId(internal), &dimensions_);
    });
  }

  // Address of the (normalised) vector stored under a live label, 0 when there is none.
  uintptr_t point(int label) const {
    if (index_ == nullptr) return 0;
    const auto found = index_->label_lookup_.find(static_cast<hnswlib::labeltype>(label));
    if (found == index_->label_lookup_.end() || index_->isMarkedDeleted(found->second)) return 0;
    return reinterpret_cast<uintptr_t>(index_->getDataByInternalId(found->second));
  }

  std::string setEf(int ef) {
    return guard([&] { ready().setEf(ef); });
  }

  std::string lastError() const { return error_; }

 private:
  template <typename F>
  std::string guard(F &&body) {
    try {
      body();
      return "";
    } catch (const std::exception &e) {
      return describe(e);
    } catch (...) {
      return "unknown hnswlib error";
    }
  }

  hnswlib::HierarchicalNSW<float> &ready() {
    if (index_ == nullptr) throw std::runtime_error("index not initialised");
    return *index_;
  }

  void replace(hnswlib::HierarchicalNSW<float> *index) {
    delete index_;
    index_ = index;
  }

  size_t dimensions_;
  CosineSpace space_;
  hnswlib::HierarchicalNSW<float> *index_ = nullptr;
  // An index between beginLoad() and finishLoad(), and its element count.
  hnswlib::HierarchicalNSW<float> *loading_ = nullptr;
  size_t loadingCount_ = 0;
  std::string error_;
  std::vector<char> file_;
  // distances()' (internal id, position) pairs, kept between calls.
  std::vector<std::pair<hnswlib::tableint, uint32_t>> order_;
};

EMSCRIPTEN_BINDINGS(engram_hnswlib) {
  emscripten::class_<Hnsw>("Hnsw")
      .constructor<int>()
      .function("init", &Hnsw::init)
      .function("beginLoad", &Hnsw::beginLoad)
      .function("finishLoad", &Hnsw::finishLoad)
      .function("serialize", &Hnsw::serialize)
      .function("release", &Hnsw::release)
      .function("resize", &Hnsw::resize)
      .function("addPoints", &Hnsw::addPoints)
      .function("markDelete", &Hnsw::markDelete)
      .function("search", &Hnsw::search)
      .function("searchAllowed", &Hnsw::searchAllowed)
      .function("distances", &Hnsw::distances)
      .function("point", &Hnsw::point)
      .function("setEf", &Hnsw::setEf)
      .function("lastError", &Hnsw::lastError);
}
