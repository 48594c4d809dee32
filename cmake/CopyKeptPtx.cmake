# cmake -DKEEP=dir -DNAME=stem -DNEWEST=sm -DOUTPUT=file -P CopyKeptPtx.cmake: copies the PTX for
# compute_NEWEST that nvcc --keep left in KEEP to OUTPUT, then removes KEEP (about 120 MB of other
# intermediates). nvcc names it NAME.compute_NEWEST.ptx when it builds several virtual architectures,
# NAME.ptx when it builds one.
foreach(candidate "${KEEP}/${NAME}.compute_${NEWEST}.ptx" "${KEEP}/${NAME}.ptx")
  if(EXISTS "${candidate}")
    file(COPY_FILE "${candidate}" "${OUTPUT}")
    file(REMOVE_RECURSE "${KEEP}")
    return()
  endif()
endforeach()
message(FATAL_ERROR "nvcc --keep left no PTX for compute_${NEWEST} in ${KEEP}")
