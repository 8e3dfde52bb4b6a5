#include "postgres_conninfo.hpp"

#include <libpq-fe.h>

#include <memory>

#include "postgres_redactor.hpp"
#include "sqlock/error.hpp"

namespace sqlock::detail::postgres {

ConnInfo parse_conninfo(const DatabaseUrl& url) {
    char* raw_error = nullptr;
    std::unique_ptr<PQconninfoOption, void (*)(PQconninfoOption*)> options(
        PQconninfoParse(url.original.c_str(), &raw_error), PQconninfoFree);
    if (!options) {
        std::string message = raw_error ? raw_error : "out of memory";
        if (raw_error) PQfreemem(raw_error);
        // libpq quotes the offending part, which may be the password itself.
        Redactor redact(url, {});
        throw error(errc::invalid_argument,
                    redact("malformed PostgreSQL URL '" + url.redacted + "': " + message));
    }
    ConnInfo info;
    for (const PQconninfoOption* o = options.get(); o->keyword; ++o)
        if (o->val && std::string(o->keyword) == "password") info.password = o->val;
    return info;
}

}  // namespace sqlock::detail::postgres
