package agent

// What the package's external tests (package agent_test) read of its
// insides.
var IsUnconfirmed = isUnconfirmed

// SeriesLabel is the Pyroscope series label of memory profiles.
const SeriesLabel = seriesLabel
