# Build step (cmake -P): wraps a text file into a C++ source defining
#   const std::string& <FUNCTION>() — the file's text,
# so that the binaries carry the catalogue and the validation table without any committed
# copy to keep in step. Usage:
#   cmake -DINPUT=<file> -DOUTPUT=<file.cc> -DFUNCTION=<name> -DLABEL=<path for the comment> [-DNAMESPACE=<ns>] -P embed_text.cmake
# (the function is placerl::<ns>::<name>, ns default perf)
# The text goes into a raw string literal; a delimiter that the text contains would end it
# early, so that is refused.
foreach(var INPUT OUTPUT FUNCTION LABEL)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "embed_text.cmake: -D${var}= is required")
  endif()
endforeach()
if(NOT DEFINED NAMESPACE)
  set(NAMESPACE perf)
endif()
file(READ "${INPUT}" text)
if(text MATCHES "\\)PBTXT\"")
  message(FATAL_ERROR "embed_text.cmake: ${INPUT} contains the delimiter )PBTXT\"")
endif()
set(content "// Generated at build time by cost_models/tpu/embed_text.cmake from ${LABEL}.\n#include <string>\nnamespace placerl::${NAMESPACE} {\nconst std::string& ${FUNCTION}() {\n  static const std::string text = R\"PBTXT(${text})PBTXT\";\n  return text;\n}\n}  // namespace placerl::${NAMESPACE}\n")
# Rewrite only on change, so an unchanged .pbtxt does not recompile the library.
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
  if(old STREQUAL content)
    return()
  endif()
endif()
file(WRITE "${OUTPUT}" "${content}")
