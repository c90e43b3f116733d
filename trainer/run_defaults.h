// The defaults a recording run takes from accordion-train and the Python
// hook alike, written once: what a trace samples and how compressors draw.
#ifndef ACCORDION_TRAINER_RUN_DEFAULTS_H_
#define ACCORDION_TRAINER_RUN_DEFAULTS_H_

#include <cstdint>

namespace accordion {

// Seed of the weights (accordion-train), the data order and PowerSGD's
// random Q: the same draws from both writers.
inline constexpr int64_t kDefaultRunSeed = 1;

// Steps per epoch and rank whose timings, gradient-ready offsets and
// collectives go into the per-iteration tables.
inline constexpr int kDefaultSampleIterations = 4;

}  // namespace accordion

#endif  // ACCORDION_TRAINER_RUN_DEFAULTS_H_
