// Package parsetime exposes libslurm's own time-limit parser
// (slurm_time_str2mins, exported by libslurm of 22.05, 24.11 and 26.05 but
// declared in no public header) so that tests can hold Augur's pure-Go
// reader, predictor.SlurmTime, to Slurm's answers. Nothing outside tests
// imports it: augurd and the plugin do not depend on a private symbol.
package parsetime

/*
#cgo LDFLAGS: -lslurm
#include <stdlib.h>
extern int slurm_time_str2mins(const char *string);
*/
import "C"

import "unsafe"

// Minutes is slurm_time_str2mins: the minutes a --time value means, -1 for
// INFINITE or UNLIMITED, and a negative number other than -1 (NO_VAL's
// -2, or garbage on overflow) when Slurm does not accept it.
func Minutes(s string) int {
	cs := C.CString(s)
	defer C.free(unsafe.Pointer(cs))
	return int(C.slurm_time_str2mins(cs))
}
