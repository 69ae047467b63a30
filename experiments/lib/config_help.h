// `--help-config`: every key a binary's `--set` takes, with its type, its default (the binary's
// resolved defaults, not proto3's zeros) and its description — the comment on the field in
// datasets/proto/*.proto, read from the schema embedded at build time, so the help cannot drift
// from the schema. A field without a comment is listed by UndocumentedFields (tested).
#pragma once

#include <iostream>
#include <string>
#include <vector>

#include <google/protobuf/message.h>

#include "datasets/util/config_text.h"  // FieldDescription
#include "experiments/lib/cli.h"

namespace placerl::run {

// One line per key reachable from `defaults` through singular message fields: the dotted path
// (as `--set` takes it), the type, the default and the description. Repeated message fields are
// shown as one key (`path`, set with text format). `binary` names the binary in the header.
std::string ConfigHelp(const google::protobuf::Message& defaults, const std::string& binary);

// Dotted paths of every field reachable from `type` (as ConfigHelp walks) without a description.
std::vector<std::string> UndocumentedFields(const google::protobuf::Descriptor* type);

// Adds `--help-config` to `app`: prints ConfigHelp(defaults(), binary) on stdout and ends the
// binary with exit 0. `defaults` returns the binary's resolved default config (by value).
template <class DefaultsFn>
void AddHelpConfig(CLI::App& app, const std::string& binary, DefaultsFn defaults) {
  app.add_flag_callback(
      "--help-config",
      [binary, defaults] {
        std::cout << ConfigHelp(defaults(), binary);
        throw ExitRequest{kExitOk};
      },
      "print every key of --set / --config with its type, default and description, and exit");
}

}  // namespace placerl::run
