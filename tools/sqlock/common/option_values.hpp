// Turning option text into checked values, with messages that name the
// option and say what is accepted. All checks happen before any database
// is touched, so a typo can never write a row.
#pragma once

#include <cxxopts.hpp>
#include <string>
#include <vector>

#include "sqlock/duration.hpp"

namespace sqlock_cli {

/// What a duration option may be.
enum class duration_kind {
    positive,      ///< > 0 (a lease)
    non_negative,  ///< >= 0 (a wait, a minimum hold)
};

/// `text` as a duration for `--option`. Accepts what sqlock::parse_duration
/// accepts (90, 90s, 15m, 2h, 1d, 1h30m, 250ms), at most 366 days. Throws
/// cli_error (64) showing the accepted forms.
sqlock::duration parse_duration_option(const std::string& option, const std::string& text,
                                       duration_kind kind);

/// The value of duration option `name` (its default if not given).
sqlock::duration duration_option(const cxxopts::ParseResult& result, const std::string& name,
                                 duration_kind kind);

/// Adds the wait options, named as flock(1) users expect: `-w`, `--wait`,
/// `--timeout` DUR (or `forever`), and `-n`, `--nonblock` (the same as
/// `--wait 0`). `zero` says what a zero wait does ("skips at once").
void add_wait_options(cxxopts::OptionAdder& add, const std::string& zero);

/// The wait the options ask for.
struct WaitOption {
    sqlock::duration wait{};  ///< 0: one attempt
    bool forever = false;     ///< `--wait forever`: no deadline
    /// `--queue-lease`: LockOptions::queue_lease (zero: the lock's lease,
    /// at most 15 s)
    sqlock::duration queue_lease = sqlock::duration::zero();
};

/// Reads what add_wait_options() added. Throws cli_error (64) for a bad
/// duration, or for -n together with a non-zero wait.
WaitOption wait_option(const cxxopts::ParseResult& result);

/// The value of integer option `name`, which must lie in [min, max]; `fallback`
/// when not given. Throws cli_error (64) otherwise.
long integer_option(const cxxopts::ParseResult& result, const std::string& name, long min, long max,
                    long fallback);

/// The owner token for `release` and `renew`: --token, else $SQLOCK_TOKEN
/// (what `eval "$(sqlock acquire ...)"` sets), else "".
std::string token_option(const cxxopts::ParseResult& result);

/// The lock names of a command that takes several as one set (`run A B C`,
/// `acquire A B`): each at most once, at most Locker::max_set_size of them.
/// Throws cli_error (64) naming a repeated name, ending in `usage`.
void check_set_names(const std::vector<std::string>& names, const std::string& usage);

/// The value of string option `name`, or `fallback` when not given.
std::string string_option(const cxxopts::ParseResult& result, const std::string& name,
                          const std::string& fallback = {});

}  // namespace sqlock_cli
