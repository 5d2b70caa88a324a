// OpenBLAS's CBLAS interface (Debian's libopenblas-dev), for the embedding model's matrix products.
#include <cblas.h>
