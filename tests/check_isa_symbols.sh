#!/usr/bin/env bash
# Fails when an ISA-specific object file (*_avx2 / *_avx512* .o) defines a weak symbol.
# Why: a weak symbol (an inline function or template instantiated there) is merged with the
# copies from other files at link time, and the linker may keep the one compiled with AVX-512
# flags, which then runs on the reference path too. ISA files must keep helpers static or in an
# anonymous namespace. Usage: check_isa_symbols.sh <object files, or ;-separated lists of them>
set -u
status=0
checked=0
IFS=";" read -r -a objects <<< "$(IFS=";"; echo "$*")"
for obj in "${objects[@]}"; do
  case "$obj" in
    *_avx2.cpp.o | *_avx512.cpp.o | *_avx512bf16.cpp.o) ;;
    *) continue ;;
  esac
  checked=$((checked + 1))
  # DW.ref.__gxx_personality_v0 is data (a pointer to the C++ EH personality routine, emitted by
  # any file with exception tables, e.g. OpenMP parallel regions), the same in every file.
  weak=$(nm -C --defined-only "$obj" | awk '$2 ~ /^[WVu]$/ && $3 != "DW.ref.__gxx_personality_v0"')
  if [ -n "$weak" ]; then
    echo "$obj defines weak symbols (compiled with ISA flags, shared with other files):"
    echo "$weak" | sed 's/^/  /'
    status=1
  fi
done
echo "checked $checked ISA object files"
[ "$checked" -gt 0 ] || { echo "no ISA object files were given"; exit 1; }
exit $status
