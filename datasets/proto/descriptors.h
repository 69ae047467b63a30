// The FileDescriptorSet of every schema in datasets/proto/, with source info (comments),
// embedded at build time (embed_descriptors.cmake): the descriptions `--help-config` prints.
#pragma once

#include <string_view>

namespace placerl::config {

// Serialized google.protobuf.FileDescriptorSet (protoc --include_source_info).
std::string_view ProtoDescriptorSet();

}  // namespace placerl::config
