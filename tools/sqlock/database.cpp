#include "database.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstdlib>

#include "output.hpp"
#include "sqlock/error.hpp"

namespace sqlock_cli {
namespace {

bool uses_embedded_default(const GlobalOptions& global) {
    const char* env = std::getenv("SQLOCK_DB");
    return global.db.empty() && (env == nullptr || *env == '\0');
}

// The file of a SQLite URL ("sqlite:///abs.db", "sqlite:rel.db", with an
// optional "?query"). Works on the redacted URL: redaction never touches the
// path of a SQLite URL.
std::string sqlite_path(const std::string& url) {
    std::string rest = url.substr(url.find(':') + 1);
    if (rest.compare(0, 2, "//") == 0) rest = rest.substr(2);
    return rest.substr(0, rest.find('?'));
}

}  // namespace

sqlock::Locker open_locker(const GlobalOptions& global, bool creating) {
    sqlock::LockerOptions options;
    options.table = global.table;
    if (creating) options.auto_init = sqlock::LockerOptions::auto_init_mode::never;
    sqlock::Locker locker(global.db, options);
    if (!creating && locker.backend_name() == "sqlite" && !uses_embedded_default(global)) {
        std::string path = sqlite_path(locker.url());
        struct stat st {};
        if (::stat(path.c_str(), &st) != 0 && errno == ENOENT)
            throw sqlock::error(sqlock::errc::configuration,
                                "no lock database at " + in_quotes(path) +
                                    " (the SQLite file does not exist); create it with `sqlock "
                                    "init`" +
                                    at_database(locker.url()));
    }
    return locker;
}

}  // namespace sqlock_cli
