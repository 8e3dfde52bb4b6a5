// What a backend hands the core: its name and its factory.
//
// Each backend defines its entry point once with SQLOCK_BACKEND(name, make):
// a C function `sqlock_backend_<name>_v2` that the loader finds by name in
// the backend's module (a shared build) or that the generated catalog calls
// directly (a static build). The core never includes a backend's headers.
// The _vN is the interface's number: modules share C++ types with the core,
// so a change to Backend or Connection (backend.hpp) bumps it, and a module
// built against the old interface is refused by name instead of loaded (v2:
// release() and delete_exact() take the row's lockstring). The version string
// below refuses modules of another release.
#pragma once

#include <memory>
#include <string>

#include "contract/backend.hpp"
#include "loading/url.hpp"
#include "sqlock/config.hpp"

namespace sqlock::detail {

struct BackendModule {
    /// The sqlock version the module was built for: modules and libsqlock
    /// share C++ types, so only the same version may be loaded.
    const char* version;
    const char* name;
    /// The backend for `url` (its scheme is one of this backend's).
    /// Throws errc::invalid_argument for a URL or table name it cannot use.
    /// `timeout` bounds each round trip to a server (LockerOptions::db_timeout).
    std::unique_ptr<Backend> (*make)(const DatabaseUrl& url, const std::string& table,
                                     duration timeout);
};

}  // namespace sqlock::detail

/// Defines backend `name`'s entry point (once, in the backend's folder).
#define SQLOCK_BACKEND(name, make_function)                                                        \
    extern "C" __attribute__((visibility("default")))                                              \
    const ::sqlock::detail::BackendModule* sqlock_backend_##name##_v2() {                          \
        static const ::sqlock::detail::BackendModule module{SQLOCK_VERSION, #name, make_function}; \
        return &module;                                                                            \
    }
