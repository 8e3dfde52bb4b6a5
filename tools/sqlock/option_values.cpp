#include "option_values.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "exit_codes.hpp"
#include "output.hpp"
#include "sqlock/error.hpp"

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

std::string string_option(const cxxopts::ParseResult& result, const std::string& name,
                          const std::string& fallback) {
    return result.count(name) ? result[name].as<std::string>() : fallback;
}

}  // namespace sqlock_cli
