#include "common/option_values.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "common/exit_codes.hpp"
#include "common/output.hpp"
#include "sqlock/error.hpp"
#include "sqlock/locker.hpp"

namespace sqlock_cli {

sqlock::duration parse_duration_option(const std::string& option, const std::string& text,
                                       duration_kind kind) {
    sqlock::duration d;
    try {
        d = sqlock::parse_duration(text);
    } catch (const sqlock::error& e) {
        // The library's message already lists the accepted forms.
        throw usage_error("--" + option + ": " + e.what());
    }
    if (kind == duration_kind::positive && d <= sqlock::duration::zero())
        throw usage_error("--" + option + " must be longer than zero, got " + in_quotes(text));
    if (d > std::chrono::hours(24 * 366))
        throw usage_error("--" + option + " of " + in_quotes(text) +
                          " is longer than the limit of 366 days");
    return d;
}

sqlock::duration duration_option(const cxxopts::ParseResult& result, const std::string& name,
                                 duration_kind kind) {
    return parse_duration_option(name, result[name].as<std::string>(), kind);
}

void add_wait_options(cxxopts::OptionAdder& add, const std::string& zero) {
    // cxxopts shows an option by the last of its long names: --wait, the
    // one the documentation and the examples use.
    add("w,timeout,wait",
        "Wait up to DUR for a held lock, or `forever`, also through a database that is "
        "unavailable for now (stopped, failing over, read-only); 0 " +
            zero + " (flock's -w; --timeout is the same)",
        cxxopts::value<std::string>()->default_value("0"), "DUR");
    add("n,nonblock", "Do not wait: the same as --wait 0 (flock's -n)");
    add("queue-lease",
        "While waiting, hold a place in line (first come, first served) that lapses DUR "
        "after its last renewal if this process dies or is cut off (100ms to 1h; default: "
        "the lock's --expires, at most 15s)",
        cxxopts::value<std::string>(), "DUR");
}

WaitOption wait_option(const cxxopts::ParseResult& result) {
    WaitOption w;
    const std::string text = result["wait"].as<std::string>();
    if (text == "forever") {
        w.forever = true;
    } else {
        w.wait = parse_duration_option("wait", text, duration_kind::non_negative);
    }
    if (result.count("nonblock") && result.count("wait") && (w.forever || w.wait.count() > 0))
        throw usage_error("--nonblock and --wait " + in_quotes(text) + " contradict each other");
    if (result.count("queue-lease")) {
        const std::string lease = result["queue-lease"].as<std::string>();
        w.queue_lease = parse_duration_option("queue-lease", lease, duration_kind::positive);
        if (w.queue_lease < std::chrono::milliseconds(100) || w.queue_lease > std::chrono::hours(1))
            throw usage_error("--queue-lease must be from 100ms to 1h, got " + in_quotes(lease));
    }
    return w;
}

long integer_option(const cxxopts::ParseResult& result, const std::string& name, long min, long max,
                    long fallback) {
    if (!result.count(name)) return fallback;
    const std::string text = result[name].as<std::string>();
    errno = 0;
    char* end = nullptr;
    long value = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || errno == ERANGE || value < min || value > max)
        throw usage_error("--" + name + " must be a whole number from " + std::to_string(min) +
                          " to " + std::to_string(max) + ", got " + in_quotes(text));
    return value;
}

std::string token_option(const cxxopts::ParseResult& result) {
    std::string token = string_option(result, "token");
    // `--token "$SAVED"` with the variable unset must not fall back to
    // whatever $SQLOCK_TOKEN says.
    if (result.count("token") && token.empty())
        throw usage_error("--token is empty: give the owner token `sqlock acquire` printed");
    if (token.empty()) {
        const char* env = std::getenv("SQLOCK_TOKEN");
        if (env) token = env;
    }
    return token;
}

std::string string_option(const cxxopts::ParseResult& result, const std::string& name,
                          const std::string& fallback) {
    return result.count(name) ? result[name].as<std::string>() : fallback;
}

void check_set_names(const std::vector<std::string>& names, const std::string& usage) {
    for (std::size_t i = 1; i < names.size(); ++i)
        if (std::find(names.begin(), names.begin() + static_cast<long>(i), names[i]) !=
            names.begin() + static_cast<long>(i))
            throw usage_error("lock name " + in_quotes(names[i]) + " is given twice; " + usage);
    if (names.size() > sqlock::Locker::max_set_size)
        throw usage_error("at most " + std::to_string(sqlock::Locker::max_set_size) +
                          " lock names are taken at once, got " + std::to_string(names.size()));
}

}  // namespace sqlock_cli
