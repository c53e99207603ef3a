//go:build !race

package otelarena

const raceEnabled = false
