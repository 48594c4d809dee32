# The fused MLP kernels for NVIDIA GPUs: two fat binaries, one per assembly (a cubin per architecture in
# MLPCORE_CUDA_ARCHS, plus PTX of the newest for later GPUs), compiled by nvcc from the same kernel source
# as the AMD code objects and embedded into the library; the host side loads them through the CUDA driver
# at run time.
set(MLPCORE_CUDA_ARCHS "80;86;89;90" CACHE STRING "NVIDIA compute capabilities to build cubins for")
find_program(MLPCORE_NVCC nvcc HINTS $ENV{CUDA_PATH}/bin /usr/local/cuda/bin DOC "CUDA's nvcc (12 or newer)")
if(NOT MLPCORE_NVCC)
  message(FATAL_ERROR "MLPCORE_CUDA needs nvcc (CUDA 12 or newer), or configure with -DMLPCORE_CUDA=OFF")
endif()
message(STATUS "mlpcore: CUDA fat binaries for sm_${MLPCORE_CUDA_ARCHS} with ${MLPCORE_NVCC}")

# How nvcc compiles mlpcore's device code: the kernels here, the sample renderer (apps/) and
# bench/nv_mma_rate.
set(MLPCORE_NVCC_CXX_FLAGS -x cu -std=c++20 -O3 --expt-relaxed-constexpr)
# What nvcc compiles the kernel source with. -compress-all: fatbinary compresses the cubins too, not only
# the PTX (without it, the two fat binaries' cubins, 3-10 MB each, stayed uncompressed: 54 MB in all).
set(MLPCORE_NVCC_FLAGS ${MLPCORE_NVCC_CXX_FLAGS} -Xfatbin=-compress-all -I${PROJECT_SOURCE_DIR} -I${PROJECT_SOURCE_DIR}/engine/include)

# Builds `fatbin` from `source` with nvcc, MLPCORE_NVCC_FLAGS and the flags after the named arguments, and
# copies the PTX it holds for its newest architecture to `ptx` for the tests to read
# (tests/cuda_host_test.cpp, CudaFatbin): nvcc builds these kernels, so no compile_kernel recompiles one
# whose arrays it left in local memory. nvcc's --keep leaves that PTX (cmake/CopyKeptPtx.cmake finds it), at
# no cost: compiling it again took 35 s on 2 cores.
function(mlpcore_cuda_fatbin source fatbin ptx)
  get_filename_component(name ${source} NAME_WLE)
  get_filename_component(stem ${fatbin} NAME_WLE)
  set(keep ${CMAKE_CURRENT_BINARY_DIR}/nvcc_keep_${stem})
  set(gencode)
  foreach(sm IN LISTS MLPCORE_CUDA_ARCHS)
    list(APPEND gencode -gencode arch=compute_${sm},code=sm_${sm})
    set(newest ${sm})
  endforeach()
  list(APPEND gencode -gencode arch=compute_${newest},code=compute_${newest})
  add_custom_command(
    OUTPUT ${fatbin} ${ptx}
    COMMAND ${CMAKE_COMMAND} -E make_directory ${keep}
    COMMAND ${MLPCORE_NVCC} ${MLPCORE_NVCC_FLAGS} ${ARGN} -fatbin ${gencode} --keep --keep-dir ${keep} -MD -MF ${fatbin}.d -o ${fatbin}
            ${CMAKE_CURRENT_SOURCE_DIR}/${source}
    COMMAND ${CMAKE_COMMAND} -DKEEP=${keep} -DNAME=${name} -DNEWEST=${newest} -DOUTPUT=${ptx} -P ${PROJECT_SOURCE_DIR}/cmake/CopyKeptPtx.cmake
    DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${source} ${PROJECT_SOURCE_DIR}/cmake/CopyKeptPtx.cmake
    DEPFILE ${fatbin}.d
    COMMENT "CUDA sm_${MLPCORE_CUDA_ARCHS}: ${fatbin}"
    VERBATIM)
endfunction()

# Builds the kernels of `source` into two fat binaries (ops/fused_kernel_entry.h): `fatbin`, which ptxas
# assembles at -O3, and `light_fatbin`, at -O1, built with MLPCORE_LIGHT_ASSEMBLY 1
# (FusedPolicy::light_assembly); each kernel's body is in the one of its policy's assembly for its I/O type
# (ops::assembled_light). Embeds both in
# `generated` (cuda_code_objects(), "fatbin" and "fatbin-light"); `ptx` and `light_ptx` are their PTX.
function(mlpcore_embed_cuda_fatbins source generated fatbin light_fatbin ptx light_ptx)
  mlpcore_cuda_fatbin(${source} ${fatbin} ${ptx})
  mlpcore_cuda_fatbin(${source} ${light_fatbin} ${light_ptx} -DMLPCORE_LIGHT_ASSEMBLY=1 -Xptxas=-O1)
  add_custom_command(
    OUTPUT ${generated}
    COMMAND ${CMAKE_COMMAND} "-DOUTPUT=${generated}" -DFUNCTION=cuda_code_objects -DHEADER=engine/src/code_objects.h -DTYPE=EmbeddedCodeObject -DALIGN=4096
            "-DINPUTS=fatbin=${fatbin};fatbin-light=${light_fatbin}" -P ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    DEPENDS ${fatbin} ${light_fatbin} ${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake
    COMMENT "Embedding the CUDA fat binaries"
    VERBATIM)
  set_source_files_properties(${generated} PROPERTIES OBJECT_DEPENDS "${fatbin};${light_fatbin}")
endfunction()
