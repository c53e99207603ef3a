package export

import "github.com/arenaprof/arenaprof/internal/pprofmt"

const numSampleTypes = pprofmt.NumSampleTypes
