# Per-ISA compile flags chosen by file name, so only the ISA files see the ISA's instructions
# and the rest of the library runs on any x86-64 (dispatch happens at run time).
#   *_avx2.cpp        AVX2 + FMA + F16C
#   *_avx512.cpp      AVX-512 F/BW/DQ/VL + the above
#   *_avx512bf16.cpp  the above + AVX512_BF16
#   *_amx.cpp         the above + AMX-TILE + AMX-BF16
set(AMPKIT_FLAGS_AVX2 "-mavx2 -mfma -mf16c")
# GCC 12 reports -Wmaybe-uninitialized inside its own avx512fintrin.h (_mm512_undefined_*).
set(AMPKIT_FLAGS_AVX512 "${AMPKIT_FLAGS_AVX2} -mavx512f -mavx512bw -mavx512dq -mavx512vl -Wno-maybe-uninitialized")
set(AMPKIT_FLAGS_AVX512BF16 "${AMPKIT_FLAGS_AVX512} -mavx512bf16")
set(AMPKIT_FLAGS_AMX "${AMPKIT_FLAGS_AVX512BF16} -mamx-tile -mamx-bf16")

function(ampkit_apply_isa_flags sources)
  foreach(src IN LISTS sources)
    if(src MATCHES "_amx\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${AMPKIT_FLAGS_AMX}")
    elseif(src MATCHES "_avx512bf16\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${AMPKIT_FLAGS_AVX512BF16}")
    elseif(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${AMPKIT_FLAGS_AVX512}")
    elseif(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_FLAGS "${AMPKIT_FLAGS_AVX2}")
    endif()
  endforeach()
endfunction()
