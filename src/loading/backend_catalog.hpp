// The backends this sqlock knows of: names, URL schemes and what provides
// each. Generated from the one list, SQLOCK_BACKENDS (cmake/backends.cmake),
// so the core knows schemes only through it.
#pragma once

#include <string>
#include <vector>

#include "loading/backend_module.hpp"

namespace sqlock::detail {

struct CatalogEntry {
    std::string name;                  // folder name: "postgres"
    std::string title;                 // for messages: "PostgreSQL"
    std::vector<std::string> schemes;  // "postgresql", "postgres"
    std::string provided_by;           // what a user installs or switches on
    /// The compiled-in entry point (a static build), else null: the loader
    /// opens the backend's module.
    const BackendModule* (*builtin)();
};

/// Every backend in SQLOCK_BACKENDS, built or not, in the list's order.
const std::vector<CatalogEntry>& backend_catalog();

/// The backend serving `scheme` (without ':'; schemes are case-sensitive), or null.
const CatalogEntry* find_backend_by_scheme(const std::string& scheme);

/// "sqlite:, postgresql: or mariadb:" — for messages about unknown schemes.
std::string known_schemes_text();

}  // namespace sqlock::detail
