#ifndef MLPCORE_C_H
#define MLPCORE_C_H
/* A C interface to mlpcore (libmlpcore_c.so), for other languages: Python's ctypes, game engines' plugins.
 * Every function that can fail returns 0 on success or -1, and then writes the error message (the text
 * of mlpcore::Error) into `error` (at most error_size bytes, NUL-terminated) when `error` is not NULL. */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mlpcore_network mlpcore_network;

/* Loads a model file and prepares it on `backend` ("auto", "cpu", "cuda", "hip", ...). NULL on error. */
mlpcore_network* mlpcore_network_create(const char* model_path, const char* backend, char* error, size_t error_size);
/* The same with mlpcore::NetworkOptions: `threads` for the cpu backend (0: MLPCORE_NUM_THREADS, else the
 * CPUs this process may use), `quiet` non-zero to keep "auto"'s one-line notices off stderr. */
mlpcore_network* mlpcore_network_create_with_options(const char* model_path, const char* backend, unsigned threads, int quiet,
                                                     char* error, size_t error_size);
/* The GPU backends' kernel choices (mlpcore::NetworkOptions): `specialize` 0 runs only the kernels built into
 * mlpcore; `kernel_cache` a directory, "off", or NULL for the default; `kernels_file` a file of `mlpcore
 * compile`, or NULL. */
mlpcore_network* mlpcore_network_create_with_kernels(const char* model_path, const char* backend, int quiet, int specialize,
                                                     const char* kernel_cache, const char* kernels_file, char* error, size_t error_size);
/* mlpcore::Layout, how a call's arrays lie in memory: MLPCORE_SAMPLE_MAJOR [batch, dim] (the default),
 * MLPCORE_FEATURE_MAJOR [dim, batch]. */
#define MLPCORE_SAMPLE_MAJOR 0
#define MLPCORE_FEATURE_MAJOR 1
/* The same with NetworkOptions::layouts, the layouts the calls will use, as bits: (1 << MLPCORE_SAMPLE_MAJOR)
 * and/or (1 << MLPCORE_FEATURE_MAJOR); mlpcore_network_create_with_kernels serves sample-major calls. */
mlpcore_network* mlpcore_network_create_with_layouts(const char* model_path, const char* backend, int quiet, int specialize,
                                                     const char* kernel_cache, const char* kernels_file, unsigned layouts, char* error,
                                                     size_t error_size);
void mlpcore_network_destroy(mlpcore_network* network);

size_t mlpcore_network_input_dim(const mlpcore_network* network);
size_t mlpcore_network_output_dim(const mlpcore_network* network);
/* The backend's name ("cuda", ...); valid while the network lives. */
const char* mlpcore_network_backend(const mlpcore_network* network);
/* Network::kernel(): which kernel runs it and where it came from; valid while the network lives. */
const char* mlpcore_network_kernel(const mlpcore_network* network);

/* Host (or device) buffers, synchronous: Network::infer. */
int mlpcore_network_infer(const mlpcore_network* network, const float* input, float* output, size_t batch, char* error,
                          size_t error_size);
/* Buffers in the backend's memory on `stream` (cudaStream_t / hipStream_t, NULL: default): Network::enqueue. */
int mlpcore_network_enqueue(const mlpcore_network* network, const float* input, float* output, size_t batch, void* stream,
                            char* error, size_t error_size);

/* float16 input and output (IEEE binary16 bit patterns), as Network::infer / Network::enqueue with
 * std::uint16_t buffers. */
int mlpcore_network_infer_f16(const mlpcore_network* network, const uint16_t* input, uint16_t* output, size_t batch, char* error,
                              size_t error_size);
int mlpcore_network_enqueue_f16(const mlpcore_network* network, const uint16_t* input, uint16_t* output, size_t batch, void* stream,
                                char* error, size_t error_size);

/* Any of the above in `layout` (MLPCORE_SAMPLE_MAJOR or MLPCORE_FEATURE_MAJOR: input [input_dim, batch],
 * output [output_dim, batch]; GPU backends take at most 2^28 samples per feature-major call), with float32
 * buffers, or float16 ones where `f16` is non-zero. A layout the network was not created for is an error. */
int mlpcore_network_infer_layout(const mlpcore_network* network, const void* input, void* output, size_t batch, int f16, int layout,
                                 char* error, size_t error_size);
int mlpcore_network_enqueue_layout(const mlpcore_network* network, const void* input, void* output, size_t batch, int f16, int layout,
                                   void* stream, char* error, size_t error_size);

/* Network::enqueued_out_of_range: writes 1 to *out_of_range if a call enqueued since the last check had
 * inputs or hidden activations beyond float16's range (its outputs are wrong), else 0, and clears the
 * record; call it once that work is done. (Synchronous calls report it as their error.) */
int mlpcore_network_enqueued_out_of_range(const mlpcore_network* network, int* out_of_range, char* error, size_t error_size);

#ifdef __cplusplus
}
#endif
#endif
