// Shared<T>: zeroed memory that forked worker processes and the parent both
// see (MAP_SHARED | MAP_ANONYMOUS), for start lines, counters and samples.
// Lock-free std::atomic members work across processes on Linux.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <new>
#include <stdexcept>
#include <type_traits>

namespace sqlock_bench {

template <typename T>
class Shared {
    static_assert(std::is_trivially_destructible_v<T>, "shared pages are never destroyed");

  public:
    explicit Shared(std::size_t count = 1) : count_(count) {
        void* p = mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) throw std::runtime_error("mmap of a shared page failed");
        data_ = static_cast<T*>(p);
        for (std::size_t i = 0; i < count_; ++i) new (data_ + i) T();
    }
    ~Shared() { munmap(data_, bytes()); }
    Shared(const Shared&) = delete;
    Shared& operator=(const Shared&) = delete;

    T& operator[](std::size_t i) { return data_[i]; }
    T* operator->() { return data_; }
    T& operator*() { return *data_; }
    std::size_t size() const { return count_; }

  private:
    std::size_t bytes() const { return count_ > 0 ? count_ * sizeof(T) : 1; }
    T* data_ = nullptr;
    std::size_t count_;
};

}  // namespace sqlock_bench
