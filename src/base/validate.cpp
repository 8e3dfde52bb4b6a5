#include "base/validate.hpp"

#include "sqlock/duration.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {
namespace {

constexpr auto max_lease = std::chrono::hours(24 * 366);

bool is_identifier(const std::string& s) {
    if (s.empty() || s.size() > 63) return false;
    auto alpha = [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    };
    if (!alpha(s[0])) return false;
    for (char c : s)
        if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
    return true;
}

}  // namespace

void validate_lock_name(const std::string& name) {
    if (name.empty()) throw error(errc::invalid_argument, "lock name is empty");
    if (name.size() > max_name_bytes)
        throw error(errc::invalid_argument, "lock name is " + std::to_string(name.size()) +
                                                " bytes long; the limit is 128 bytes: '" +
                                                printable(name) + "'");
    if (name.find('\0') != std::string::npos)
        throw error(errc::invalid_argument,
                    "lock name contains a NUL byte: '" + printable(name) + "'");
    if (!is_valid_utf8(name))
        throw error(errc::invalid_argument,
                    "lock name is not valid UTF-8: '" + printable(name) + "'");
}

void validate_lease(duration lease, const char* what) {
    if (lease <= duration::zero())
        throw error(errc::invalid_argument,
                    std::string(what) + " must be positive, got " + format_duration(lease));
    if (lease > max_lease)
        throw error(errc::invalid_argument, std::string(what) + " of " + format_duration(lease) +
                                                " is longer than the limit of 366 days");
}

void validate_non_negative(duration d, const char* what) {
    if (d < duration::zero())
        throw error(errc::invalid_argument, std::string(what) + " must not be negative");
    if (d > max_lease)
        throw error(errc::invalid_argument, std::string(what) + " of " + format_duration(d) +
                                                " is longer than the limit of 366 days");
}

void validate_table_name(const std::string& table, bool allow_schema) {
    std::size_t dot = table.find('.');
    bool ok;
    if (dot == std::string::npos) {
        ok = is_identifier(table);
    } else {
        ok = allow_schema && is_identifier(table.substr(0, dot)) &&
             is_identifier(table.substr(dot + 1));
    }
    if (!ok)
        throw error(errc::invalid_argument,
                    "invalid table name '" + printable(table) +
                        "': use letters, digits and '_', not starting with a digit, at most 63 "
                        "characters" +
                        (allow_schema ? ", optionally schema-qualified (ops.locks)" : ""));
}

std::string quote_table_name(const std::string& table) {
    std::size_t dot = table.find('.');
    if (dot == std::string::npos) return "\"" + table + "\"";
    return "\"" + table.substr(0, dot) + "\".\"" + table.substr(dot + 1) + "\"";
}

std::string table_basename(const std::string& table) {
    std::size_t dot = table.find('.');
    return dot == std::string::npos ? table : table.substr(dot + 1);
}

void validate_options(const LockOptions& o) {
    validate_lease(o.expires, "lease (expires)");
    validate_non_negative(o.wait, "wait");
    validate_non_negative(o.min_hold, "min_hold");
    if (o.progress_every <= duration::zero())
        throw error(errc::invalid_argument,
                    "progress_every must be positive, got " + format_duration(o.progress_every));
    // The minimum hold stretches the row's expiry at release; a hold longer
    // than the lease would keep the lock past anything the caller asked the
    // lease to be, which is never what someone setting both meant.
    if (o.min_hold > o.expires)
        throw error(errc::invalid_argument,
                    "min_hold of " + format_duration(o.min_hold) + " is longer than the lease (" +
                        "expires) of " + format_duration(o.expires) +
                        ": make the lease at least as long as the minimum hold");
    if (o.queue_lease != duration::zero() &&
        (o.queue_lease < min_queue_lease || o.queue_lease > std::chrono::hours(1)))
        throw error(errc::invalid_argument, "queue_lease must be 0 (the lock's lease, at most " +
                                                format_duration(default_queue_lease_cap) +
                                                ") or between " + format_duration(min_queue_lease) +
                                                " and 1h, got " + format_duration(o.queue_lease));
    validate_non_negative(o.warn_before, "warn_before");
    if (o.warn_before >= o.expires)
        throw error(errc::invalid_argument, "warn_before (" + format_duration(o.warn_before) +
                                                ") must be shorter than the lease (" +
                                                format_duration(o.expires) + ")");
}

}  // namespace sqlock::detail
