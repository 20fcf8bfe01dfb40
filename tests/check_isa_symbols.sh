#!/usr/bin/env bash
# Fails when an ISA-specific object file (*_avx2 / *_avx512* / *_amx .o) defines a weak symbol.
# Why: a weak symbol (an inline function or template instantiated there) is merged with the
# copies from other files at link time, and the linker may keep the one compiled with AVX-512
# flags, which then runs on the reference path too. ISA files must keep helpers static or in an
# anonymous namespace. Usage: check_isa_symbols.sh [--sanitized] <object files, or ;-separated
# lists of them>. With --sanitized (an AMPKIT_SANITIZE build), the symbols the sanitizer
# instrumentation itself defines (__asan*, __odr_asan*, __tsan*, __ubsan*, __sanitizer*) are not
# counted: they are the runtime's, identical in every file, and never ISA code.
set -u
sanitized=0
if [ "${1:-}" = "--sanitized" ]; then sanitized=1; shift; fi
status=0
checked=0
IFS=";" read -r -a objects <<< "$(IFS=";"; echo "$*")"
for obj in "${objects[@]}"; do
  case "$obj" in
    *_avx2.cpp.o | *_avx512.cpp.o | *_avx512bf16.cpp.o | *_amx.cpp.o) ;;
    *) continue ;;
  esac
  checked=$((checked + 1))
  # Emitted by the compiler, the same in every file, never ISA code: DW.ref.__gxx_personality_v0
  # and (clang) DW.ref.__gcc_personality_v0 are data (pointers to the EH personality routine of
  # any file with exception tables, e.g. OpenMP parallel regions); clang's __clang_call_terminate
  # is two calls (__cxa_begin_catch, std::terminate).
  weak=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/ && $3 !~ /^(DW\.ref\.__gxx_personality_v0|DW\.ref\.__gcc_personality_v0|__clang_call_terminate)$/')
  if [ "$sanitized" -eq 1 ]; then
    weak=$(printf '%s\n' "$weak" | awk 'NF && $3 !~ /^(__odr_asan|__asan|__tsan|__ubsan|__sanitizer|asan\.|tsan\.)/')
  fi
  if [ -n "$weak" ]; then
    echo "$obj defines weak symbols (compiled with ISA flags, shared with other files):"
    echo "$weak" | sed 's/^/  /'
    status=1
  fi
done
echo "checked $checked ISA object files"
[ "$checked" -gt 0 ] || { echo "no ISA object files were given"; exit 1; }
exit $status
