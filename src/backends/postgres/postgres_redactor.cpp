#include "postgres_redactor.hpp"

#include <cstdlib>

namespace sqlock::detail::postgres {
namespace {

// libpq also takes the password from the environment; it does not echo it,
// but hiding it costs nothing.
std::vector<std::string> with_environment_password(std::vector<std::string> secrets) {
    if (const char* env = std::getenv("PGPASSWORD")) secrets.push_back(env);
    return secrets;
}

}  // namespace

Redactor::Redactor(const DatabaseUrl& url, std::vector<std::string> extra_secrets)
    : text::MessageRedactor(url.original, with_environment_password(std::move(extra_secrets))) {}

}  // namespace sqlock::detail::postgres
