/* placeholder: kernel entry points are declared here (included from strata_cuda.h) */
