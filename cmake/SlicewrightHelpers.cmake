# sw_library(), sw_test(), sw_bench(): one way to declare a target, with the project's warnings and
# sanitizer flags applied to our own code only (third-party headers are SYSTEM).

set(SW_WARNINGS
    -Wall -Wextra -Werror -Wpedantic -Wshadow -Wnon-virtual-dtor -Woverloaded-virtual
    -Wold-style-cast -Wnull-dereference -Wimplicit-fallthrough -Wformat=2)

# UBSan without three of its checks, which double the asan build's compile time (g++ 12, -O1: a
# test file 67 s with them, 34 s without): alignment (x86 loads at any alignment, and no code of
# ours reads wider types out of byte buffers), null (a null dereference faults, and ASan reports
# it with its stack) and object-size (ASan's bounds checks find those overflows and more).
set(SW_SANITIZER_FLAGS -fsanitize=address,undefined -fno-sanitize=alignment,null,object-size
                       -fno-sanitize-recover=all -fno-omit-frame-pointer)

function(sw_apply_flags target)
  target_compile_options(${target} PRIVATE ${SW_WARNINGS})
  if(SW_SANITIZE)
    target_compile_options(${target} PRIVATE ${SW_SANITIZER_FLAGS})
    target_link_options(${target} PRIVATE ${SW_SANITIZER_FLAGS})
  endif()
endfunction()

# sw_library(NAME reconcile SRCS a.cc b.cc DEPS slicewright::model PRIVATE_DEPS simdjson::simdjson)
# creates slicewright_<NAME> with the alias slicewright::<NAME>.
function(sw_library)
  cmake_parse_arguments(SW "" "NAME" "SRCS;DEPS;PRIVATE_DEPS" ${ARGN})
  set(target slicewright_${SW_NAME})
  add_library(${target} STATIC ${SW_SRCS})
  add_library(slicewright::${SW_NAME} ALIAS ${target})
  target_include_directories(${target} PUBLIC ${PROJECT_SOURCE_DIR}/include
                                       PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${target} PUBLIC ${SW_DEPS} PRIVATE ${SW_PRIVATE_DEPS})
  sw_apply_flags(${target})
  if(SW_SANITIZE)
    target_link_options(${target} INTERFACE ${SW_SANITIZER_FLAGS})
  endif()
endfunction()

# sw_test(NAME reconcile_tests SRCS ... DEPS ...): one GoogleTest binary per layer.
function(sw_test)
  cmake_parse_arguments(SW "" "NAME" "SRCS;DEPS;LABELS" ${ARGN})
  add_executable(${SW_NAME} ${SW_SRCS})
  target_include_directories(${SW_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${SW_NAME} PRIVATE ${SW_DEPS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${SW_NAME} PRIVATE SW_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  sw_apply_flags(${SW_NAME})
  if(SW_SANITIZE)
    # The tests themselves at -O0 under the sanitizers (the code under test stays at -O1): GCC's
    # optimiser is a third of the sanitizer build's test compile, and checks lose nothing at -O0.
    target_compile_options(${SW_NAME} PRIVATE -O0)
  endif()
  gtest_discover_tests(${SW_NAME} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${SW_LABELS}")
endfunction()

function(sw_bench)
  cmake_parse_arguments(SW "" "NAME" "SRCS;DEPS" ${ARGN})
  add_executable(${SW_NAME} ${SW_SRCS})
  target_include_directories(${SW_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/src ${PROJECT_SOURCE_DIR}/bench)
  target_link_libraries(${SW_NAME} PRIVATE ${SW_DEPS} benchmark::benchmark)
  sw_apply_flags(${SW_NAME})
endfunction()
