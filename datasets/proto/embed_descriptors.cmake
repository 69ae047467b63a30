# Build step (cmake -P): wraps the FileDescriptorSet that protoc wrote with
# --include_source_info (every .proto of datasets/proto/, with its comments) into a C++ source
# defining placerl::config::ProtoDescriptorSet(), so that `--help-config` can print every config
# field's description from the schema itself and never drift from it. Usage:
#   cmake -DINPUT=<file.desc> -DOUTPUT=<file.cc> -P embed_descriptors.cmake
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "'\\\\x\\1'," body "${hex}")
string(REGEX REPLACE "((['][^']*['],){32})" "\\1\n" body "${body}")
set(content "// Generated at build time by datasets/proto/embed_descriptors.cmake.\n#include <string_view>\nnamespace placerl::config {\nstatic const char kDescriptorSet[] = {\n${body}\n};\nstd::string_view ProtoDescriptorSet() { return std::string_view(kDescriptorSet, ${bytes}); }\n}  // namespace placerl::config\n")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
