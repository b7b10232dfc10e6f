/* Helpers job_submit_augur.c gives plugin.go. */
#ifndef AUGUR_SHIM_H
#define AUGUR_SHIM_H
#include <stdint.h>
int augur_have_slurm_alloc(void);
void augur_set_str(char **field, const char *value);
void augur_log(int is_error, const char *msg);
uint32_t augur_nice_offset(void);
#endif
