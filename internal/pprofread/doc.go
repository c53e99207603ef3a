// Package pprofread reads pprof profiles within bounds on their size and
// on the memory decoding them takes: the engine of report.Parse, which
// wraps [Read], and of the arenaprof command, which also counts what the
// profile it merges several into keeps ([Kept]) against its -max-memory.
//
// The bounds are refused before decoding: a scan of the data as it
// arrives prices each record (estimate.go) and the refusal reads on,
// keeping nothing, to measure what the whole needs (measure.go). The
// errors are report.Parse's, and start "report: ".
package pprofread
