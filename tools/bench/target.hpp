// The databases a run measures: an embedded backend's files in the run's
// scratch directory, a server backend's server named by its URL option (the
// first of its options, bench_backend.hpp).
#pragma once

#include <string>

#include "bench_backend.hpp"

namespace sqlock_bench {

/// BackendTarget
///
/// One backend of this run and whether it can be measured. For a server
/// `location` is the URL with its password: print `shown` instead.
struct BackendTarget {
    const BenchBackend* backend = nullptr;
    std::string name;         // the backend's name in the results (BenchBackend::name)
    std::string location;     // embedded: the scratch directory; servers: the URL (secret)
    std::string shown;        // what may be printed: the directory, or the redacted URL
    std::string skip_reason;  // non-empty: not measured in this run, and why

    bool usable() const { return skip_reason.empty(); }
    /// Its hooks; only for a usable target (one that was built).
    const BenchHooks& hooks() const { return *backend->hooks; }
};

/// The URL with any password (in the user info or a password= parameter)
/// replaced by "***".
std::string redact_url(const std::string& url);

/// Replaces every occurrence of the URL's password in `text` by "***": for
/// error messages of the database client libraries.
std::string scrub_password(const std::string& text, const std::string& url);

}  // namespace sqlock_bench
