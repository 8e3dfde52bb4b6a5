#include "mariadb_abandoned.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>

namespace sqlock::detail::mariadb {
namespace {

struct Registry {
    std::mutex mutex;
    std::vector<AbandonedSession> sessions;
    std::atomic<std::size_t> count{0};
};

Registry& registry() {
    static Registry* r = new Registry;  // never destroyed: used from static destructors too
    return *r;
}

}  // namespace

void record_abandoned(AbandonedSession s) {
    Registry& r = registry();
    std::lock_guard<std::mutex> guard(r.mutex);
    r.sessions.push_back(std::move(s));
    r.count.store(r.sessions.size(), std::memory_order_release);
}

bool any_abandoned() noexcept {
    return registry().count.load(std::memory_order_acquire) > 0;
}

std::vector<AbandonedSession> take_abandoned(const std::string& server) {
    Registry& r = registry();
    std::lock_guard<std::mutex> guard(r.mutex);
    std::vector<AbandonedSession> taken;
    auto rest =
        std::stable_partition(r.sessions.begin(), r.sessions.end(),
                              [&](const AbandonedSession& s) { return s.server != server; });
    std::move(rest, r.sessions.end(), std::back_inserter(taken));
    r.sessions.erase(rest, r.sessions.end());
    r.count.store(r.sessions.size(), std::memory_order_release);
    return taken;
}

}  // namespace sqlock::detail::mariadb
