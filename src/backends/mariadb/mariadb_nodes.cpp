#include "mariadb_nodes.hpp"

#include <map>
#include <mutex>
#include <utility>

namespace sqlock::detail::mariadb {
namespace {

struct Preferred {
    std::mutex mutex;
    std::map<std::string, std::size_t> first;                               // by redacted URL
    std::map<std::pair<std::string, std::size_t>, std::uint64_t> failures;  // by URL and host
};

Preferred& preferred() {
    static Preferred* p = new Preferred;  // never destroyed: used from static destructors too
    return *p;
}

}  // namespace

std::vector<std::size_t> nodes_in_order(const std::string& url, std::size_t count) {
    std::size_t first = 0;
    {
        Preferred& p = preferred();
        std::lock_guard<std::mutex> guard(p.mutex);
        auto it = p.first.find(url);
        if (it != p.first.end() && it->second < count) first = it->second;
    }
    std::vector<std::size_t> order;
    for (std::size_t k = 0; k < count; ++k) order.push_back((first + k) % count);
    return order;
}

void node_reached(const std::string& url, std::size_t node) {
    Preferred& p = preferred();
    std::lock_guard<std::mutex> guard(p.mutex);
    p.first[url] = node;
}

void node_failed(const std::string& url, std::size_t node, std::size_t count) {
    if (count < 2) return;
    Preferred& p = preferred();
    std::lock_guard<std::mutex> guard(p.mutex);
    ++p.failures[{url, node}];
    auto it = p.first.find(url);
    const std::size_t first = it == p.first.end() ? 0 : it->second;
    if (first == node) p.first[url] = (node + 1) % count;
}

std::uint64_t node_failures(const std::string& url, std::size_t node) {
    Preferred& p = preferred();
    std::lock_guard<std::mutex> guard(p.mutex);
    auto it = p.failures.find({url, node});
    return it == p.failures.end() ? 0 : it->second;
}

}  // namespace sqlock::detail::mariadb
