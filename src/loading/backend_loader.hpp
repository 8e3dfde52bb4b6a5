// Loading a backend on first use.
#pragma once

#include <string>
#include <vector>

#include "loading/backend_catalog.hpp"

namespace sqlock::detail {

/// The backend `entry`: compiled in (a static build), or its module
/// `sqlock-<name>.so` opened from the first directory of the search path that
/// has it. The search path is $SQLOCK_BACKEND_PATH (directories separated by
/// ':') when set, else the directory `sqlock/` beside libsqlock itself (in the
/// build tree as once installed). Loaded once per process, never unloaded;
/// thread-safe. Throws errc::configuration when the backend is missing or
/// does not load, naming what provides it.
const BackendModule& load_backend(const CatalogEntry& entry);

/// The directories load_backend() searches, in order.
std::vector<std::string> backend_search_path();

}  // namespace sqlock::detail
