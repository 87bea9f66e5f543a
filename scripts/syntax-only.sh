#!/usr/bin/env bash
# A compiler launcher (CMAKE_CXX_COMPILER_LAUNCHER) that only parses and checks: CI's clang
# -Wthread-safety step needs the front end's diagnostics, not objects. Configure-time checks
# (try_compile) do not use launchers, so they still compile and link normally.
exec "$@" -fsyntax-only
