// Package profiler holds arenaprof's sampling model and its statistics, and
// the collector that turns sampled-allocation events into profiles.
//
// The sampling model: every byte of every allocated object gets an
// independent Bernoulli trial with p = 1/mean; the first success inside an
// object samples that object (one event with its size and the offset of the
// successful byte) and the rest of the object gets no trials. [GapSampler]
// draws the runs of failed trials between successes.
//
// The statistics turn the events of any group of objects into estimates of
// the bytes and objects allocated, with exact negative-binomial confidence
// intervals.
package profiler
