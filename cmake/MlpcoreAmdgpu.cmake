# AMD GPU code objects, built by a clang that has the AMDGPU target and finds HIP headers:
#   ROCm >= 6:  /opt/rocm/llvm/bin/amdclang++ (or clang++ there), linking ROCm's device libraries;
#   Debian 12:  clang-19 + libamdhip64-dev (HIP 5.2 headers), whose device libraries lack gfx11/gfx12, so
#               objects are built with -nogpulib and ops/hip_device_lib_shim.h.
# Choose another compiler with -DMLPCORE_HIP_CLANG=..., the targets with -DMLPCORE_AMDGPU_TARGETS=...

set(MLPCORE_AMDGPU_TARGETS "gfx1100;gfx1101;gfx1102;gfx1151;gfx1200;gfx1201;gfx908;gfx90a;gfx942" CACHE STRING
    "AMD GPU architectures to build code objects for")

if(NOT DEFINED ENV{ROCM_PATH})
  set(_rocm_path /opt/rocm)
else()
  set(_rocm_path $ENV{ROCM_PATH})
endif()
find_program(MLPCORE_HIP_CLANG NAMES amdclang++ clang++-19 clang++-20 clang++-18
             HINTS ${_rocm_path}/llvm/bin DOC "clang with the AMDGPU target (amdclang++ from ROCm, or clang++-19)")
find_program(MLPCORE_LLVM_OBJDUMP NAMES llvm-objdump-19 llvm-objdump-20 llvm-objdump-18 llvm-objdump HINTS ${_rocm_path}/llvm/bin)
find_program(MLPCORE_LLVM_READELF NAMES llvm-readelf-19 llvm-readelf-20 llvm-readelf-18 llvm-readelf HINTS ${_rocm_path}/llvm/bin)
if(NOT MLPCORE_HIP_CLANG OR NOT MLPCORE_LLVM_OBJDUMP OR NOT MLPCORE_LLVM_READELF)
  message(FATAL_ERROR "MLPCORE_AMDGPU needs clang with the AMDGPU target, llvm-objdump and llvm-readelf "
                      "(Debian: apt install clang-19 lld-19 llvm-19 libamdhip64-dev; or ROCm >= 6), "
                      "or configure with -DMLPCORE_AMDGPU=OFF")
endif()

if(EXISTS ${_rocm_path}/amdgcn/bitcode)
  set(_device_lib_flags --rocm-path=${_rocm_path})
else()
  set(_device_lib_flags -nogpulib -DMLPCORE_HIP_NO_DEVICE_LIBS=1)
endif()
message(STATUS "mlpcore: AMD code objects for ${MLPCORE_AMDGPU_TARGETS} with ${MLPCORE_HIP_CLANG} ${_device_lib_flags}")

# mlpcore_add_code_objects(<target> <device source>): one <name>_<arch>.co per architecture in the target's
# binary folder, rebuilt when the source or any header it includes changes.
function(mlpcore_add_code_objects target source)
  get_filename_component(name ${source} NAME_WE)
  set(outputs)
  foreach(arch IN LISTS MLPCORE_AMDGPU_TARGETS)
    set(out ${CMAKE_CURRENT_BINARY_DIR}/${name}_${arch}.co)
    add_custom_command(
      OUTPUT ${out}
      COMMAND ${MLPCORE_HIP_CLANG} -x hip --offload-arch=${arch} --cuda-device-only --no-gpu-bundle-output
              -std=c++20 -O3 ${_device_lib_flags} -I${PROJECT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/engine/include
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
