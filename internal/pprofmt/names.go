package pprofmt

// TypelessTypeName is the type of the profiler's typeless overflow
// records: events past the bound on overflow buckets keep their bytes and
// their mean, in one record per mean, but lose their type (and stack).
const TypelessTypeName = "arenaprof.other"

// PeakCommentPrefix starts the comment that marks a peak profile.
const PeakCommentPrefix = "arenaprof peak: in-use at the highest estimated live arena bytes, "
