#include "host_resolution.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <system_error>
#include <thread>

namespace sqlock::detail {
namespace {

// One lookup's answer, shared by the thread that makes it and the caller
// that may stop waiting for it: whoever lets go last frees it.
struct Lookup {
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    Resolution result;
};

Resolution lookup(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_ADDRCONFIG;
    addrinfo* list = nullptr;
    Resolution out;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
    if (rc != 0) {
        out.problem = "could not resolve host name '" + host + "': " + ::gai_strerror(rc);
        return out;
    }
    for (const addrinfo* a = list; a; a = a->ai_next) {
        char text[NI_MAXHOST];
        if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0,
                          NI_NUMERICHOST) != 0)
            continue;
        bool seen = false;
        for (const std::string& s : out.addresses) seen = seen || s == text;
        if (!seen) out.addresses.emplace_back(text);
    }
    ::freeaddrinfo(list);
    if (out.addresses.empty()) out.problem = "host name '" + host + "' has no usable address";
    return out;
}

}  // namespace

bool is_numeric_address(const std::string& host) {
    unsigned char buf[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::vector<Resolution> resolve_hosts(const std::vector<std::string>& hosts, duration timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<Resolution> out(hosts.size());
    std::vector<std::shared_ptr<Lookup>> pending(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (is_numeric_address(hosts[i])) {
            out[i].addresses.push_back(hosts[i]);
            continue;
        }
        auto l = std::make_shared<Lookup>();
        try {
            std::thread([l, host = hosts[i]] {
                Resolution r = lookup(host);
                std::lock_guard<std::mutex> guard(l->mutex);
                l->result = std::move(r);
                l->done = true;
                l->done_cv.notify_all();
            }).detach();
            pending[i] = std::move(l);
        } catch (const std::system_error&) {
            // No thread to be had (a process at its limit): look up here,
            // unbounded, as the drivers would have.
            out[i] = lookup(hosts[i]);
        }
    }
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (!pending[i]) continue;
        Lookup& l = *pending[i];
        std::unique_lock<std::mutex> guard(l.mutex);
        if (l.done_cv.wait_until(guard, deadline, [&] { return l.done; })) {
            out[i] = std::move(l.result);
        } else {
            out[i].problem = "no answer from the resolver for host name '" + hosts[i] +
                             "' within " + format_duration(timeout);
        }
    }
    return out;
}

}  // namespace sqlock::detail
