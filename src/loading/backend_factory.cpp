#include "loading/backend_factory.hpp"

#include "loading/backend_catalog.hpp"
#include "loading/backend_loader.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail {

std::unique_ptr<Backend> make_backend(const DatabaseUrl& url, const std::string& table,
                                      duration timeout) {
    for (const CatalogEntry& entry : backend_catalog())
        if (entry.name == url.backend) return load_backend(entry).make(url, table, timeout);
    // parse_database_url() only returns URLs of catalogued backends.
    throw error(errc::configuration, "no backend serves '" + url.redacted + "'");
}

}  // namespace sqlock::detail
