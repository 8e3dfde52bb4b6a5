// Which database backends this sqlock can use.
#pragma once

#include <string>
#include <vector>

namespace sqlock {

/// The backends this program can use, by name ("sqlite", "postgres", ...):
/// compiled into a static libsqlock, or modules that load (a shared build
/// loads each backend's module when a URL first names it; this function
/// loads them all to find out). Never throws for a backend that is missing.
/// Thread-safe.
std::vector<std::string> available_backends();

}  // namespace sqlock
