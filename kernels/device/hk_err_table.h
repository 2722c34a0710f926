/* hk_err_table.h - err(q) = 10^(-q/10) for Phred q = 0..255 on the device
 * (the values of src/hk_err_values.inc, the CPU model's too, so both
 * backends start from the same doubles). Each translation unit gets its own
 * read-only device copy. */
#ifndef HK_ERR_TABLE_H
#define HK_ERR_TABLE_H
static __device__ const double hk_err_tab[256] = {
#include "hk_err_values.inc"
};
#endif
