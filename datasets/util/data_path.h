// Default data found from anywhere (docs/conventions.md "Input files"): a binary's default input
// is written relative to the repository root (e.g. "../shared/datasets/nas/nats_bench_tss.csv",
// next to the repository), so that it works from the root; run from any other directory the
// binary looks for it next to itself instead.
#pragma once

#include <string>
#include <vector>

namespace placerl {

// The places FindDefaultData tries for `relative`, in order: `relative` itself (the working
// directory); then, for every folder above the running binary (/proc/self/exe, e.g.
// <repo>/build/bin → <repo>/build → <repo> → …), <folder>/<relative>; then the install prefix's
// <prefix>/share/placerl/<relative without leading "../">. An absolute path is its only place.
std::vector<std::string> DefaultDataCandidates(const std::string& relative);

// The first of DefaultDataCandidates(relative) that exists, made absolute (so that a run
// directory's config names it from anywhere); `relative` unchanged when none exists (the reader
// then reports it missing).
std::string FindDefaultData(const std::string& relative);

}  // namespace placerl
