# AMD GPU code objects, built by a clang that has the AMDGPU target and finds HIP headers. Found in this
# order, preferring one that also finds ROCm's device libraries:
#   ROCm >= 6:      $ROCM_PATH/llvm/bin/amdclang++ (ROCM_PATH defaults to /opt/rocm);
#   Debian/Ubuntu:  clang++-19/20/18/17; Debian 13's hipcc packages (clang-17, rocm-device-libs-17,
#                   libamdhip64-dev) give clang++-17 the real device libraries; Debian 12's clang-19 with
#                   libamdhip64-dev (HIP 5.2) has none for gfx11/gfx12, so objects are built with -nogpulib
#                   and ops/hip_device_lib_shim.h.
# Targets the compiler cannot build (gfx12 before LLVM 18) are left out, with a message.
# Choose another compiler with -DMLPCORE_HIP_CLANG=..., the targets with -DMLPCORE_AMDGPU_TARGETS=...

set(MLPCORE_AMDGPU_TARGETS "gfx1100;gfx1101;gfx1102;gfx1151;gfx1200;gfx1201;gfx908;gfx90a;gfx942" CACHE STRING
    "AMD GPU architectures to build code objects for")

if(NOT DEFINED ENV{ROCM_PATH})
  set(_rocm_path /opt/rocm)
else()
  set(_rocm_path $ENV{ROCM_PATH})
endif()
set(_probe_dir ${CMAKE_BINARY_DIR}/amdgpu_probe)
file(WRITE ${_probe_dir}/empty.hip "__attribute__((global)) void mlpcore_probe() {}\n")
file(WRITE ${_probe_dir}/device_libs.hip
     "#include <hip/hip_runtime.h>\n__global__ void mlpcore_probe(float* x) { x[threadIdx.x] = __expf(x[threadIdx.x]); }\n")
file(WRITE ${_probe_dir}/shim.hip "#include \"ops/gpu_platform.h\"\n__global__ void mlpcore_probe(float* x) { x[0] = 1.0f; }\n")

