// Shared by the programs of tests/bench/tricks.sh: interleaved rounds of
// variants, each variant's median per operation, and the saving of one
// variant over another.  Not part of sbx (not in meson).
#pragma once

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

namespace tricks {

inline double now_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) * 1e6 + static_cast<double>(ts.tv_nsec) / 1e3;
}

inline double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Variant {
    std::string name;
    // Does the work `batch` times; returns the time per operation in us
    // (the variant times only what it compares).
    std::function<double(int batch)> run;
    std::vector<double> samples{};
};

// Rounds of every variant in turn, the order rotated each round, so that
// drift on a shared machine falls on all of them alike.  Returns the medians.
inline std::vector<double> interleave(std::vector<Variant>& variants, int rounds, int batch) {
    for (auto& v : variants) v.run(std::max(1, batch / 10));  // warm-up, not counted
    for (int r = 0; r < rounds; ++r)
        for (std::size_t i = 0; i < variants.size(); ++i) {
            Variant& v = variants[(i + static_cast<std::size_t>(r)) % variants.size()];
            v.samples.push_back(v.run(batch));
        }
    std::vector<double> medians;
    for (auto& v : variants) medians.push_back(median(v.samples));
    return medians;
}

// unit: "us" as measured, or "ns" (the figures times 1000).
inline void print_medians(const std::vector<Variant>& variants, const std::vector<double>& medians,
                          const char* unit = "us") {
    const double scale = unit[0] == 'n' ? 1000 : 1;
    for (std::size_t i = 0; i < variants.size(); ++i)
        std::printf("    %-36s %10.2f %s\n", variants[i].name.c_str(), medians[i] * scale, unit);
}

// "without" is the slower way the trick avoids, "with" the trick.
inline void print_saving(const char* what, double without, double with, const char* unit = "us",
                         const char* per = "launch") {
    const double scale = unit[0] == 'n' ? 1000 : 1;
    std::printf("    saving, %s: %.2f %s per %s (%.2fx)\n", what, (without - with) * scale, unit, per,
                with > 0 ? without / with : 0.0);
}

}  // namespace tricks
