#include "textflag.h"

// func getfp() unsafe.Pointer
//
// getfp returns its caller's frame pointer: NOFRAME leaves R29 untouched.
TEXT ·getfp(SB), NOSPLIT|NOFRAME, $0-8
	MOVD	R29, ret+0(FP)
	RET
