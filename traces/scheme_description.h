// One description per compression scheme: its name in traces and on command
// lines, what its level means and which numbers are levels, its default
// levels, how it shrinks a tensor and the collectives each gradient bucket of
// a step issues.
//
// Every per-scheme rule of the toolkit is built from the one table in
// scheme_description.cc: records.h's names and level checks, the accounting
// and the step plan (analysis), the exchange (trainer), the command lines'
// --scheme choices and which flags belong to which schemes. Code elsewhere
// asks a description (has_levels(), level_kind, compressor, InSet,
// dense_baseline), never compares with a Scheme value (tests/build/
// enum_comparisons.py checks it). A new scheme is a new row there (and its compressor's code where
// it is one), not a case in parallel switches.
//
// Thread-safe: the descriptions are constants built once, on first use
// (a function-local static); every function here may be called from any thread.
#ifndef ACCORDION_TRACES_SCHEME_DESCRIPTION_H_
#define ACCORDION_TRACES_SCHEME_DESCRIPTION_H_

#include <optional>
#include <string>
#include <vector>

#include "traces/records.h"

namespace accordion {

// What a level is, and so which numbers are levels.
enum class LevelKind {
  kNone,         // the scheme has no levels: always 0
  kRank,         // a whole number in 1..max_level
  kFraction,     // a fraction of a tensor's entries, in (0, 1]
  kGlobalBatch,  // a global batch size, a whole number in 1..max_level: it
                 // changes the steps of an epoch, not a step's size, and one
                 // level holds for the whole model
};

// How a scheme shrinks the tensors it compresses.
enum class Compressor {
  kNone,     // every tensor travels dense
  kLowRank,  // PowerSGD: an n x m matrix as factors P (n x r) and Q (m x r)
  kSparse,   // TopK: the k largest entries as values and int32 indices
  kCast16,   // every tensor cast to 16 bits for the all-reduce (PyTorch's fp16/bf16_compress_hook)
};

// The number format a cast sends (Compressor::kCast16), as the all-reduce
// carries it.
enum class WireFormat {
  kFloat32,   // no cast
  kFloat16,   // IEEE half: 10-bit mantissa, 5-bit exponent
  kBFloat16,  // bfloat16: float32's exponent, 7-bit mantissa
};

// What one collective of a step carries. Its name is the collective's tag in
// traces ("dense", "powersgd-p", "powersgd-q", "topk"), part of the format.
enum class CollectiveKind { kDense, kPowerSgdP, kPowerSgdQ, kTopK, kCast16 };

struct CollectiveDescription {
  CollectiveKind kind;
  const char* tag;  // as written in traces
  CollectiveOp op;
  // Issued only once backward has ended, after the bucket's collective
  // before it in SchemeDescription::bucket_collectives completed (PowerSGD's
  // Q = G^T P needs the summed P).
  bool after_backward;
};

const CollectiveDescription& DescriptionOf(CollectiveKind kind);
const char* ToString(CollectiveKind kind);
std::optional<CollectiveKind> ParseCollectiveKind(const std::string& tag);

struct SchemeDescription {
  Scheme scheme;
  const char* name;  // in traces and on command lines: "powersgd"
  // For people (the explorer's menu): "PowerSGD". The GUI shows it through
  // QCoreApplication::translate("Scheme", title) (docs/ARCHITECTURE.md).
  const char* title;
  LevelKind level_kind;
  const char* level_meaning;  // in level errors: "PowerSGD rank"
  const char* level_label;    // a level's name in reports starts with it: "rank 2"
  double max_level;           // kRank, kGlobalBatch: the largest level
  // The paper's levels inside and outside critical regimes; for
  // kGlobalBatch, multiples of the run's batch size.
  double default_low;
  double default_high;
  Compressor compressor;
  // The collectives one bucket issues, in order. kDense carries the tensors
  // the compressor leaves alone (all of them for Compressor::kNone); the
  // others carry the compressed ones.
  std::vector<CollectiveKind> bucket_collectives;
  // The levels accordion-train's error profile measures at each check (and
  // the run's own); empty where the scheme has no compression error.
  std::vector<double> error_profile_levels;
  // AdaQS can halve its compression: a level twice as large compresses half
  // as much, up to the low level (a rank, a fraction).
  bool halvable;
  // The baseline every saving is measured against: all tensors dense, every
  // step at the run's batch. Exactly one scheme is.
  bool dense_baseline;
  // What Compressor::kCast16 casts to; kFloat32 for every other compressor.
  WireFormat wire = WireFormat::kFloat32;

  bool has_levels() const { return level_kind != LevelKind::kNone; }
};

// Every scheme, in the order command lines list them.
const std::vector<SchemeDescription>& AllSchemes();
// Throws std::logic_error for a value outside the enum.
const SchemeDescription& DescriptionOf(Scheme scheme);
// The scheme whose description is dense_baseline.
Scheme DenseBaselineScheme();

// The exponent bits of a wire format: its range (bfloat16 has float32's, so
// it neither overflows nor underflows where float32 does not).
int ExponentBits(WireFormat wire);
// Its unit roundoff: a value cast to it is within this much of itself,
// relative (2^-24, 2^-11, 2^-8).
double UnitRoundoff(WireFormat wire);

// The schemes in SchemeSet::kWholeGradient, the most exact first: the dense
// baseline, then the casts, the widest range first (bf16 before fp16: the
// same bytes, and no overflow). A tie in time goes to the first.
std::vector<Scheme> WholeGradientSchemes();

// Groups of schemes a rule is about. A flag that belongs to a group checks
// InSet and names SchemeNames of the same group, so its rule and its
// messages cannot disagree.
enum class SchemeSet {
  kAll,
  kWithLevels,
  kBatchLevels,  // LevelKind::kGlobalBatch: --micro-batch's, and image models only
  kSparse,       // Compressor::kSparse: --topk-dense-vectors' and --topk-error-feedback's
  // A compression error the error profile measures (error_profile_levels),
  // the error proxy reports and advise weighs: not a 16-bit cast's rounding.
  kCompressing,
  kHalvable,  // halvable: the schemes policy adaqs fits
  // No levels, and every entry of every gradient sent every step (no
  // compressor that drops any): the exchanges compression has to beat
  // (dense and the 16-bit casts), compare-policies' and advise's baselines.
  kWholeGradient,
};
bool InSet(const SchemeDescription& d, SchemeSet set);
// The names of the schemes in `set`, for --scheme's choices.
std::vector<std::string> SchemeNames(SchemeSet set = SchemeSet::kAll);
// Those names joined for help and errors: ", " and " or " give
// "dense, powersgd, topk or batch".
std::string JoinSchemeNames(SchemeSet set, const std::string& separator, const std::string& before_last);
// The same with the titles, untranslated: "PowerSGD, TopK or batch size".
std::string JoinSchemeTitles(SchemeSet set, const std::string& separator, const std::string& before_last);

}  // namespace accordion

#endif  // ACCORDION_TRACES_SCHEME_DESCRIPTION_H_
