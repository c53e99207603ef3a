#include "textflag.h"

// func getfp() unsafe.Pointer
//
// getfp returns its caller's frame pointer: NOFRAME leaves BP untouched.
TEXT ·getfp(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	BP, ret+0(FP)
	RET
