#include "base/host_resolution.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <pthread.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "base/current_pid.hpp"
#include "text.hpp"

namespace sqlock::detail {
namespace {

using clock = std::chrono::steady_clock;

// One lookup's answer, shared by the thread that makes it and every caller
// waiting for it: whoever lets go last frees it.
struct Lookup {
    const clock::time_point started = clock::now();
    std::mutex mutex;
    std::condition_variable done_cv;
    bool done = false;
    Resolution result;
};

std::string shown(const std::string& host) {
    return "'" + text::printable(host, 255) + "'";
}

Resolution lookup(const std::string& host) {
    // libpq's and the connector's hints: no AI_ADDRCONFIG, which would drop
    // ::1 for "localhost" on a host without a global IPv6 address.
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* list = nullptr;
    Resolution out;
    out.answered = true;
    const int rc = ::getaddrinfo(host.c_str(), nullptr, &hints, &list);
    if (rc != 0) {
        out.problem = "could not resolve host name " + shown(host) + ": " + ::gai_strerror(rc);
        return out;
    }
    for (const addrinfo* a = list; a; a = a->ai_next) {
        char text[NI_MAXHOST];
        if (::getnameinfo(a->ai_addr, a->ai_addrlen, text, sizeof text, nullptr, 0,
                          NI_NUMERICHOST) != 0)
            continue;
        if (std::find(out.addresses.begin(), out.addresses.end(), text) == out.addresses.end())
            out.addresses.emplace_back(text);
    }
    ::freeaddrinfo(list);
    if (out.addresses.empty()) out.problem = "host name " + shown(host) + " has no usable address";
    return out;
}

// The lookup of `host` under way for less than `timeout`, or a new one. An
// older one is not joined: it may be stuck in the resolver's retries after
// the resolver came back, so an outage starts one thread per name per
// `timeout` at most. Lookups in flight, by name, for this process: a forked
// child starts with none (the threads of its parent's are not there), and
// leaks its parent's map rather than touch it.
std::shared_ptr<Lookup> start_lookup(const std::string& host, duration timeout) {
    static std::mutex registry_mutex;
    static std::map<std::string, std::weak_ptr<Lookup>>* in_flight = nullptr;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> guard(registry_mutex);
    if (owner != current_pid()) {
        in_flight = new std::map<std::string, std::weak_ptr<Lookup>>;
        owner = current_pid();
    }
    std::weak_ptr<Lookup>& slot = (*in_flight)[host];
    if (auto running = slot.lock()) {
        std::lock_guard<std::mutex> l(running->mutex);
        // A finished one is not reused: addresses change (a failover by DNS).
        if (!running->done && clock::now() - running->started < timeout) return running;
    }
    auto fresh = std::make_shared<Lookup>();
    try {
        std::thread thread([fresh, host] {
            Resolution r;
            try {
                r = lookup(host);
            } catch (...) {  // out of memory: an answer all the same
                r.answered = true;
                r.problem = "could not look up host name " + shown(host);
            }
            std::lock_guard<std::mutex> l(fresh->mutex);
            fresh->result = std::move(r);
            fresh->done = true;
            fresh->done_cv.notify_all();
        });
        // Named, so that a test or an operator can tell it from the
        // application's threads.
        pthread_setname_np(thread.native_handle(), "sqlock-resolve");
        thread.detach();
    } catch (const std::exception&) {
        // No thread to be had: fail now rather than look up without a bound.
        fresh->result.answered = true;
        fresh->result.problem = "could not start a thread to look up host name " + shown(host);
        fresh->done = true;
        return fresh;
    }
    slot = fresh;
    return fresh;
}

}  // namespace

bool is_numeric_address(const std::string& host) {
    unsigned char buf[sizeof(in6_addr)];
    return ::inet_pton(AF_INET, host.c_str(), buf) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), buf) == 1;
}

std::vector<Resolution> resolve_in_order(const std::vector<std::string>& hosts, duration timeout,
                                         bool wait_for_all) {
    const auto deadline = clock::now() + timeout;
    std::vector<Resolution> out(hosts.size());
    std::vector<std::shared_ptr<Lookup>> pending(hosts.size());
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (hosts[i].empty() || is_numeric_address(hosts[i])) {
            out[i].answered = true;
            if (!hosts[i].empty()) out[i].addresses.push_back(hosts[i]);
        } else {
            pending[i] = start_lookup(hosts[i], timeout);
        }
    }
    // Whether the driver has somewhere to connect before this host: then
    // there is no more waiting (unless wait_for_all).
    bool found = false;
    for (std::size_t i = 0; i < hosts.size(); ++i) {
        if (pending[i]) {
            Lookup& l = *pending[i];
            std::unique_lock<std::mutex> guard(l.mutex);
            const bool wait = wait_for_all || !found;
            const bool done =
                wait ? l.done_cv.wait_until(guard, deadline, [&] { return l.done; }) : l.done;
            if (done) {
                out[i] = l.result;
            } else if (wait) {
                out[i].answered = true;
                out[i].problem = "no answer from the resolver for host name " + shown(hosts[i]) +
                                 " within " + format_duration(timeout);
            }
        }
        found = found || hosts[i].empty() || !out[i].addresses.empty();
    }
    return out;
}

LookupReport report_lookups(const std::vector<std::string>& names, duration timeout,
                            bool wait_for_all) {
    const auto start = clock::now();
    const std::vector<Resolution> found = resolve_in_order(names, timeout, wait_for_all);
    const auto took = std::chrono::duration_cast<duration>(clock::now() - start);
    LookupReport out;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (names[i].empty() || is_numeric_address(names[i])) continue;  // nothing looked up
        std::string what;
        for (const std::string& a : found[i].addresses) what += (what.empty() ? "" : ", ") + a;
        if (!found[i].answered) what = "not waited for (a host before it can be used)";
        if (!found[i].problem.empty()) {
            what = "no address";
            out.problems.push_back(found[i].problem);
        }
        out.fact += (out.fact.empty() ? "" : "; ") + text::printable(names[i], 255) + ": " + what;
    }
    out.fact += " (in " + (took < duration(1) ? "under 1ms" : format_duration(took)) + ")";
    if (out.problems.empty() && took * 2 > timeout)
        out.problems.push_back("looking host names up took " + format_duration(took) +
                               ", over half of the db timeout (" + format_duration(timeout) +
                               "): every new connection waits for the resolver; check "
                               "/etc/resolv.conf and the nameservers it names");
    return out;
}

}  // namespace sqlock::detail
