// A check that stays on in release builds: a fuzzer's findings are its asserts.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#define FUZZ_CHECK(cond, what)                                                               \
    do {                                                                                     \
        if (!(cond)) {                                                                       \
            std::fprintf(stderr, "FUZZ_CHECK failed at %s:%d: %s: %s\n", __FILE__, __LINE__, \
                         #cond, std::string(what).c_str());                                  \
            std::abort();                                                                    \
        }                                                                                    \
    } while (0)

inline bool one_line(const std::string& s) {
    return s.find('\n') == std::string::npos && s.find('\r') == std::string::npos;
}
