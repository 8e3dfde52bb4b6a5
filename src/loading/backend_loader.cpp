#include "loading/backend_loader.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "sqlock/backends.hpp"
#include "sqlock/error.hpp"
#include "text.hpp"

namespace sqlock::detail {
namespace {

// The directory of the file this function was loaded from: libsqlock.so.
std::string library_directory() {
    Dl_info info{};
    if (::dladdr(reinterpret_cast<void*>(&library_directory), &info) == 0 || !info.dli_fname)
        return ".";
    std::string path = info.dli_fname;
    std::size_t slash = path.rfind('/');
    return slash == std::string::npos ? "." : path.substr(0, slash);
}

std::string joined(const std::vector<std::string>& dirs) {
    std::string text;
    for (const std::string& d : dirs) text += (text.empty() ? "" : ":") + d;
    return text;
}

const BackendModule& open_module(const CatalogEntry& entry) {
    const std::vector<std::string> dirs = backend_search_path();
    const std::string file = "sqlock-" + entry.name + ".so";
    for (const std::string& dir : dirs) {
        const std::string path = dir + "/" + file;
        if (::access(path.c_str(), F_OK) != 0) continue;
        // RTLD_LOCAL: a backend's client library (libpq, libmariadb) stays
        // out of the global namespace, where it could clash with another's.
        void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (!handle) {
            const char* why = ::dlerror();
            throw error(errc::configuration, "cannot load the " + entry.title + " backend from " +
                                                 text::printable(path) + ": " +
                                                 text::printable(why ? why : "unknown error"));
        }
        const std::string symbol = "sqlock_backend_" + entry.name + "_v2";
        auto entry_point =
            reinterpret_cast<const BackendModule* (*)()>(::dlsym(handle, symbol.c_str()));
        if (!entry_point)
            throw error(errc::configuration,
                        text::printable(path) + " is not a sqlock backend (no " + symbol + ")");
        const BackendModule* module = entry_point();
        if (std::strcmp(module->version, SQLOCK_VERSION) != 0)
            throw error(errc::configuration, text::printable(path) + " belongs to sqlock " +
                                                 text::printable(module->version) +
                                                 ", not to this sqlock " SQLOCK_VERSION);
        return *module;  // the handle stays open for the life of the process
    }
    throw error(errc::configuration, "the " + entry.title + " backend is not installed: no " +
                                         file + " in " + text::printable(joined(dirs)) +
                                         " (it comes with " + entry.provided_by +
                                         "; SQLOCK_BACKEND_PATH sets where to look)");
}

}  // namespace

std::vector<std::string> backend_search_path() {
    std::vector<std::string> dirs;
    const char* env = std::getenv("SQLOCK_BACKEND_PATH");
    if (env && *env) {
        std::string list = env;
        std::size_t start = 0;
        while (start <= list.size()) {
            std::size_t end = list.find(':', start);
            if (end == std::string::npos) end = list.size();
            if (end > start) dirs.push_back(list.substr(start, end - start));
            start = end + 1;
        }
    }
    if (dirs.empty()) dirs.push_back(library_directory() + "/sqlock");
    return dirs;
}

const BackendModule& load_backend(const CatalogEntry& entry) {
    if (entry.builtin) return *entry.builtin();
    if (!SQLOCK_BACKEND_MODULES)
        throw error(errc::configuration, "this sqlock was built without the " + entry.title +
                                             " backend: it needs " + entry.provided_by);
    // Loaded modules are remembered, failures are not: a module installed
    // while the program runs is found by the next attempt.
    static std::mutex mutex;
    static std::map<std::string, const BackendModule*> loaded;
    std::lock_guard<std::mutex> guard(mutex);
    auto it = loaded.find(entry.name);
    if (it != loaded.end()) return *it->second;
    const BackendModule& module = open_module(entry);
    loaded.emplace(entry.name, &module);
    return module;
}

}  // namespace sqlock::detail

namespace sqlock {

std::vector<std::string> available_backends() {
    std::vector<std::string> names;
    for (const detail::CatalogEntry& entry : detail::backend_catalog()) {
        try {
            detail::load_backend(entry);
            names.push_back(entry.name);
        } catch (const error&) {
        }
    }
    return names;
}

}  // namespace sqlock