# Whether `clang` compiles `source` for `arch` with `flags` (a device-only compile, no output kept).
function(_mlpcore_hip_compiles out clang arch source)
  execute_process(COMMAND ${clang} -x hip --offload-arch=${arch} --cuda-device-only -std=c++20 ${ARGN} -S -o /dev/null ${source}
                  RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
  if(rc EQUAL 0)
    set(${out} TRUE PARENT_SCOPE)
  else()
    set(${out} FALSE PARENT_SCOPE)
  endif()
endfunction()

# The device-library flags `clang` needs: none (it finds ROCm's libraries), --rocm-path, or the shim; "" in
# `out_ok` when it cannot build HIP at all.
function(_mlpcore_hip_flags out_flags out_ok clang arch)
  _mlpcore_hip_compiles(ok ${clang} ${arch} ${_probe_dir}/device_libs.hip)
  if(ok)
    set(${out_flags} "" PARENT_SCOPE)
    set(${out_ok} libs PARENT_SCOPE)
    return()
  endif()
  if(EXISTS ${_rocm_path}/amdgcn/bitcode)
    _mlpcore_hip_compiles(ok ${clang} ${arch} ${_probe_dir}/device_libs.hip --rocm-path=${_rocm_path})
    if(ok)
      set(${out_flags} --rocm-path=${_rocm_path} PARENT_SCOPE)
      set(${out_ok} libs PARENT_SCOPE)
      return()
    endif()
  endif()
  _mlpcore_hip_compiles(ok ${clang} ${arch} ${_probe_dir}/shim.hip -nogpulib -DMLPCORE_HIP_NO_DEVICE_LIBS=1 -I${PROJECT_SOURCE_DIR})
  if(ok)
    set(${out_flags} -nogpulib -DMLPCORE_HIP_NO_DEVICE_LIBS=1 PARENT_SCOPE)
    set(${out_ok} shim PARENT_SCOPE)
  else()
    set(${out_ok} "" PARENT_SCOPE)
  endif()
endfunction()

if(MLPCORE_HIP_CLANG)
  set(_candidates ${MLPCORE_HIP_CLANG})
else()
  set(_candidates)
  foreach(name IN ITEMS amdclang++ clang++-19 clang++-20 clang++-18 clang++-17)
    find_program(_found_${name} NAMES ${name} HINTS ${_rocm_path}/llvm/bin NO_CACHE)
    if(_found_${name})
      list(APPEND _candidates ${_found_${name}})
    endif()
  endforeach()
endif()
list(GET MLPCORE_AMDGPU_TARGETS 0 _probe_arch)
set(_chosen)
foreach(clang IN LISTS _candidates)
  _mlpcore_hip_flags(flags how ${clang} ${_probe_arch})
  if(how STREQUAL "libs" OR (how STREQUAL "shim" AND NOT _chosen))
    set(_chosen ${clang})
    set(_device_lib_flags ${flags})
    set(_device_libs "ROCm's device libraries ${flags}")
    if(how STREQUAL "shim")
      set(_device_libs "no device libraries (ops/hip_device_lib_shim.h, ${flags})")
    endif()
  endif()
  if(how STREQUAL "libs")
    break()
  endif()
endforeach()
if(NOT _chosen)
  message(FATAL_ERROR "MLPCORE_AMDGPU needs clang with the AMDGPU target that finds HIP headers (tried: ${_candidates}; "
                      "Debian 12: apt install clang-19 lld-19 llvm-19 libamdhip64-dev; Debian 13: hipcc rocm-device-libs-17 "
                      "llvm-17; or ROCm >= 6), or configure with -DMLPCORE_AMDGPU=OFF")
endif()
set(MLPCORE_HIP_CLANG ${_chosen} CACHE FILEPATH "clang with the AMDGPU target (amdclang++ from ROCm, or clang++-17..20)" FORCE)

# The LLVM tools of the same version as the compiler, for the ISA checks and the kernel report.
get_filename_component(_clang_dir ${MLPCORE_HIP_CLANG} DIRECTORY)
execute_process(COMMAND ${MLPCORE_HIP_CLANG} --version OUTPUT_VARIABLE _clang_version ERROR_QUIET)
string(REGEX MATCH "clang version ([0-9]+)" _ ${_clang_version})
set(_llvm_major ${CMAKE_MATCH_1})
find_program(MLPCORE_LLVM_OBJDUMP NAMES llvm-objdump-${_llvm_major} llvm-objdump HINTS ${_clang_dir} /usr/lib/llvm-${_llvm_major}/bin)
find_program(MLPCORE_LLVM_READELF NAMES llvm-readelf-${_llvm_major} llvm-readelf HINTS ${_clang_dir} /usr/lib/llvm-${_llvm_major}/bin)
if(NOT MLPCORE_LLVM_OBJDUMP OR NOT MLPCORE_LLVM_READELF)
  message(FATAL_ERROR "MLPCORE_AMDGPU needs llvm-objdump and llvm-readelf of LLVM ${_llvm_major} (Debian: apt install llvm-${_llvm_major})")
endif()

# Only the targets this compiler can build; no test or code object assumes the others.
set(_buildable)
set(_skipped)
foreach(arch IN LISTS MLPCORE_AMDGPU_TARGETS)
  _mlpcore_hip_compiles(ok ${MLPCORE_HIP_CLANG} ${arch} ${_probe_dir}/empty.hip -nogpulib -nogpuinc)
  if(ok)
    list(APPEND _buildable ${arch})
  else()
    list(APPEND _skipped ${arch})
  endif()
endforeach()
if(_skipped)
  message(STATUS "mlpcore: ${MLPCORE_HIP_CLANG} (LLVM ${_llvm_major}) cannot target ${_skipped}: no code objects for them "
                 "(gfx12 needs LLVM 18 or newer)")
endif()
if(NOT _buildable)
  message(FATAL_ERROR "mlpcore: ${MLPCORE_HIP_CLANG} can build none of MLPCORE_AMDGPU_TARGETS (${MLPCORE_AMDGPU_TARGETS})")
endif()
set(MLPCORE_AMDGPU_TARGETS ${_buildable})  # shadows the cache entry from here on
message(STATUS "mlpcore: AMD code objects for ${MLPCORE_AMDGPU_TARGETS} with ${MLPCORE_HIP_CLANG}, ${_device_libs}")

# mlpcore_add_code_objects(<target> <device source> [FLAGS <compiler flags>...]): one <name>_<arch>.co per
# architecture in the target's binary folder, rebuilt when the source or any header it includes changes.
function(mlpcore_add_code_objects target source)
  cmake_parse_arguments(PARSE_ARGV 2 arg "" "" "FLAGS")
  get_filename_component(name ${source} NAME_WE)
  set(outputs)
  foreach(arch IN LISTS MLPCORE_AMDGPU_TARGETS)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}_${arch}.co)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${MLPCORE_HIP_CLANG} -x hip --offload-arch=${arch} --cuda-device-only --no-gpu-bundle-output
              -std=c++20 -O3 ${_device_lib_flags} -I${PROJECT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/engine/include ${arg_FLAGS}
              -MD -MF ${out}.d -o ${out}
              ${CMAKE_CURRENT_SOURCE_DIR}/${source}
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${source}
      DEPFILE ${out}.d
      COMMENT "HIP ${arch}: ${source}"
      VERBATIM)
    list(APPEND outputs ${out})
  endforeach()
  add_custom_target(${target} ALL DEPENDS ${outputs})
endfunction()

# mlpcore_embed_code_objects(<device source> <generated.cpp>): builds the source for every architecture and
# writes the objects into <generated.cpp> as byte arrays (engine/src/code_objects.h).
function(mlpcore_embed_code_objects source generated)
  get_filename_component(name ${source} NAME_WE)
  mlpcore_add_code_objects(${name}_code_objects ${source})
  set(inputs)
  set(objects)
  foreach(arch IN LISTS MLPCORE_AMDGPU_TARGETS)
    list(APPEND inputs "${arch}=${CMAKE_CURRENT_BINARY_DIR}/${name}_${arch}.co")
    list(APPEND objects ${CMAKE_CURRENT_BINARY_DIR}/${name}_${arch}.co)
  endforeach()
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${generated}" -DFUNCTION=amd_code_objects -DHEADER=engine/src/code_objects.h -DTYPE=EmbeddedCodeObject -DALIGN=4096 "-DINPUTS=${inputs}"
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${objects} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding AMD code objects"
    VERBATIM)
  set_source_files_properties(${generated} PROPERTIES OBJECT_DEPENDS "${objects}")
endfunction()
