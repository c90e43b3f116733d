// Numbers, link speeds and lists of choices as people read and write them:
// in messages, help text and descriptions. One formatter and one Gb/s
// conversion for every tool, so the same value never prints two ways.
//
// Thread-safe: pure functions (the simulator calls them in the GUI's pools).
#ifndef ACCORDION_COMMON_NUMBER_FORMAT_H_
#define ACCORDION_COMMON_NUMBER_FORMAT_H_

#include <string>
#include <vector>

namespace accordion {

// `value` with at most `significant_digits` digits and no trailing zeros
// (iostream's default notation): FormatNumber(0.25) is "0.25",
// FormatNumber(1e-7) "1e-07".
std::string FormatNumber(double value, int significant_digits = 6);

// `value` through a printf conversion of one double ("%.2f", "%.4g"), for
// tables with fixed columns.
std::string FormatPrintf(const char* format, double value);

// A default value as help text shows it ("10", "0.5", "4194304"), so help
// reads defaults from the options objects instead of restating them. 15
// digits: a unit conversion (1.25e9 B/s * 8 / 1e9) lands a rounding error
// away from the number a user reads, and a 16th or 17th digit would show it.
inline std::string HelpNumber(double value) { return FormatNumber(value, 15); }

// "every epoch", "every 2 epochs": a check interval as people say it.
inline std::string EveryEpochs(int interval) {
  return interval == 1 ? "every epoch" : "every " + std::to_string(interval) + " epochs";
}

// "a, b or c": `words` joined by `separator`, the last two by `before_last`.
std::string JoinWords(const std::vector<std::string>& words, const std::string& separator,
                      const std::string& before_last);

// Choices as help text lists them, with the default marked, so help reads
// the default from the options object: HelpChoices({"LV08", "CM02"}, "LV08")
// is "LV08 (default) or CM02".
std::string HelpChoices(std::vector<std::string> choices, const std::string& default_choice);

// Users give link speeds in Gb/s (10^9 bits per second); platforms and
// models hold bytes per second.
constexpr double BytesPerSecondFromGbps(double gbps) { return gbps * 1e9 / 8; }
constexpr double GbpsFromBytesPerSecond(double bytes_per_s) { return bytes_per_s * 8 / 1e9; }

}  // namespace accordion

#endif  // ACCORDION_COMMON_NUMBER_FORMAT_H_
