# Read by llama-cpp-python's build right after llama.cpp's project() (the Makefile passes
# -DCMAKE_PROJECT_llama.cpp_INCLUDE=<this file> in CMAKE_ARGS). llama-cpp-python forces
# llama.cpp's "common" library on (with cpp-httplib), but its Python package loads only libllama
# and libggml: building its wheel took 468 CPU-seconds with common, 222 without (2026-11-28,
# 2 cores). A plain variable shadows the forced cache entry inside llama.cpp's folder, so common
# is neither built nor installed.
set(LLAMA_BUILD_COMMON OFF)
