// What becomes of a release that fails where nothing can throw: in the
// destructor (or move assignment) of a Lock, a LockSet or a Leadership.
#pragma once

#include <functional>

#include "sqlock/error.hpp"

namespace sqlock {

/// Receives failures of releases done by Lock, LockSet and Leadership
/// destructors.
using release_error_handler = std::function<void(const error&)>;

/// Replaces the process-wide handler for failed releases in destructors.
/// The default writes one line to stderr. Returns the previous handler.
/// Passing an empty function restores the default. Thread-safe.
///
///     sqlock::set_release_error_handler([](const sqlock::error& e) {
///         log_warning("sqlock release failed: ", e.what());
///     });
release_error_handler set_release_error_handler(release_error_handler handler);

}  // namespace sqlock
