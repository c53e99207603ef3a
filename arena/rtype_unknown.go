//go:build go1.27

package arena

import "unsafe"

// layoutKnown: see rtype_known.go.
const layoutKnown = false

// newFast is New's body when the descriptor layout is unknown: every type
// goes through the slow path's type table.
func newFast[T any](a *Arena, slow func(*Arena, any) unsafe.Pointer) unsafe.Pointer {
	return slow(a, (*T)(nil))
}

// pointerFree is false when the descriptor layout is unknown.
func pointerFree[T any]() bool { return false }
