/* hk_model_types.h - the model's settings (hk_model_t), below the model's
 * interface (hk_model.h) and the CPU passes that compute it (hk_cpu.h). */
#ifndef HK_MODEL_TYPES_H
#define HK_MODEL_TYPES_H

typedef struct hk_model {
    int    precision;         /* HK_PREC_MIXED, HK_PREC_FLOAT or HK_PREC_DOUBLE */
    double float_threshold;   /* mixed: recompute in double below this scaled sum */
    int    min_base_quality;  /* base qualities are raised to at least this */
    int    gcp;               /* >= 0 replaces every gap-continuation quality; -1 keeps them */
    int    unknown_as_n;      /* 1: letters other than ACGTN read as N; 0: input error */
} hk_model_t;

#endif
